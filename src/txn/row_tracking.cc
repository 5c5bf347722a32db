#include "txn/row_tracking.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "deltacpp/table_config.h"
#include "deltacpp/error.h"
#include "protocol/table_features.h"
#include "util/random_uuid.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

arrow::Status Invalid(const std::string& table_root, const std::string& what) {
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    fmt::format("table {}: {}", table_root, what));
}

}  // namespace

bool RowTrackingSupported(const Protocol& protocol) {
  const auto features = EffectiveFeatures(protocol);
  return std::find(features.begin(), features.end(), "rowTracking") != features.end();
}

bool RowIdAssignmentRequired(const Protocol& protocol, const Metadata& metadata) {
  return RowTrackingSupported(protocol) &&
         !TableConfig::Parse(metadata.configuration).row_tracking_suspended;
}

arrow::Status ValidateRowTrackingMetadata(const Protocol& protocol, const Metadata& metadata,
                                          const std::string& table_root) {
  const auto config = TableConfig::Parse(metadata.configuration);
  if (!config.row_tracking) return arrow::Status::OK();
  if (config.row_tracking_suspended) {
    return Invalid(table_root,
                   "delta.enableRowTracking and delta.rowTrackingSuspended cannot both be true");
  }
  if (!RowTrackingSupported(protocol)) {
    return Invalid(table_root,
                   "delta.enableRowTracking=true needs the rowTracking table feature in the "
                   "protocol");
  }
  return arrow::Status::OK();
}

arrow::Result<int64_t> ParseRowIdHighWaterMark(std::string_view configuration,
                                               const std::string& where) {
  rapidjson::Document doc;
  doc.Parse(configuration.data(), configuration.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("{}: domain {} configuration is not a JSON object: {}", where,
                                  kRowTrackingDomain, configuration));
  }
  auto it = doc.FindMember("rowIdHighWaterMark");
  if (it == doc.MemberEnd() || !it->value.IsInt64()) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("{}: domain {} configuration has no integer "
                                  "rowIdHighWaterMark: {}",
                                  where, kRowTrackingDomain, configuration));
  }
  return it->value.GetInt64();
}

arrow::Result<int64_t> RowIdHighWaterMark(const std::map<std::string, DomainMetadata>& domains,
                                          const std::string& where) {
  auto it = domains.find(std::string(kRowTrackingDomain));
  if (it == domains.end() || it->second.removed) return -1;
  return ParseRowIdHighWaterMark(it->second.configuration, where);
}

arrow::Result<std::optional<int64_t>> RowIdHighWaterMarkSetBy(
    const std::vector<DomainMetadata>& domains, const std::string& where) {
  std::optional<int64_t> out;
  for (const auto& d : domains) {
    if (d.domain != kRowTrackingDomain || d.removed) continue;
    ARROW_ASSIGN_OR_RAISE(out, ParseRowIdHighWaterMark(d.configuration, where));
  }
  return out;
}

std::optional<int64_t> NumRecordsFromStats(const std::optional<std::string>& stats) {
  if (!stats) return std::nullopt;
  rapidjson::Document doc;
  doc.Parse(stats->data(), stats->size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  auto it = doc.FindMember("numRecords");
  if (it == doc.MemberEnd() || !it->value.IsInt64()) return std::nullopt;
  return it->value.GetInt64();
}

arrow::Result<RowIdAssignment> AssignRowIds(const std::vector<AddFile>& adds,
                                            int64_t high_water_mark, int64_t version,
                                            const std::string& table_root) {
  RowIdAssignment out;
  out.adds = adds;
  int64_t next = high_water_mark;  // the last id handed out
  for (auto& a : out.adds) {
    if (!a.default_row_commit_version) a.default_row_commit_version = version;
    if (a.base_row_id) continue;
    auto num_records = NumRecordsFromStats(a.stats);
    if (!num_records || *num_records < 0) {
      return Invalid(table_root,
                     fmt::format("file {}: the table tracks row ids (rowTracking), which needs "
                                 "numRecords in the file's stats to assign them",
                                 a.path));
    }
    int64_t last = 0;
    if (next == INT64_MAX || __builtin_add_overflow(next, *num_records, &last)) {
      return Invalid(table_root, fmt::format("file {}: row ids would exceed the long range",
                                             a.path));
    }
    a.base_row_id = next + 1;
    next = last;
  }
  if (next > high_water_mark) {
    DomainMetadata d;
    d.domain = std::string(kRowTrackingDomain);
    d.configuration = fmt::format("{{\"rowIdHighWaterMark\":{}}}", next);
    out.high_water_mark_domain = std::move(d);
  }
  return out;
}

std::string NewMaterializedColumnName(std::string_view prefix) {
  return std::string(prefix) + RandomUuidV4();
}

void SetMaterializedColumnNames(const Protocol& protocol, const Metadata* previous,
                                const std::string& row_id_name,
                                const std::string& row_commit_version_name, Metadata* metadata) {
  if (!RowTrackingSupported(protocol)) return;
  auto set = [&](std::string_view key, const std::string& fresh) {
    const std::string k(key);
    if (previous) {
      auto it = previous->configuration.find(k);
      if (it != previous->configuration.end()) {
        metadata->configuration[k] = it->second;
        return;
      }
    }
    metadata->configuration.emplace(k, fresh);
  };
  set(kMaterializedRowIdColumnProperty, row_id_name);
  set(kMaterializedRowCommitVersionColumnProperty, row_commit_version_name);
}

}  // namespace deltacpp::internal
