#include "protocol/table_features.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "deltacpp/error.h"

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
    if (p.min_writer_version >= 5) add("columnMapping");
    if (p.min_writer_version >= 6) add("identityColumns");
  }
  if (p.min_reader_version == 2) add("columnMapping");
  return out;
}

}  // namespace deltacpp::internal
