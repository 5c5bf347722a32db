#include <gtest/gtest.h>

#include "util/temporal.h"

namespace deltacpp::internal {
namespace {

TEST(Temporal, DatesRoundTrip) {
  EXPECT_EQ(ParseDate("1970-01-01"), 0);
  EXPECT_EQ(ParseDate("2021-3-4"), 18690);
  EXPECT_EQ(ParseDate(" 2000-02-29 "), 11016);
  EXPECT_EQ(ParseDate("1900-02-29"), std::nullopt);
  EXPECT_EQ(ParseDate("2021-04-31"), std::nullopt);
  EXPECT_EQ(ParseDate("2021-01-01T00:00"), std::nullopt);
  EXPECT_EQ(ParseDate("21-01-01"), std::nullopt);
  EXPECT_EQ(FormatDate(18690), "2021-03-04");
  EXPECT_EQ(FormatDate(-1), "1969-12-31");
  EXPECT_EQ(FormatDate(11016), "2000-02-29");
}

TEST(Temporal, TimestampsAndZones) {
  auto ts = ParseTimestamp("2021-01-01 10:00:00.123456");
  ASSERT_TRUE(ts.has_value());
  EXPECT_EQ(ts->micros, 1609495200123456);
  EXPECT_FALSE(ts->has_zone);
  EXPECT_EQ(ParseTimestamp("2021-01-01T10:00:00.1234567Z")->micros, 1609495200123456);
  EXPECT_EQ(ParseTimestamp("2021-01-01T10:00")->micros, 1609495200000000);
  EXPECT_EQ(ParseTimestamp("2021-01-01 10:00:00 UTC")->micros, 1609495200000000);
  EXPECT_EQ(ParseTimestamp("2021-01-01 10:00:00+0200")->micros, 1609488000000000);
  EXPECT_EQ(ParseTimestamp("2021-01-01 10:00:00GMT+02:00")->micros, 1609488000000000);
  EXPECT_TRUE(ParseTimestamp("2021-01-01 10:00:00-05:30")->has_zone);
  EXPECT_EQ(ParseTimestamp("2021-01-01 24:00:00"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2021-01-01 10:00:00+19:00"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2021-01-01 10:00:00 Europe/Paris"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2021-01-01 10:00:00."), std::nullopt);
  EXPECT_EQ(FormatTimestampMicros(1609495200123456), "2021-01-01 10:00:00.123456");
  EXPECT_EQ(FormatTimestampMicros(1609495200000000), "2021-01-01 10:00:00");
  EXPECT_EQ(FormatTimestampMicros(-1), "1969-12-31 23:59:59.999999");
}

}  // namespace
}  // namespace deltacpp::internal
