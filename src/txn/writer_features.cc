#include "txn/writer_features.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <optional>

#include "deltacpp/error.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"

namespace deltacpp::internal {

namespace {

// Features whose writer duties deltacpp fulfils (invariants, checkConstraints and
// generatedColumns only while no column or property uses them, or when the caller enforces
// them; identityColumns, not listed here, only when the caller enforces it).
constexpr std::array<std::string_view, 16> kWriterFeatures = {
    "appendOnly",        "invariants",          "checkConstraints", "changeDataFeed",
    "generatedColumns",  "columnMapping",       "timestampNtz",     "deletionVectors",
    "domainMetadata",    "v2Checkpoint",        "vacuumProtocolCheck", "inCommitTimestamp",
    "typeWidening",      "typeWidening-preview", "rowTracking",      "clustering",
};

bool Listed(const Protocol& p, std::string_view feature) {
  auto in = [&](const std::optional<std::vector<std::string>>& list) {
    return list && std::find(list->begin(), list->end(), feature) != list->end();
  };
  return in(p.reader_features) || in(p.writer_features);
}

// The dotted path of the first field (nested ones included) whose Delta metadata has a key
// accepted by `match`.
template <typename Match>
std::optional<std::string> FindFieldWithMetadata(const arrow::FieldVector& fields,
                                                 const std::string& prefix, const Match& match) {
  for (const auto& f : fields) {
    std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->metadata()) {
      for (const auto& key : f->metadata()->keys()) {
        if (match(key)) return path;
      }
    }
    if (auto found = FindFieldWithMetadata(f->type()->fields(), path, match)) return found;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& RowLevelWriterFeatures() {
  static const std::vector<std::string> features = {"invariants", "checkConstraints",
                                                    "generatedColumns", "identityColumns"};
  return features;
}

bool IsSupportedWriterFeature(std::string_view feature) {
  return std::find(kWriterFeatures.begin(), kWriterFeatures.end(), feature) !=
         kWriterFeatures.end();
}

arrow::Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata,
                                  const std::string& table_root, int64_t version,
                                  const std::vector<std::string>& enforced_by_caller) {
  auto enforced = [&](std::string_view f) {
    return std::find(enforced_by_caller.begin(), enforced_by_caller.end(), f) !=
           enforced_by_caller.end();
  };
  auto unsupported = [&](const std::string& what) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      fmt::format("table {} version {}: cannot write: {}", table_root, version,
                                  what));
  };
  if (protocol.min_writer_version < 1 || protocol.min_writer_version > 7) {
    return unsupported(fmt::format("unsupported Delta protocol writer version {} (deltacpp "
                                   "writes versions 1 to 7)",
                                   protocol.min_writer_version));
  }
  if (protocol.min_reader_version < 1 || protocol.min_reader_version > 3) {
    return unsupported(fmt::format("unsupported Delta protocol reader version {} (deltacpp "
                                   "reads versions 1 to 3)",
                                   protocol.min_reader_version));
  }
  auto schema = SchemaFromDeltaJson(metadata.schema_string);
  if (!schema.ok()) {
    return DeltaError(GetDeltaErrorCode(schema.status()).value_or(DeltaErrorCode::kCorruptLog),
                      fmt::format("table {} version {}: schemaString: {}", table_root, version,
                                  schema.status().message()));
  }
  const arrow::FieldVector& fields = (*schema)->fields();
  const std::vector<std::string> features = EffectiveFeatures(protocol);
  auto has = [&](std::string_view f) {
    return std::find(features.begin(), features.end(), f) != features.end();
  };
  for (const auto& f : features) {
    if (IsSupportedWriterFeature(f)) continue;
    // Writer version 6 implies identity columns; they only need support once a column uses them.
    if (f == "identityColumns" && (!Listed(protocol, f) || enforced(f))) continue;
    bool reader_listed = protocol.reader_features &&
                         std::find(protocol.reader_features->begin(),
                                   protocol.reader_features->end(), f) !=
                             protocol.reader_features->end();
    return unsupported(fmt::format("unsupported {} feature '{}'",
                                   reader_listed ? "reader" : "writer", f));
  }
  // Row ids are tracked through the delta.rowTracking domain.
  if (has("rowTracking") && !has("domainMetadata")) {
    return unsupported("feature 'rowTracking' is listed without 'domainMetadata', which it "
                       "requires");
  }
  auto identity = FindFieldWithMetadata(fields, "", [](const std::string& key) {
    return key.rfind("delta.identity.", 0) == 0;
  });
  if (has("identityColumns") && identity && !enforced("identityColumns")) {
    return unsupported(fmt::format("feature 'identityColumns' is in use (column '{}' is an "
                                   "identity column) and deltacpp does not generate identity "
                                   "values",
                                   *identity));
  }
  if (has("invariants") && !enforced("invariants")) {
    auto col = FindFieldWithMetadata(
        fields, "", [](const std::string& key) { return key == "delta.invariants"; });
    if (col) {
      return unsupported(fmt::format("feature 'invariants' is in use (column '{}' has "
                                     "delta.invariants) and deltacpp does not enforce invariants",
                                     *col));
    }
  }
  if (has("checkConstraints") && !enforced("checkConstraints")) {
    for (const auto& [key, value] : metadata.configuration) {
      if (key.rfind("delta.constraints.", 0) == 0) {
        return unsupported(fmt::format("feature 'checkConstraints' is in use (table property "
                                       "'{}') and deltacpp does not enforce CHECK constraints",
                                       key));
      }
    }
  }
  if (has("generatedColumns") && !enforced("generatedColumns")) {
    auto col = FindFieldWithMetadata(
        fields, "", [](const std::string& key) { return key == "delta.generationExpression"; });
    if (col) {
      return unsupported(fmt::format("feature 'generatedColumns' is in use (column '{}' has "
                                     "delta.generationExpression) and deltacpp does not compute "
                                     "generated columns",
                                     *col));
    }
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
