#include <gtest/gtest.h>

#include <algorithm>

#include "deltacpp/error.h"
#include "protocol/table_features.h"

namespace deltacpp::internal {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& f) {
  return std::find(v.begin(), v.end(), f) != v.end();
}

Protocol Legacy(int r, int w) {
  Protocol p;
  p.min_reader_version = r;
  p.min_writer_version = w;
  return p;
}

TEST(TableFeatures, LegacyProtocolsImplyTheirFeatures) {
  auto plain = EffectiveFeatures(Legacy(1, 2));
  EXPECT_TRUE(Has(plain, "appendOnly"));
  EXPECT_TRUE(Has(plain, "invariants"));
  EXPECT_FALSE(Has(plain, "checkConstraints"));
  // Column mapping needs reader 2 as well as writer 5.
  auto identity = EffectiveFeatures(Legacy(1, 6));
  EXPECT_TRUE(Has(identity, "identityColumns"));
  EXPECT_TRUE(Has(identity, "generatedColumns"));
  EXPECT_FALSE(Has(identity, "columnMapping"));
  EXPECT_TRUE(Has(EffectiveFeatures(Legacy(2, 5)), "columnMapping"));
}

TEST(TableFeatures, ReaderChecksRefuseUnknownFeaturesAndVersions) {
  Protocol p = Legacy(3, 7);
  p.reader_features = std::vector<std::string>{"deletionVectors", "mystery"};
  p.writer_features = std::vector<std::string>{"deletionVectors", "mystery"};
  auto st = CheckReadSupported(p, "/t", 4);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kUnsupportedFeature));
  EXPECT_NE(st.message().find("mystery"), std::string::npos);
  EXPECT_TRUE(IsDeltaError(CheckReadSupported(Legacy(4, 7), "/t", 0),
                           DeltaErrorCode::kUnsupportedFeature));
  EXPECT_TRUE(CheckReadSupported(Legacy(2, 5), "/t", 0).ok());
}

}  // namespace
}  // namespace deltacpp::internal
