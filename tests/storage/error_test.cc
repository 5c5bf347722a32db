#include <gtest/gtest.h>

#include "deltacpp/error.h"

namespace deltacpp {

TEST(DeltaError, CarriesTypedCodeThatCallersCanMatch) {
  auto st = DeltaError(DeltaErrorCode::kVersionExists, "table /t: version 3 exists");
  EXPECT_TRUE(st.IsAlreadyExists());
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kVersionExists));
  EXPECT_FALSE(IsDeltaError(st, DeltaErrorCode::kCorruptLog));
  EXPECT_FALSE(GetDeltaErrorCode(arrow::Status::IOError("plain")).has_value());
  EXPECT_NE(st.ToString().find("version 3 exists"), std::string::npos);
}

}  // namespace deltacpp
