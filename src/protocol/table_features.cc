#include "protocol/table_features.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "deltacpp/error.h"
#include "deltacpp/table_config.h"

namespace deltacpp::internal {

namespace {
// Reader features whose read-side duties deltacpp fulfils.
constexpr std::array<std::string_view, 9> kReaderFeatures = {
    "columnMapping", "deletionVectors",  "timestampNtz",        "v2Checkpoint",
    "vacuumProtocolCheck", "typeWidening", "typeWidening-preview", "variantType",
    "variantType-preview",
};
}  // namespace

bool IsSupportedReaderFeature(std::string_view feature) {
  return std::find(kReaderFeatures.begin(), kReaderFeatures.end(), feature) !=
         kReaderFeatures.end();
}

arrow::Status CheckReadSupported(const Protocol& protocol, const std::string& table_root,
                                 int64_t version) {
  if (protocol.min_reader_version > 3 || protocol.min_reader_version < 1) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      fmt::format("table {} version {}: unsupported Delta protocol reader version "
                                  "{} (deltacpp reads versions 1 to 3)",
                                  table_root, version, protocol.min_reader_version));
  }
  if (protocol.min_reader_version == 3 && protocol.reader_features) {
    for (const auto& f : *protocol.reader_features) {
      if (!IsSupportedReaderFeature(f)) {
        return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                          fmt::format("table {} version {}: unsupported reader feature '{}'",
                                      table_root, version, f));
      }
    }
  }
  return arrow::Status::OK();
}

std::vector<std::string> EffectiveFeatures(const Protocol& p) {
  std::vector<std::string> out;
  auto add = [&](const std::string& f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  if (p.reader_features) for (const auto& f : *p.reader_features) add(f);
  if (p.writer_features) for (const auto& f : *p.writer_features) add(f);
  if (p.min_writer_version < 7) {
    if (p.min_writer_version >= 2) { add("appendOnly"); add("invariants"); }
    if (p.min_writer_version >= 3) add("checkConstraints");
    if (p.min_writer_version >= 4) { add("changeDataFeed"); add("generatedColumns"); }
    // Legacy column mapping needs reader version 2 as well as writer version 5.
    if (p.min_writer_version >= 5 && p.min_reader_version >= 2) add("columnMapping");
    if (p.min_writer_version >= 6) add("identityColumns");
  }
  return out;
}

}  // namespace deltacpp::internal

#include <arrow/type.h>

namespace deltacpp::internal {

namespace {

struct FeatureInfo {
  std::string_view name;
  bool reader_writer;
  int legacy_reader;  ///< 0: no legacy version
  int legacy_writer;
};

// Every feature deltacpp knows by name (reading or writing support is checked elsewhere).
constexpr FeatureInfo kFeatures[] = {
    {"appendOnly", false, 1, 2},          {"invariants", false, 1, 2},
    {"checkConstraints", false, 1, 3},    {"changeDataFeed", false, 1, 4},
    {"generatedColumns", false, 1, 4},    {"columnMapping", true, 2, 5},
    {"identityColumns", false, 1, 6},     {"deletionVectors", true, 0, 0},
    {"timestampNtz", true, 0, 0},         {"domainMetadata", false, 0, 0},
    {"v2Checkpoint", true, 0, 0},         {"rowTracking", false, 0, 0},
    {"clustering", false, 0, 0},          {"vacuumProtocolCheck", true, 0, 0},
    {"inCommitTimestamp", false, 0, 0},   {"typeWidening", true, 0, 0},
    {"typeWidening-preview", true, 0, 0}, {"variantType", true, 0, 0},
    {"variantType-preview", true, 0, 0},  {"icebergCompatV1", false, 0, 0},
    {"icebergCompatV2", false, 0, 0},     {"allowColumnDefaults", false, 0, 0},
};

const FeatureInfo* FindFeature(std::string_view name) {
  for (const auto& f : kFeatures) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool HasFieldMetadata(const arrow::DataType& type, std::string_view key);

bool FieldHasMetadata(const arrow::Field& f, std::string_view key) {
  if (f.metadata() && f.metadata()->FindKey(std::string(key)) >= 0) return true;
  return HasFieldMetadata(*f.type(), key);
}

bool HasFieldMetadata(const arrow::DataType& type, std::string_view key) {
  for (const auto& child : type.fields()) {
    if (FieldHasMetadata(*child, key)) return true;
  }
  return false;
}

bool HasTimestampNtz(const arrow::DataType& type) {
  if (type.id() == arrow::Type::TIMESTAMP) {
    return static_cast<const arrow::TimestampType&>(type).timezone().empty();
  }
  for (const auto& child : type.fields()) {
    if (HasTimestampNtz(*child->type())) return true;
  }
  return false;
}

}  // namespace

bool IsReaderWriterFeature(std::string_view feature) {
  const FeatureInfo* f = FindFeature(feature);
  return f && f->reader_writer;
}

arrow::Result<Protocol> RequiredProtocol(const arrow::Schema& schema,
                                         const std::map<std::string, std::string>& conf,
                                         const std::set<std::string>& extra_features) {
  std::set<std::string> needed(extra_features.begin(), extra_features.end());
  for (const auto& [key, value] : conf) {
    if (key.starts_with("delta.constraints.")) needed.insert("checkConstraints");
  }
  const auto config = TableConfig::Parse(conf);
  if (config.append_only) needed.insert("appendOnly");
  if (config.change_data_feed) needed.insert("changeDataFeed");
  if (config.deletion_vectors) needed.insert("deletionVectors");
  if (config.in_commit_timestamps) needed.insert("inCommitTimestamp");
  if (config.type_widening) needed.insert("typeWidening");
  if (config.row_tracking) {
    needed.insert("rowTracking");
    needed.insert("domainMetadata");
  }
  if (config.checkpoint_policy == CheckpointPolicy::kV2) needed.insert("v2Checkpoint");
  if (config.column_mapping_mode != ColumnMappingMode::kNone) needed.insert("columnMapping");
  for (const auto& f : schema.fields()) {
    if (FieldHasMetadata(*f, "delta.generationExpression")) needed.insert("generatedColumns");
    if (FieldHasMetadata(*f, "delta.identity.start")) needed.insert("identityColumns");
    if (FieldHasMetadata(*f, "delta.invariants")) needed.insert("invariants");
    if (HasTimestampNtz(*f->type())) needed.insert("timestampNtz");
  }

  Protocol p;
  p.min_reader_version = 1;
  p.min_writer_version = 2;
  bool table_features = false;
  for (const auto& name : needed) {
    const FeatureInfo* f = FindFeature(name);
    if (!f) {
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("unknown table feature '{}'", name));
    }
    if (f->legacy_writer == 0) table_features = true;
  }
  if (!table_features) {
    for (const auto& name : needed) {
      const FeatureInfo* f = FindFeature(name);
      p.min_reader_version = std::max(p.min_reader_version, f->legacy_reader);
      p.min_writer_version = std::max(p.min_writer_version, f->legacy_writer);
    }
    return p;
  }
  p.min_writer_version = 7;
  p.writer_features = std::vector<std::string>(needed.begin(), needed.end());
  bool any_reader = false;
  for (const auto& name : needed) any_reader |= FindFeature(name)->reader_writer;
  if (any_reader) {
    p.min_reader_version = 3;
    std::vector<std::string> readers;
    for (const auto& name : needed) {
      if (FindFeature(name)->reader_writer) readers.push_back(name);
    }
    p.reader_features = readers;
  }
  return p;
}

Protocol MergeProtocols(const Protocol& base, const Protocol& needed) {
  auto base_features = EffectiveFeatures(base);
  auto needed_features = EffectiveFeatures(needed);
  bool missing = false;
  for (const auto& f : needed_features) {
    if (std::find(base_features.begin(), base_features.end(), f) == base_features.end()) {
      missing = true;
    }
  }
  if (!missing) return base;
  // Both legacy: take the larger versions.
  if (base.min_writer_version < 7 && needed.min_writer_version < 7) {
    Protocol p = base;
    p.min_reader_version = std::max(base.min_reader_version, needed.min_reader_version);
    p.min_writer_version = std::max(base.min_writer_version, needed.min_writer_version);
    return p;
  }
  // Table features: list everything either one supports.
  std::set<std::string> all(base_features.begin(), base_features.end());
  all.insert(needed_features.begin(), needed_features.end());
  Protocol p;
  p.min_writer_version = 7;
  p.writer_features = std::vector<std::string>(all.begin(), all.end());
  std::vector<std::string> readers;
  for (const auto& f : all) {
    if (IsReaderWriterFeature(f)) readers.push_back(f);
  }
  if (!readers.empty() || base.min_reader_version == 3) {
    p.min_reader_version = 3;
    p.reader_features = readers;
  } else {
    p.min_reader_version = std::max(base.min_reader_version, needed.min_reader_version);
    if (p.min_reader_version == 2) {
      // Reader version 2 only implies column mapping, which is listed above when needed.
      p.min_reader_version = 1;
    }
  }
  return p;
}

}  // namespace deltacpp::internal
