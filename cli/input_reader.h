// Reads the `deltacpp write` input files (CSV, JSON Lines, Parquet, or stdin) as one stream of
// record batches.
#pragma once

#include <arrow/api.h>

#include <string>
#include <vector>

namespace deltacpp::cli {

/// How the inputs of a write are read.
struct InputOptions {
  /// csv, json or parquet; empty means "by extension" (stdin needs one).
  std::string format;
  /// The table's schema, or null for a new table. Its columns keep their types: CSV and JSON
  /// values are converted to them.
  std::shared_ptr<arrow::Schema> table_schema;
  /// Types the user declared (`--schema`) for CSV and JSON columns; they take precedence over
  /// the table's. CSV columns neither names are text; JSON ones are inferred.
  std::shared_ptr<arrow::Schema> declared;
  /// CSV input starts with a header line; without, its fields are the declared columns (or
  /// else the table's) in order.
  bool header = true;
  /// The write may add columns (--merge-schema): a CSV header need not name a table column.
  bool merge_schema = false;
};

/// Opens `files` (`-` = stdin) as one stream. All files must have the same columns. Errors
/// name the file (or "stdin") and, for CSV and JSON values, the column and line; a CSV header
/// that repeats a name or looks like data is refused before any row is read (see
/// OpenCsvInput). A file that cannot be opened is IOError with the OS's reason.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputs(
    const std::vector<std::string>& files, const InputOptions& options);

}  // namespace deltacpp::cli
