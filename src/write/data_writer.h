// Arrow batches -> Parquet data files of a table: partitioning, target file size, per-file
// statistics, physical column names. Returns `add` actions; never commits.
#pragma once

#include <arrow/api.h>
#include <arrow/filesystem/filesystem.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/actions.h"
#include "protocol/schema_json.h"

namespace deltacpp::internal {

/// How data files are written.
struct DataWriterOptions {
  std::string table_root;                       ///< absolute local path
  std::shared_ptr<arrow::fs::FileSystem> fs;    ///< filesystem of the table
  std::shared_ptr<arrow::Schema> table_schema;  ///< logical schema (with Delta field metadata)
  std::vector<std::string> partition_columns;   ///< logical names, as in metaData
  ColumnMappingMode column_mapping_mode = ColumnMappingMode::kNone;
  int64_t target_file_size = 128LL * 1024 * 1024;  ///< bytes (`delta.targetFileSize`)
  std::string compression = "snappy";           ///< snappy, zstd, gzip, lz4, uncompressed
  int32_t num_indexed_cols = 32;                ///< `delta.dataSkippingNumIndexedCols`
  std::optional<std::vector<std::string>> stats_columns;  ///< `delta.dataSkippingStatsColumns`
  bool data_change = true;
};

/// Streams batches (already in the table's logical schema, partition columns included) into
/// Parquet files; one open file per partition, rolled over at the target size.
class DataWriter {
 public:
  static arrow::Result<std::unique_ptr<DataWriter>> Make(DataWriterOptions options);
  virtual ~DataWriter() = default;
  /// Writes one batch; rows are routed to their partition's file.
  virtual arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch) = 0;
  /// Closes every file and returns their add actions (paths relative to the table root,
  /// URI-encoded; partitionValues keyed by physical names; stats JSON with numRecords,
  /// minValues, maxValues, nullCount, tightBounds).
  virtual arrow::Result<std::vector<AddFile>> Finish() = 0;
  /// Deletes every file written so far (used when the write fails before committing).
  virtual arrow::Status Abort() = 0;
};

}  // namespace deltacpp::internal
