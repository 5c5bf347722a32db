// Per-file column statistics (`add.stats` JSON) of written data files, accumulated batch by batch.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp::internal {

/// Characters (code points) string minimums and maximums keep (delta-spark's default
/// `delta.dataSkippingStringPrefixLength`).
inline constexpr int32_t kStatsStringPrefixLength = 32;

/// One leaf column that gets statistics.
struct StatsLeaf {
  std::vector<int> path;                   ///< child indexes from the top of the data schema
  std::vector<std::string> physical_path;  ///< keys in the stats JSON (physical names)
  std::shared_ptr<arrow::DataType> type;   ///< logical type of the leaf
  bool min_max = false;  ///< min/max collected: integers, floats, decimals, strings, dates, timestamps
};

/// The leaves of `data_schema` (the logical schema without partition columns) that get
/// statistics, in schema order. A leaf is a primitive column, a column inside structs (each
/// counts on its own), or an array, map or variant column as a whole (null count only).
/// With `stats_columns` (`delta.dataSkippingStatsColumns`, logical names, dot-separated paths,
/// backticks quote a name, case-insensitive) exactly the named columns are indexed (a struct
/// stands for all its leaves; names of `partition_columns` are ignored; other unknown names
/// or paths into arrays/maps -> kInvalidArgument). Otherwise the first `num_indexed_cols`
/// leaves (`delta.dataSkippingNumIndexedCols`; -1 means all, below -1 -> kInvalidArgument).
arrow::Result<std::vector<StatsLeaf>> SelectStatsLeaves(
    const arrow::Schema& data_schema, int32_t num_indexed_cols,
    const std::optional<std::vector<std::string>>& stats_columns,
    const std::vector<std::string>& partition_columns);

/// Truncated string minimum: the first `prefix_length` code points (the value itself when it is
/// not longer).
std::string TruncateStatsMin(std::string_view value, int32_t prefix_length = kStatsStringPrefixLength);

/// Truncated string maximum that is still >= every string the original bounds (UTF-8 byte
/// order): the value itself when it has at most `prefix_length` code points; otherwise the
/// prefix followed by U+007F when the next code point is below U+007F, or by U+10FFFF when it
/// is below U+10FFFF. Code points U+10FFFF after the prefix are kept and the prefix extended;
/// the value itself is returned when that reaches its end, and nullopt (no usable maximum) when
/// the prefix would exceed 2 * `prefix_length` code points.
std::optional<std::string> TruncateStatsMax(std::string_view value,
                                            int32_t prefix_length = kStatsStringPrefixLength);

/// A timestamp statistic: `yyyy-mm-ddThh:mm:ss.SSS` truncated down to milliseconds, with `Z`
/// when `utc` (Delta `timestamp`) and without an offset otherwise (`timestamp_ntz`).
std::string FormatStatsTimestamp(int64_t value, arrow::TimeUnit::type unit, bool utc);

/// Accumulates the statistics of one data file.
class FileStatsCollector {
 public:
  /// `leaves` as SelectStatsLeaves returned them for the data schema of the batches.
  /// String minimums and maximums keep `string_prefix_length` code points
  /// (`delta.dataSkippingStringPrefixLength`).
  explicit FileStatsCollector(std::shared_ptr<const std::vector<StatsLeaf>> leaves,
                              int32_t string_prefix_length = kStatsStringPrefixLength);

  /// Adds a batch laid out like the data schema (field names do not matter, e.g. physical
  /// ones). Values inside null structs count as null. Floating-point columns holding NaN get no
  /// min/max in this file.
  arrow::Status Update(const arrow::RecordBatch& batch);

  /// Rows added so far.
  int64_t num_records() const { return num_records_; }

  /// `{"numRecords":N,"minValues":{..},"maxValues":{..},"nullCount":{..},"tightBounds":true}`.
  /// The maps nest by physical name; a column without a known bound (all null, NaN, infinite,
  /// no usable truncated string maximum) is left out of minValues/maxValues. Numbers, decimals
  /// (plain, with their full scale) as JSON numbers; dates `yyyy-mm-dd`; timestamps as in
  /// FormatStatsTimestamp; strings truncated as TruncateStatsMin/Max.
  std::string ToJson() const;

 private:
  struct Accumulator {
    int64_t null_count = 0;
    std::shared_ptr<arrow::Scalar> min;
    std::shared_ptr<arrow::Scalar> max;
    bool has_nan = false;
  };
  std::shared_ptr<const std::vector<StatsLeaf>> leaves_;
  std::vector<Accumulator> accumulators_;
  int64_t num_records_ = 0;
  int32_t string_prefix_length_ = kStatsStringPrefixLength;
};

}  // namespace deltacpp::internal
