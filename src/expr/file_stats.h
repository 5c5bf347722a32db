// Per-file column statistics (Delta `add.stats`) converted to typed Arrow scalars.
#pragma once

#include <arrow/result.h>
#include <arrow/scalar.h>
#include <arrow/type.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace deltacpp::internal {

/// Statistics of one leaf column in one file. Absent members are unknown.
struct ColumnStats {
  /// Smallest non-null value (a lower bound; string minimums may be truncated prefixes).
  std::shared_ptr<arrow::Scalar> min;
  /// Largest non-null value (timestamps are truncated to milliseconds, see data skipping).
  std::shared_ptr<arrow::Scalar> max;
  /// Number of NULL values.
  std::optional<int64_t> null_count;
};

/// Statistics of one data file.
struct FileStats {
  /// Rows in the physical file (deletion vectors not applied).
  std::optional<int64_t> num_records;
  /// Keyed by the dot-joined PHYSICAL path of the column (BoundColumn::PhysicalName()).
  std::unordered_map<std::string, ColumnStats> columns;
  /// False when the bounds may be wider than the live rows (e.g. after deletion vectors).
  std::optional<bool> tight_bounds;
};

/// Parses the `stats` JSON of an `add` action:
/// `{"numRecords":N,"minValues":{...},"maxValues":{...},"nullCount":{...},"tightBounds":b}`,
/// where the value maps nest by physical column name. Values become scalars of the column's
/// type in `logical_schema`: numbers, decimals (from the exact JSON number text), strings,
/// booleans, dates "yyyy-mm-dd", timestamps "2021-01-01T10:00:00.123Z" / "+01:00" (converted
/// to UTC) and timestamp_ntz "2021-01-01T10:00:00.123". Columns not in the schema and values
/// that do not convert are left out (unknown); only malformed JSON is an error (kCorruptLog).
arrow::Result<FileStats> ParseStatsJson(std::string_view json, const arrow::Schema& logical_schema);

}  // namespace deltacpp::internal
