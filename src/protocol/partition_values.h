// Parsing and serializing `partitionValues` strings (the Delta protocol's partition value text forms).
#pragma once

#include <arrow/result.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace deltacpp::internal {

/// Parses one `partitionValues` entry into a scalar of `type`. An absent value (nullopt) or an empty
/// string is a null scalar of `type`, for every type including strings. Accepted forms: integers in
/// decimal; booleans `true`/`false` (any case); floats incl. `NaN`, `Infinity`, `-Infinity`; decimals
/// such as `1.23` (rescaled to the type's scale without losing digits); dates `yyyy-mm-dd`; timestamps
/// `yyyy-mm-dd[ hh:mm:ss[.f{1,9}]]`, also with `T` as separator; `timestamp` (zoned) additionally accepts
/// a `Z` or `+hh:mm` suffix, and a value without one is taken as UTC; `timestamp_ntz` rejects zone
/// suffixes; binary is the raw bytes of the string. A malformed value -> kCorruptLog naming the value
/// and type; a type that cannot be a partition column (nested types) -> kUnsupportedFeature.
arrow::Result<std::shared_ptr<arrow::Scalar>> ParsePartitionValue(const std::optional<std::string_view>& raw,
                                                                  const std::shared_ptr<arrow::DataType>& type);

/// Serializes a scalar into its `partitionValues` text; a null scalar gives nullopt. Forms: integers in
/// decimal, booleans `true`/`false`, floats in Java `toString` style (`1.0`, `1.5E10`, `NaN`,
/// `Infinity`), decimals in plain notation with the full scale (`1.230`), dates `yyyy-mm-dd`,
/// timestamps `yyyy-mm-dd hh:mm:ss[.ffffff]` in UTC (zoned) or wall-clock (ntz) with trailing zeros of the
/// fraction dropped and no fraction when it is zero, strings and binary as their raw bytes.
/// Unsupported scalar types -> kUnsupportedFeature.
arrow::Result<std::optional<std::string>> SerializePartitionValue(const arrow::Scalar& scalar);

/// Days since 1970-01-01 of a `[+-]yyyy-mm-dd` date; kCorruptLog when malformed or not a calendar date.
arrow::Result<int32_t> ParseDateDays(std::string_view text);

/// A timestamp text as seconds since the epoch plus nanoseconds (0..999999999) within that second.
/// Accepts `yyyy-mm-dd`, `yyyy-mm-dd[ T]hh:mm[:ss[.f{1,9}]]`, and when `allow_zone` a trailing `Z` or
/// `+hh[:mm]`/`-hh[:mm]` offset (the result is then UTC). kCorruptLog when malformed.
arrow::Result<std::pair<int64_t, int32_t>> ParseTimestampText(std::string_view text, bool allow_zone);

/// `yyyy-mm-dd` for a day count since the epoch.
std::string FormatDateDays(int64_t days);

/// `yyyy-mm-dd hh:mm:ss[.fffffffff]` for seconds since the epoch plus nanoseconds, with trailing zeros of
/// the fraction dropped and no fraction at all when it is zero.
std::string FormatTimestamp(int64_t seconds, int32_t nanos);

}  // namespace deltacpp::internal
