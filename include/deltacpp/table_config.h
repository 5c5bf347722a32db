// A table's `delta.*` properties, typed and with delta-spark's defaults, parsed once per metadata.
#pragma once

#include <arrow/status.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "deltacpp/schema.h"

namespace deltacpp {

/// Which checkpoint layout new checkpoints use (`delta.checkpointPolicy`).
enum class CheckpointPolicy { kClassic, kV2 };

/// The typed view of `metaData.configuration`. Every field holds the effective value: the
/// table's when set and well-formed, delta-spark's default otherwise. A malformed value of a
/// known property is not silently replaced: it is listed in `invalid`, and the operations that
/// depend on the property refuse to run (see CheckValid).
struct TableConfig {
  /// Parses `configuration`. Never fails; malformed values of known properties go to `invalid`.
  static TableConfig Parse(const std::map<std::string, std::string>& configuration);

  /// OK when `key` (a canonical property name) is absent or well-formed; otherwise
  /// InvalidArgument "<context>: table property <key>='<value>': <reason>".
  arrow::Status CheckValid(std::string_view key, std::string_view context) const;
  /// As CheckValid, for every known property: what a writer checks before writing.
  arrow::Status CheckAllValid(std::string_view context) const;

  /// `delta.appendOnly`: only blind appends may change data.
  bool append_only = false;
  /// `delta.enableChangeDataFeed` (or its legacy name `delta.enableChangeDataCapture`).
  bool change_data_feed = false;
  /// `delta.enableDeletionVectors`.
  bool deletion_vectors = false;
  /// `delta.columnMapping.mode`.
  ColumnMappingMode column_mapping_mode = ColumnMappingMode::kNone;
  /// `delta.columnMapping.maxColumnId` (managed by the table).
  std::optional<int64_t> column_mapping_max_column_id;
  /// `delta.enableRowTracking`.
  bool row_tracking = false;
  /// `delta.rowTrackingSuspended`.
  bool row_tracking_suspended = false;
  /// `delta.rowTracking.materializedRowIdColumnName` (managed).
  std::optional<std::string> materialized_row_id_column;
  /// `delta.rowTracking.materializedRowCommitVersionColumnName` (managed).
  std::optional<std::string> materialized_row_commit_version_column;
  /// `delta.enableInCommitTimestamps`.
  bool in_commit_timestamps = false;
  /// `delta.inCommitTimestampEnablementVersion` (managed).
  std::optional<int64_t> in_commit_timestamp_enablement_version;
  /// `delta.inCommitTimestampEnablementTimestamp` (managed).
  std::optional<int64_t> in_commit_timestamp_enablement_timestamp;
  /// `delta.enableTypeWidening`.
  bool type_widening = false;
  /// `delta.dataSkippingNumIndexedCols`: leaf columns with statistics (-1: all).
  int64_t data_skipping_num_indexed_cols = 32;
  /// `delta.dataSkippingStatsColumns`: the columns with statistics, as written (comma-separated
  /// names); takes precedence over data_skipping_num_indexed_cols.
  std::optional<std::string> data_skipping_stats_columns;
  /// `delta.dataSkippingStringPrefixLength`: code points kept of string min/max statistics.
  int64_t data_skipping_string_prefix_length = 32;
  /// `delta.checkpointInterval`: commits between automatic checkpoints.
  int64_t checkpoint_interval = 10;
  /// `delta.checkpointPolicy`.
  CheckpointPolicy checkpoint_policy = CheckpointPolicy::kClassic;
  /// `delta.checkpoint.writeStatsAsJson`.
  bool checkpoint_write_stats_as_json = true;
  /// `delta.checkpoint.writeStatsAsStruct`.
  bool checkpoint_write_stats_as_struct = true;
  /// `delta.logRetentionDuration` in milliseconds (30 days).
  int64_t log_retention_ms = 30LL * 24 * 3600 * 1000;
  /// `delta.deletedFileRetentionDuration` in milliseconds (1 week).
  int64_t deleted_file_retention_ms = 7LL * 24 * 3600 * 1000;
  /// `delta.checkpointRetentionDuration` in milliseconds (2 days).
  int64_t checkpoint_retention_ms = 2LL * 24 * 3600 * 1000;
  /// `delta.setTransactionRetentionDuration` in milliseconds (none: app ids never expire).
  std::optional<int64_t> set_transaction_retention_ms;
  /// `delta.enableExpiredLogCleanup`.
  bool enable_expired_log_cleanup = true;
  /// `delta.isolationLevel` is `Serializable` (the only value a table may set).
  bool serializable_isolation = false;
  /// `delta.randomizeFilePrefixes`.
  bool randomize_file_prefixes = false;
  /// `delta.randomPrefixLength`.
  int64_t random_prefix_length = 2;
  /// `delta.parquet.compression.codec` as written (lower case), when set.
  std::optional<std::string> parquet_compression_codec;
  /// `delta.targetFileSize` in bytes, when set.
  std::optional<int64_t> target_file_size;

  /// Known properties whose value is malformed: canonical key -> (value, reason).
  std::map<std::string, std::pair<std::string, std::string>> invalid;
};

}  // namespace deltacpp
