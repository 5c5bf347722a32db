// Reads one Parquet data file of a scan: the needed columns, row groups its statistics cannot
// rule out, deletion vector rows removed, partition and metadata columns added, the row filter
// applied.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/expression.h>
#include <arrow/filesystem/filesystem.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "expr/file_stats.h"
#include "protocol/actions.h"
#include "protocol/schema_json.h"

namespace deltacpp::internal {

/// The metadata columns a scan can add to the rows it reads.
enum class MetadataColumn { kNone, kFilePath, kRowIndex };

/// What every file of one scan shares.
struct FileReadPlan {
  std::string table_root;
  int64_t version = 0;
  ColumnMappingMode mode = ColumnMappingMode::kNone;
  /// Logical fields read from files or partition values (projection plus filter columns).
  std::shared_ptr<arrow::Schema> read_schema;
  /// Per read_schema field: true when it is a partition column.
  std::vector<bool> is_partition;
  /// Per read_schema field: the metadata column it holds (kNone for the table's columns; an
  /// empty or shorter vector means kNone for the rest). Metadata fields come after the table's
  /// fields.
  std::vector<MetadataColumn> metadata;
  /// Row filter over read_schema, already bound; nullopt for none.
  std::optional<arrow::compute::Expression> row_filter;
  /// Returns true when a row group with these statistics cannot hold a matching row.
  std::function<bool(const FileStats&)> can_skip_row_group;
  /// read_schema positions that make up the output, in output order.
  std::vector<int> output_fields;
  std::shared_ptr<arrow::Schema> output_schema;
  int64_t batch_size = 64 * 1024;
};

/// One file to read.
struct FileTask {
  std::string path;  ///< absolute local path
  std::string uri;   ///< the value of `_metadata.file_path`
  int64_t size = 0;
  /// One value per read_schema field that is a partition column (nullptr elsewhere).
  std::vector<std::shared_ptr<arrow::Scalar>> partition_values;
  std::optional<DeletionVectorDescriptor> deletion_vector;
};

/// Reads the file into output batches. Errors name the table, version and file.
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ReadDataFile(
    const FileReadPlan& plan, const FileTask& task, arrow::fs::FileSystem& fs);

}  // namespace deltacpp::internal
