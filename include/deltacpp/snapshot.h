// An immutable, fully reconciled view of one version of a Delta table.
#pragma once

#include <arrow/api.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/actions.h"
#include "deltacpp/live_files.h"
#include "deltacpp/schema.h"
#include "deltacpp/storage.h"
#include "deltacpp/table_config.h"

namespace deltacpp {

class ScanBuilder;

/// One version of a table: protocol, metadata, schema, live files (columnar), app
/// transactions and domain metadata.
///
/// Thread safety: a Snapshot is immutable after construction; every method is const and may be
/// called from any number of threads at once. Share it freely through std::shared_ptr.
class Snapshot : public std::enable_shared_from_this<Snapshot> {
 public:
  /// Reconciled state; built by the log layer (DeltaTable::Open / SnapshotAt).
  struct State {
    std::string table_root;
    std::shared_ptr<LogStore> store;
    int64_t version = 0;
    Protocol protocol;
    Metadata metadata;
    std::shared_ptr<arrow::Schema> schema;  ///< logical schema
    ColumnMappingMode column_mapping_mode = ColumnMappingMode::kNone;
    /// `metadata.configuration`, typed (parsed once when the snapshot is built).
    TableConfig config;
    /// Live add actions: the batches they were decoded in plus selections (see LiveFiles).
    LiveFiles files;
    std::map<std::string, Txn> txns;
    std::map<std::string, DomainMetadata> domains;  ///< live domains only
    std::optional<CommitInfo> commit_info;          ///< of this version's commit, if present
    int64_t timestamp_ms = 0;                       ///< commit timestamp of this version
    std::optional<int64_t> checkpoint_version;      ///< checkpoint the state was built from
  };

  explicit Snapshot(State state);
  ~Snapshot();

  /// The version this snapshot reconstructs.
  int64_t version() const { return state_.version; }
  /// Absolute path of the table root.
  const std::string& table_root() const { return state_.table_root; }
  const Protocol& protocol() const { return state_.protocol; }
  const Metadata& metadata() const { return state_.metadata; }
  /// Logical Arrow schema (field metadata holds the Delta column metadata).
  const std::shared_ptr<arrow::Schema>& schema() const { return state_.schema; }
  const std::vector<std::string>& partition_columns() const {
    return state_.metadata.partition_columns;
  }
  /// Table properties (`metaData.configuration`).
  const std::map<std::string, std::string>& properties() const {
    return state_.metadata.configuration;
  }
  ColumnMappingMode column_mapping_mode() const { return state_.column_mapping_mode; }
  /// Table properties, typed, with delta-spark's defaults for the ones not set.
  const TableConfig& config() const { return state_.config; }
  /// Live files, as the batches they were decoded in plus selections: no copy.
  const LiveFiles& live_files() const { return state_.files; }
  /// Live add actions copied into one batch, one row per file, columns as the protocol names
  /// them (path, partitionValues, size, modificationTime, dataChange, stats, tags,
  /// deletionVector, baseRowId, defaultRowCommitVersion, clusteringProvider). Built on the first
  /// call and kept (null if that copy cannot be allocated); live_files() reads the same rows
  /// without the copy.
  const std::shared_ptr<arrow::RecordBatch>& files() const;
  int64_t num_files() const { return state_.files.size(); }
  /// Sum of the live files' sizes in bytes.
  int64_t total_size_bytes() const;
  /// Latest `txn` version recorded for `app_id`.
  std::optional<int64_t> txn_version(const std::string& app_id) const;
  const std::map<std::string, Txn>& txns() const { return state_.txns; }
  const std::map<std::string, DomainMetadata>& domain_metadata() const { return state_.domains; }
  const std::optional<CommitInfo>& commit_info() const { return state_.commit_info; }
  /// Commit timestamp (in-commit timestamp when the table has them, else the commit file time).
  int64_t timestamp_ms() const { return state_.timestamp_ms; }
  /// Features in force: listed ones for table-features protocols, implied legacy ones otherwise.
  std::vector<std::string> table_features() const;
  const std::shared_ptr<LogStore>& store() const { return state_.store; }
  const State& state() const { return state_; }

  /// Starts a scan of this snapshot.
  ScanBuilder NewScan() const;

 private:
  State state_;
  struct FilesBatch;
  std::unique_ptr<FilesBatch> files_batch_;  // files(), built on first use
};

}  // namespace deltacpp
