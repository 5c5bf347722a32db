// `--order-by`: query output sorted by columns, as `ORDER BY` would give it.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <memory>
#include <string>

namespace deltacpp::cli {

/// The rows of `reader` sorted by `order_by`: comma-separated column names (case-insensitive),
/// each optionally followed by ASC or DESC. NULLs come first in ascending order and last in
/// descending order, as in Spark SQL. Every row is held
/// in memory. Errors: InvalidArgument for an unknown column or a malformed clause.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> SortedRows(
    const std::shared_ptr<arrow::RecordBatchReader>& reader, const std::string& order_by);

}  // namespace deltacpp::cli
