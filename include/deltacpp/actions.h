// Delta log actions (protocol, metaData, txn, ...) as plain structs; per-file actions stay columnar.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace deltacpp {

/// `protocol` action.
struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 2;
  std::optional<std::vector<std::string>> reader_features;  ///< only for reader version 3
  std::optional<std::vector<std::string>> writer_features;  ///< only for writer version 7
};

/// `metaData` action.
struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string format_provider = "parquet";
  std::map<std::string, std::string> format_options;
  std::string schema_string;
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> configuration;
  std::optional<int64_t> created_time;
};

/// `txn` action (SetTransaction).
struct Txn {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;
};

/// `domainMetadata` action.
struct DomainMetadata {
  std::string domain;
  std::string configuration;
  bool removed = false;
};

/// `sidecar` action (V2 checkpoints).
struct Sidecar {
  std::string path;
  int64_t size_in_bytes = 0;
  int64_t modification_time = 0;
  std::map<std::string, std::string> tags;
};

/// `checkpointMetadata` action (V2 checkpoints).
struct CheckpointMetadata {
  int64_t version = 0;
  std::map<std::string, std::string> tags;
};

/// `cdc` action (AddCDCFile).
struct CdcFile {
  std::string path;  ///< relative to the table root, URI-encoded like add paths
  std::map<std::string, std::optional<std::string>> partition_values;  ///< nullopt: JSON null
  int64_t size = 0;
  bool data_change = false;
  std::map<std::string, std::string> tags;
};

/// `commitInfo` action: kept as its raw JSON object text plus the fields deltacpp reads.
struct CommitInfo {
  std::string raw_json;
  std::optional<int64_t> timestamp;
  std::optional<int64_t> in_commit_timestamp;
  std::optional<std::string> operation;
};

/// Deletion vector descriptor (`deletionVector` on add/remove).
struct DeletionVectorDescriptor {
  std::string storage_type;       ///< "u" (uuid-relative file), "p" (absolute path), "i" (inline)
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;  ///< byte offset in the DV file; absent for inline
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;

  /// storageType + pathOrInlineDv (+ "@" offset when present): the DV part of a file key.
  std::string UniqueId() const {
    std::string id = storage_type + path_or_inline_dv;
    if (offset) id += "@" + std::to_string(*offset);
    return id;
  }
};

}  // namespace deltacpp

namespace deltacpp {

/// An `add` action to commit (reading keeps adds columnar; writing uses this struct).
struct AddFile {
  std::string path;  ///< relative to the table root, URI-encoded as the protocol requires
  std::map<std::string, std::optional<std::string>> partition_values;  ///< keyed by physical name
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;  ///< stats JSON
  std::map<std::string, std::string> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
  std::optional<std::string> clustering_provider;
};

/// A `remove` action to commit.
struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  bool extended_file_metadata = true;
  std::map<std::string, std::optional<std::string>> partition_values;
  std::optional<int64_t> size;
  std::optional<std::string> stats;
  std::map<std::string, std::string> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
};

}  // namespace deltacpp
