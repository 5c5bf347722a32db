// Known table properties and their validation.
#include "ops/table_properties.h"

#include <fmt/core.h>

#include "deltacpp/error.h"
#include "log/checkpoint_writer.h"
#include "ops/op_util.h"
#include "util/uri.h"

namespace deltacpp::internal {

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
      ARROW_ASSIGN_OR_RAISE(int64_t v, IntProperty({{key, value}}, key, 0));
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
