// Parsing and formatting of SQL/ISO date and timestamp text (proleptic Gregorian calendar, UTC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace deltacpp::internal {

/// Microseconds per day.
inline constexpr int64_t kMicrosPerDay = 86'400'000'000LL;

/// Days since 1970-01-01 of year/month/day, or nullopt when the date does not exist.
std::optional<int32_t> DaysFromCivil(int64_t year, int month, int day);

/// Parses `yyyy-[m]m-[d]d` into days since the epoch; nullopt on anything else.
std::optional<int32_t> ParseDate(std::string_view text);

/// A timestamp parsed from text: microseconds since the epoch (already shifted to UTC when the
/// text carried a zone) and whether it carried one.
struct ParsedTimestamp {
  int64_t micros = 0;
  bool has_zone = false;
};

/// Parses `yyyy-mm-dd[(' '|'T')hh:mm[:ss[.fraction]]][zone]`, where zone is `Z`, `UTC`, `GMT`,
/// `[UTC|GMT](+|-)hh[:mm]` or `(+|-)hh[mm]`, optionally preceded by a space. Zone-less text is
/// read as UTC. Fractions finer than a microsecond are truncated. nullopt on anything else.
std::optional<ParsedTimestamp> ParseTimestamp(std::string_view text);

/// Formats days since the epoch as `yyyy-mm-dd`.
std::string FormatDate(int32_t days);

/// Formats microseconds since the epoch as `yyyy-mm-dd hh:mm:ss[.ffffff]` (fraction only when
/// non-zero, trailing zeros kept to six digits).
std::string FormatTimestampMicros(int64_t micros);

}  // namespace deltacpp::internal
