// Serializes Delta log actions as compact one-line JSON, the form commit files hold. Every
// function fails with InvalidArgument, naming the action and the field, when a key or string it
// would write is not valid UTF-8: the log must stay parseable JSON whatever a caller staged.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// The `commitInfo` fields deltacpp writes. Absent optionals and empty maps are left out, except
/// `operationParameters`, which is always written (`{}` when empty).
struct CommitInfoFields {
  std::optional<int64_t> in_commit_timestamp;  ///< written first when present
  int64_t timestamp = 0;                       ///< ms since the epoch, wall clock
  std::string operation;                       ///< empty is written as "UNKNOWN"
  /// Values are already JSON-encoded text (e.g. `[]` for partitionBy) and written as strings.
  std::map<std::string, std::string> operation_parameters;
  std::optional<int64_t> read_version;
  std::optional<std::string> isolation_level;  ///< Serializable | WriteSerializable | SnapshotIsolation
  std::optional<bool> is_blind_append;
  std::map<std::string, std::string> operation_metrics;
  std::optional<std::string> user_metadata;
  std::map<std::string, std::string> tags;
  std::optional<std::string> engine_info;
  std::optional<std::string> txn_id;
};

/// `{"commitInfo":{...}}`.
arrow::Result<std::string> CommitInfoToJson(const CommitInfoFields& info);

/// `{"protocol":{...}}`; readerFeatures only for reader version 3 and writerFeatures only for
/// writer version 7 (an empty list when the struct has none).
arrow::Result<std::string> ProtocolToJson(const Protocol& protocol);

/// `{"metaData":{...}}` with id, name/description when set, format, schemaString,
/// partitionColumns, configuration and createdTime when set.
arrow::Result<std::string> MetadataToJson(const Metadata& metadata);

/// `{"add":{...}}`. partitionValues is always written (null values as JSON null); stats, tags
/// (when not empty), deletionVector, baseRowId, defaultRowCommitVersion and clusteringProvider
/// only when set.
arrow::Result<std::string> AddFileToJson(const AddFile& add);

/// `{"remove":{...}}`. deletionTimestamp, size, stats, tags, deletionVector, baseRowId and
/// defaultRowCommitVersion only when set; partitionValues when extendedFileMetadata is true or
/// the map is not empty.
arrow::Result<std::string> RemoveFileToJson(const RemoveFile& remove);

/// `{"txn":{"appId":..,"version":..,"lastUpdated":..}}` (lastUpdated when set).
arrow::Result<std::string> TxnToJson(const Txn& txn);

/// `{"domainMetadata":{"domain":..,"configuration":..,"removed":..}}`.
arrow::Result<std::string> DomainMetadataToJson(const DomainMetadata& domain);

/// `{"cdc":{"path":..,"partitionValues":{..},"size":..,"dataChange":..,"tags":{..}}}`
/// (partitionValues always, null values as JSON null; tags when not empty).
arrow::Result<std::string> CdcFileToJson(const CdcFile& cdc);

/// Joins action lines into the content of a commit file: one line each, every line ending in
/// `\n`.
std::string JoinActionLines(const std::vector<std::string>& lines);

}  // namespace deltacpp::internal
