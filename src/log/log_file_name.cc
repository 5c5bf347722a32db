#include "log/log_file_name.h"

#include <fmt/core.h>

#include <charconv>
#include <limits>

namespace deltacpp::internal {

namespace {

bool ParseDigits(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseVersion20(std::string_view s, int64_t* out) {
  return s.size() == 20 && ParseDigits(s, out);
}

}  // namespace

std::optional<LogFileName> ParseLogFileName(std::string_view name) {
  if (name.size() < 21 || name[20] != '.') return std::nullopt;
  LogFileName result{};
  if (!ParseVersion20(name.substr(0, 20), &result.version)) return std::nullopt;
  std::string_view rest = name.substr(21);
  if (rest == "json") {
    result.kind = LogFileKind::kCommit;
    return result;
  }
  if (rest == "crc") {
    result.kind = LogFileKind::kChecksum;
    return result;
  }
  if (rest == "checkpoint.parquet") {
    result.kind = LogFileKind::kClassicCheckpoint;
    return result;
  }
  constexpr std::string_view kCheckpoint = "checkpoint.";
  if (rest.starts_with(kCheckpoint)) {
    std::string_view tail = rest.substr(kCheckpoint.size());
    // P.N.parquet with 10-digit numbers, or <uuid>.json / <uuid>.parquet
    bool parquet = tail.ends_with(".parquet");
    bool json = tail.ends_with(".json");
    if (!parquet && !json) return std::nullopt;
    std::string_view body = tail.substr(0, tail.size() - (parquet ? 8 : 5));
    auto dot = body.find('.');
    if (parquet && dot != std::string_view::npos) {
      int64_t part = 0, parts = 0;
      // Part numbers beyond int32 would wrap into small ones and pass for another checkpoint.
      if (ParseDigits(body.substr(0, dot), &part) && ParseDigits(body.substr(dot + 1), &parts) &&
          part >= 1 && part <= parts && parts <= std::numeric_limits<int32_t>::max()) {
        result.kind = LogFileKind::kMultiPartCheckpoint;
        result.part = static_cast<int32_t>(part);
        result.num_parts = static_cast<int32_t>(parts);
        return result;
      }
    }
    if (body.empty() || dot != std::string_view::npos) return std::nullopt;
    result.kind = LogFileKind::kUuidCheckpoint;
    result.is_json = json;
    return result;
  }
  if (rest.size() == 20 + 15 && rest.ends_with(".compacted.json")) {
    if (!ParseVersion20(rest.substr(0, 20), &result.end_version)) return std::nullopt;
    result.kind = LogFileKind::kCompaction;
    return result;
  }
  return std::nullopt;
}

std::string VersionPrefix(int64_t version) { return fmt::format("{:020d}", version); }

std::string CommitFileName(int64_t version) { return VersionPrefix(version) + ".json"; }

}  // namespace deltacpp::internal
