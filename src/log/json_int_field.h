// Reading the integer fields of log JSON (commits, JSON checkpoints, `_last_checkpoint`) at their
// declared width: a value that does not fit is an error naming the field, never narrowed.
#pragma once

#include <arrow/result.h>
#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace deltacpp::internal {

/// The values a log integer field may take, and how to name that in a message.
struct IntFieldRange {
  int64_t min;
  int64_t max;
  const char* what;  ///< e.g. "a non-negative long"
};

inline constexpr IntFieldRange kLongField{std::numeric_limits<int64_t>::min(),
                                          std::numeric_limits<int64_t>::max(), "a long"};
inline constexpr IntFieldRange kNonNegativeLongField{0, std::numeric_limits<int64_t>::max(),
                                                     "a non-negative long"};
inline constexpr IntFieldRange kNonNegativeIntField{0, std::numeric_limits<int32_t>::max(),
                                                    "a non-negative int"};
inline constexpr IntFieldRange kPositiveIntField{1, std::numeric_limits<int32_t>::max(),
                                                 "a positive int"};

/// The integer at `key` of `obj`: nullopt when the key is absent or null. A value that is not a
/// JSON integer (a fraction, an exponent, a string, ...) or lies outside `range` is CorruptLog
/// "<where>: <field> is <value>, not <range.what>", with `field` as `<action>.<key>`.
arrow::Result<std::optional<int64_t>> ReadIntField(simdjson::dom::object obj,
                                                   std::string_view key, IntFieldRange range,
                                                   std::string_view where,
                                                   std::string_view action);

}  // namespace deltacpp::internal
