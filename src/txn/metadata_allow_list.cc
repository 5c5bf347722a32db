#include "txn/metadata_allow_list.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include <array>
#include <string_view>

#include "util/uri.h"

namespace deltacpp::internal {

namespace {

bool IsTrue(const std::string& v) { return EqualsIgnoreCase(v, "true"); }

// Whether a concurrent change of property `key` from `old_value` to `new_value` may be adopted.
bool AllowedPropertyChange(const std::string& key, const std::optional<std::string>& old_value,
                           const std::string& new_value) {
  if (key == "delta.enableDeletionVectors" || key == "delta.enableInCommitTimestamps" ||
      key == "delta.enableRowTracking") {
    return IsTrue(new_value);
  }
  if (key == "delta.checkpointPolicy") return EqualsIgnoreCase(new_value, "v2");
  if (key == "delta.columnMapping.mode") {
    return (!old_value || EqualsIgnoreCase(*old_value, "none")) &&
           EqualsIgnoreCase(new_value, "name");
  }
  return key == "delta.columnMapping.maxColumnId" ||
         key == "delta.inCommitTimestampEnablementVersion" ||
         key == "delta.inCommitTimestampEnablementTimestamp" ||
         key == "delta.rowTracking.materializedRowIdColumnName" ||
         key == "delta.rowTracking.materializedRowCommitVersionColumnName";
}

// Removes the column-mapping keys from every field `metadata` object of a schema JSON tree.
void StripColumnMappingMetadata(rapidjson::Value& value) {
  static constexpr std::array<std::string_view, 3> kKeys = {
      "delta.columnMapping.id", "delta.columnMapping.physicalName",
      "delta.columnMapping.nested.ids"};
  if (value.IsObject()) {
    auto md = value.FindMember("metadata");
    if (md != value.MemberEnd() && md->value.IsObject()) {
      for (auto key : kKeys) {
        md->value.RemoveMember(rapidjson::StringRef(key.data(), key.size()));
      }
    }
    for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
      StripColumnMappingMetadata(it->value);
    }
  } else if (value.IsArray()) {
    for (auto& v : value.GetArray()) StripColumnMappingMetadata(v);
  }
}

bool SchemasEqualIgnoringColumnMapping(const std::string& a, const std::string& b) {
  if (a == b) return true;
  rapidjson::Document da, db;
  da.Parse(a.data(), a.size());
  db.Parse(b.data(), b.size());
  if (da.HasParseError() || db.HasParseError()) return false;
  StripColumnMappingMetadata(da);
  StripColumnMappingMetadata(db);
  return da == db;
}

}  // namespace

std::optional<std::string> DisallowedMetadataChange(const Metadata& current,
                                                    const Metadata& winner) {
  if (winner.id != current.id) {
    return fmt::format("the table id changed from {} to {}", current.id, winner.id);
  }
  if (winner.name != current.name || winner.description != current.description) {
    return std::string("the table name or description changed");
  }
  if (winner.format_provider != current.format_provider ||
      winner.format_options != current.format_options) {
    return std::string("the data file format changed");
  }
  if (winner.partition_columns != current.partition_columns) {
    return std::string("the partition columns changed");
  }
  if (winner.created_time != current.created_time) {
    return std::string("the table creation time changed");
  }
  for (const auto& [key, value] : current.configuration) {
    if (winner.configuration.find(key) == winner.configuration.end()) {
      return fmt::format("table property '{}' was removed", key);
    }
  }
  for (const auto& [key, value] : winner.configuration) {
    auto it = current.configuration.find(key);
    std::optional<std::string> old_value;
    if (it != current.configuration.end()) {
      if (it->second == value) continue;
      old_value = it->second;
    }
    if (!AllowedPropertyChange(key, old_value, value)) {
      return fmt::format("table property '{}' changed from {} to '{}'", key,
                         old_value ? "'" + *old_value + "'" : std::string("unset"), value);
    }
  }
  if (!SchemasEqualIgnoringColumnMapping(current.schema_string, winner.schema_string)) {
    return std::string("the schema changed");
  }
  return std::nullopt;
}

}  // namespace deltacpp::internal
