// Known table properties and their validation.
#include "protocol/table_properties.h"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include "deltacpp/error.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

constexpr int64_t kMsPerDay = 86'400'000;

}  // namespace

arrow::Result<int64_t> ParseIntervalMs(std::string_view text, std::string_view property) {
  auto fail = [&](std::string_view why) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table property {}: invalid interval '{}': {}", property, text,
                                  why));
  };
  std::vector<std::string> tokens;
  {
    const std::string lower = AsciiLower(text);
    size_t i = 0;
    while (i < lower.size()) {
      while (i < lower.size() && std::isspace(static_cast<unsigned char>(lower[i]))) ++i;
      size_t start = i;
      while (i < lower.size() && !std::isspace(static_cast<unsigned char>(lower[i]))) ++i;
      if (i > start) tokens.push_back(lower.substr(start, i - start));
    }
  }
  size_t pos = 0;
  if (!tokens.empty() && tokens[0] == "interval") pos = 1;
  if (pos >= tokens.size()) return fail("expected '<number> <unit>', e.g. 'interval 7 days'");
  int64_t total = 0;
  while (pos < tokens.size()) {
    std::string_view number = tokens[pos];
    if (!number.empty() && number.front() == '+') number.remove_prefix(1);
    int64_t amount = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), amount);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
      return fail(fmt::format("'{}' is not a whole number", tokens[pos]));
    }
    if (pos + 1 >= tokens.size()) return fail(fmt::format("no unit after '{}'", tokens[pos]));
    std::string unit = tokens[pos + 1];
    if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
    int64_t factor = 0;
    if (unit == "millisecond") {
      factor = 1;
    } else if (unit == "second") {
      factor = 1000;
    } else if (unit == "minute") {
      factor = 60'000;
    } else if (unit == "hour") {
      factor = 3'600'000;
    } else if (unit == "day") {
      factor = kMsPerDay;
    } else if (unit == "week") {
      factor = 7 * kMsPerDay;
    } else if (unit == "month" || unit == "year") {
      return fail("months and years are not allowed (their length varies); use days or weeks");
    } else {
      return fail(fmt::format("unknown unit '{}' (use milliseconds, seconds, minutes, hours, "
                              "days or weeks)",
                              tokens[pos + 1]));
    }
    int64_t part = 0;
    if (__builtin_mul_overflow(amount, factor, &part) ||
        __builtin_add_overflow(total, part, &total)) {
      return fail("out of range");
    }
    pos += 2;
  }
  if (total < 0) return fail("must not be negative");
  return total;
}

arrow::Result<int64_t> ParseIntegerProperty(std::string_view text, std::string_view property) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table property {}='{}' is not an integer", property, text));
  }
  return v;
}

const std::vector<KnownProperty>& KnownProperties() {
  using K = PropertyKind;
  static const std::vector<KnownProperty> known = {
      {"delta.appendOnly", K::kBool},
      {"delta.enableChangeDataFeed", K::kBool},
      {"delta.enableDeletionVectors", K::kBool},
      {"delta.columnMapping.mode", K::kChoice, 0, {"none", "name", "id"}},
      {"delta.columnMapping.maxColumnId", K::kManaged},
      {"delta.columnMapping.hasDroppedOrRenamed", K::kManaged},
      {"delta.enableRowTracking", K::kBool},
      {"delta.rowTrackingSuspended", K::kBool},
      {"delta.rowTracking.materializedRowIdColumnName", K::kManaged},
      {"delta.rowTracking.materializedRowCommitVersionColumnName", K::kManaged},
      {"delta.enableInCommitTimestamps", K::kBool},
      {"delta.inCommitTimestampEnablementVersion", K::kManaged},
      {"delta.inCommitTimestampEnablementTimestamp", K::kManaged},
      {"delta.enableTypeWidening", K::kBool},
      {"delta.enableIcebergCompatV1", K::kUnsupported},
      {"delta.enableIcebergCompatV2", K::kUnsupported},
      {"delta.enableIcebergCompatV3", K::kUnsupported},
      {"delta.enableIcebergWriterCompatV1", K::kUnsupported},
      {"delta.universalFormat.enabledFormats", K::kUnsupported},
      {"delta.enableVariantShredding", K::kUnsupported},
      {"delta.dataSkippingNumIndexedCols", K::kInt, -1},
      {"delta.dataSkippingStatsColumns", K::kText},
      {"delta.dataSkippingStringPrefixLength", K::kInt, 0},
      {"delta.checkpointInterval", K::kInt, 1},
      {"delta.checkpointPolicy", K::kChoice, 0, {"classic", "v2"}},
      {"delta.checkpoint.writeStatsAsJson", K::kBool},
      {"delta.checkpoint.writeStatsAsStruct", K::kBool},
      {"delta.logRetentionDuration", K::kInterval},
      {"delta.deletedFileRetentionDuration", K::kInterval},
      {"delta.checkpointRetentionDuration", K::kInterval},
      {"delta.setTransactionRetentionDuration", K::kInterval},
      {"delta.enableExpiredLogCleanup", K::kBool},
      {"delta.isolationLevel", K::kChoice, 0, {"Serializable"}},
      {"delta.randomizeFilePrefixes", K::kBool},
      {"delta.randomPrefixLength", K::kInt, 1},
      {"delta.parquet.compression.codec", K::kChoice, 0,
       {"uncompressed", "none", "snappy", "gzip", "lz4", "lz4_raw", "zstd"}},
      {"delta.parquet.format.version", K::kText},
      {"delta.writePartitionColumnsToParquet", K::kBool},
      {"delta.autoOptimize.optimizeWrite", K::kBool},
      {"delta.autoOptimize.autoCompact", K::kText},
      {"delta.targetFileSize", K::kInt, 1},
      {"delta.tuneFileSizesForRewrites", K::kBool},
      {"delta.compatibility.symlinkFormatManifest.enabled", K::kBool},
      {"delta.requireCheckpointProtectionBeforeVersion", K::kManaged},
  };
  return known;
}

const KnownProperty* FindKnownProperty(std::string_view key) {
  for (const auto& p : KnownProperties()) {
    if (EqualsIgnoreCase(p.key, key)) return &p;
  }
  return nullptr;
}

// Validates `value` for a known property and returns the value to store.
arrow::Result<std::string> CheckPropertyValue(const KnownProperty& p, const std::string& value) {
  const std::string key(p.key);
  switch (p.kind) {
    case PropertyKind::kText:
      return value;
    case PropertyKind::kBool:
      if (EqualsIgnoreCase(value, "true")) return std::string("true");
      if (EqualsIgnoreCase(value, "false")) return std::string("false");
      return DeltaError(DeltaErrorCode::kInvalidArgument, fmt::format("{}='{}': the value must be true or false", key, value));
    case PropertyKind::kInt: {
      ARROW_ASSIGN_OR_RAISE(int64_t v, ParseIntegerProperty(value, key));
      if (v < p.min) {
        return DeltaError(DeltaErrorCode::kInvalidArgument, fmt::format("{}='{}': the value must be at least {}", key, value, p.min));
      }
      return value;
    }
    case PropertyKind::kInterval:
      ARROW_RETURN_NOT_OK(ParseIntervalMs(value, key).status());
      return value;
    case PropertyKind::kChoice:
      for (const auto& c : p.choices) {
        if (EqualsIgnoreCase(c, value)) return std::string(c);
      }
      {
        std::string options;
        for (const auto& c : p.choices) options += (options.empty() ? "" : ", ") + std::string(c);
        return DeltaError(DeltaErrorCode::kInvalidArgument, fmt::format("{}='{}': the value must be one of {}", key, value, options));
      }
    case PropertyKind::kManaged:
      return DeltaError(DeltaErrorCode::kInvalidArgument, fmt::format("{} is maintained by the table itself and cannot be set", key));
    case PropertyKind::kUnsupported:
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("{}: deltacpp does not write tables with this property", key));
  }
  return value;
}


arrow::Result<std::map<std::string, std::string>> ValidateUserProperties(
    const std::map<std::string, std::string>& properties) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : properties) {
    std::string lower = key;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!lower.starts_with("delta.") || lower.starts_with("delta.feature.") ||
        lower.starts_with("delta.constraints.") || lower == "delta.minreaderversion" ||
        lower == "delta.minwriterversion") {
      out[key] = value;
      continue;
    }
    const KnownProperty* known = FindKnownProperty(key);
    if (!known) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("unknown table property '{}'", key));
    }
    ARROW_ASSIGN_OR_RAISE(auto stored, CheckPropertyValue(*known, value));
    out[std::string(known->key)] = std::move(stored);
  }
  return out;
}

}  // namespace deltacpp::internal
