#include "log/json_int_field.h"

#include <fmt/core.h>

#include "deltacpp/error.h"

namespace deltacpp::internal {

arrow::Result<std::optional<int64_t>> ReadIntField(simdjson::dom::object obj,
                                                   std::string_view key, IntFieldRange range,
                                                   std::string_view where,
                                                   std::string_view action) {
  auto v = obj[key];
  if (v.error() || v.value().is_null()) return std::nullopt;
  // Only a JSON integer that fits int64 has an int64 value: 1.0, 1e3, "1" and integers beyond
  // int64 do not, and are refused rather than rounded, truncated or taken as absent.
  int64_t value = 0;
  if (!v.value().get_int64().get(value) && value >= range.min && value <= range.max) {
    return value;
  }
  std::string text = simdjson::minify(v.value());
  if (text.size() > 64) {
    text.resize(64);
    text.append("...");
  }
  return DeltaError(DeltaErrorCode::kCorruptLog,
                    fmt::format("{}: {}.{} is {}, not {}", where, action, key, text, range.what));
}

}  // namespace deltacpp::internal
