// Writes Arrow record batches to a stream as an aligned table, CSV, JSON Lines or Parquet.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace deltacpp::cli {

/// How query results are printed.
///
/// Value rendering shared by the text formats:
/// - timestamps are ISO-8601 in UTC: `2024-01-15T10:30:00Z` for a column with a time zone (the
///   instant is shown in UTC whatever the zone), `2024-01-15T10:30:00` for one without
///   (timestamp_ntz). Fractional seconds appear only when non-zero, with as many digits as the
///   column's unit has (3 for ms, 6 for us, 9 for ns): `2024-01-15T10:30:00.123456Z`.
/// - dates are `yyyy-mm-dd`; times `hh:mm:ss[.fraction]` like timestamps.
/// - decimals are exact (`1.20` for scale 2); floats use the shortest text that reads back to the
///   same value; NaN and infinities are `NaN`, `Infinity`, `-Infinity`.
/// - binary values are base64.
/// - nested values (struct, list, map) are rendered as JSON text, as kJson writes them.
enum class OutputFormat {
  /// Aligned columns with a header row and a separator, for people. Rows are buffered to size
  /// the columns. NULL is shown as `NULL`; tabs and line breaks inside values are shown escaped
  /// (`\t`, `\n`, `\r`); numeric columns are right-aligned. Widths count Unicode code points.
  kTable,
  /// RFC 4180 quoting with a header line of column names: fields are quoted when they contain a
  /// comma, double quote, CR or LF (quotes doubled); lines end with `\n`. NULL is an empty
  /// field; an empty string is written `""` so the two stay distinguishable. Booleans are
  /// `true` / `false`.
  kCsv,
  /// JSON Lines: one object per row, keys = column names. NULL is `null`; structs are objects,
  /// lists are arrays, maps with string keys are objects and other maps arrays of
  /// `{"key":..,"value":..}`; binary is a base64 string; decimals are JSON numbers written
  /// exactly; NaN and infinities are the strings "NaN", "Infinity", "-Infinity"; timestamps and
  /// dates are strings as above.
  kJson,
  /// One Parquet file (snappy, Arrow schema stored so types read back exactly) written to the
  /// stream.
  kParquet,
};

/// Options for WriteRecordBatches.
struct OutputOptions {
  /// Stop after this many rows in total (all rows when unset). Must not be negative.
  std::optional<int64_t> limit;
};

/// The format named `name`: "table", "csv", "json" (or "jsonl") or "parquet", case-insensitive.
/// Errors (Invalid) on any other name, listing the accepted ones.
arrow::Result<OutputFormat> ParseOutputFormat(std::string_view name);

/// Reads `reader` to the end (or to `opts.limit` rows) and writes the rows to `out` in `format`.
/// Errors: a failing reader's status; Invalid for a negative limit; IOError when `out` fails;
/// Parquet writer errors for kParquet.
arrow::Status WriteRecordBatches(arrow::RecordBatchReader& reader, OutputFormat format,
                                 std::ostream& out, const OutputOptions& opts);

}  // namespace deltacpp::cli
