// Reads the `deltacpp write` input files (CSV, JSON Lines, Parquet, or stdin) as one stream of
// record batches.
#pragma once

#include <arrow/api.h>

#include <string>
#include <vector>

namespace deltacpp::cli {

/// Opens `files` (`-` = stdin, which needs `format`) as one stream. `format` is csv, json or
/// parquet; empty means "by extension". `table_schema` (may be null) gives CSV and JSON column
/// types; other columns are inferred. All files must have the same columns. Parse errors name
/// the file and, where the parser reports it, the row.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputs(
    const std::vector<std::string>& files, const std::string& format,
    const std::shared_ptr<arrow::Schema>& table_schema);

}  // namespace deltacpp::cli
