// Reads CSV input for `deltacpp write` as text, checks its header and converts columns to the
// types they are given, naming the column and the line of a value that does not convert.
#pragma once

#include <arrow/api.h>
#include <arrow/io/interfaces.h>

#include <memory>
#include <string>
#include <vector>

namespace deltacpp::cli {

/// How a CSV input is read.
struct CsvInputOptions {
  /// The first line names the columns. Without a header, `column_names` does.
  bool header = true;
  std::vector<std::string> column_names;
  /// Types for columns, matched by name ignoring case: the table's columns, then columns the
  /// user declared. Columns not named here stay text. May be null.
  std::shared_ptr<arrow::Schema> types;
  /// The columns `--schema` declared: each must be in the header.
  std::vector<std::string> declared_names;
  /// The existing table's schema (null for a new table), for telling a header from data.
  std::shared_ptr<arrow::Schema> table_schema;
  /// New columns may be added to the table (--merge-schema).
  bool merge_schema = false;
  /// What to suggest when the first line looks like data rather than a header.
  std::string no_header_hint;
};

/// Reads `stream` (named `name` in messages: a path or "stdin") as CSV.
///
/// A header is refused, before any row is read, when it repeats a column name (ignoring
/// case), has an empty name, has a name that looks like a value (a number or a date) and is
/// not a table column, or, for an existing table without `merge_schema`, names none of the
/// table's columns.
///
/// Errors name the file and the line as an editor counts it (the header is line 1; a quoted
/// value spanning lines counts all of them; blank lines count and are skipped, except in a
/// one-column file, where a blank line is a null value): a value that does not convert
/// (`cannot convert "abc" in column "age" at line 7 of input.csv to integer`; the line the
/// value itself is on), a line with the wrong number of fields, or a quote never closed.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsvInput(
    std::shared_ptr<arrow::io::InputStream> stream, const std::string& name,
    const CsvInputOptions& options);

}  // namespace deltacpp::cli
