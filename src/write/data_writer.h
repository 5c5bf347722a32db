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
  /// A row group is encoded once this much Arrow data is buffered for its file (at most the
  /// target file size).
  int64_t row_group_bytes = 64LL * 1024 * 1024;
  int32_t num_indexed_cols = 32;                ///< `delta.dataSkippingNumIndexedCols`
  std::optional<std::vector<std::string>> stats_columns;  ///< `delta.dataSkippingStatsColumns`
  int32_t string_prefix_length = 32;            ///< `delta.dataSkippingStringPrefixLength`
  /// Files go to random folders of this many characters instead of partition folders
  /// (`delta.randomizeFilePrefixes` / `delta.randomPrefixLength`); column mapping implies 2.
  std::optional<int32_t> random_prefix_length;
  bool data_change = true;
  /// Folder under the table root that holds every file (`_change_data` for change-data files);
  /// the partition or random-prefix folders go below it. Empty: the table root.
  std::string base_folder;
  /// Start of the file names: `part` for data files, `cdc` for change-data files.
  std::string file_name_prefix = "part";
};

/// Streams batches (already in the table's logical schema, partition columns included) into
/// Parquet files, rolled over at the target size: one open file per partition, or several
/// ("lanes") when rows arrive faster than one file encodes, so that row groups of one partition
/// are encoded on several cores at once (then rows of one write interleave across files).
///
/// Layout: Hive folders `<col>=<escaped value>/` per partition column (null and empty values as
/// `__HIVE_DEFAULT_PARTITION__`), or with column mapping a random two-character folder per file;
/// names `part-<5-digit counter>-<uuid>.c000.<codec>.parquet` (no codec part when
/// uncompressed), both below `base_folder` when set and with `file_name_prefix` for `part`.
/// Files hold the non-partition, non-void columns under their physical names (with Parquet field
/// ids under column mapping), all declared optional, timestamps as INT64 microseconds; a column
/// without column-mapping metadata (such as the `_change_type` column a caller adds to the
/// schema of change-data files) keeps its name and gets no field id. Row groups are cut at
/// min(target size, 64 MiB) of buffered Arrow data and a file is finished once its written bytes
/// reach the target size. NOT NULL and CHECK constraints are the caller's to enforce. Not
/// thread-safe.
class DataWriter {
 public:
  /// Validates the options: unknown or nested partition columns, an unknown or unavailable
  /// codec, a non-positive target size, num_indexed_cols < -1, unknown stats_columns, an
  /// absolute base_folder or one with `..`, or an empty file_name_prefix or one with `/` ->
  /// kInvalidArgument (kUnsupportedFeature for nested partition columns); void inside arrays
  /// or maps, all-void structs, or no column left for the data files -> kSchemaMismatch.
  /// A null `fs` means the local filesystem.
  static arrow::Result<std::unique_ptr<DataWriter>> Make(DataWriterOptions options);
  virtual ~DataWriter() = default;
  /// Writes one batch; rows are routed to their partition's file. The batch's columns must be
  /// the table schema's, in order (names compared case-insensitively; types equal up to field
  /// names inside lists and maps and the zone name of zoned timestamps), else kSchemaMismatch.
  /// Invalid after Finish or Abort.
  virtual arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch) = 0;
  /// Closes every file and returns their add actions (paths relative to the table root,
  /// URI-encoded; partitionValues keyed by physical names; stats JSON with numRecords,
  /// minValues, maxValues, nullCount, tightBounds; see FileStatsCollector), in file-creation
  /// order. Invalid when called twice or after Abort.
  virtual arrow::Result<std::vector<AddFile>> Finish() = 0;
  /// What has reached storage so far: files started, and bytes written to them (closed files
  /// whole, open ones up to their last flushed row group).
  struct Written {
    int64_t files = 0;
    int64_t bytes = 0;
  };
  virtual Written WrittenSoFar() const = 0;
  /// Deletes every file written so far (used when the write fails before committing), also after
  /// Finish; the writer is unusable afterwards. Directories it created are left in place.
  virtual arrow::Status Abort() = 0;
};

}  // namespace deltacpp::internal
