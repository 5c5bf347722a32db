#include <gtest/gtest.h>

#include <arrow/util/decimal.h>

#include <cmath>
#include <limits>

#include "expr/coerce.h"
#include "expr/scalar_compare.h"

namespace deltacpp::internal {
namespace {

bool SameType(const std::shared_ptr<arrow::DataType>& a, const std::shared_ptr<arrow::DataType>& b) {
  return a && b && a->Equals(*b);
}

TEST(CommonType, FollowsSparkWidening) {
  EXPECT_TRUE(SameType(CommonType(arrow::int32(), arrow::int64()), arrow::int64()));
  EXPECT_TRUE(SameType(CommonType(arrow::int8(), arrow::int16()), arrow::int16()));
  EXPECT_TRUE(SameType(CommonType(arrow::int64(), arrow::float32()), arrow::float32()));
  EXPECT_TRUE(SameType(CommonType(arrow::int32(), arrow::float64()), arrow::float64()));
  EXPECT_TRUE(SameType(CommonType(arrow::float32(), arrow::float64()), arrow::float64()));
  EXPECT_TRUE(SameType(CommonType(arrow::int32(), arrow::decimal128(5, 2)), arrow::decimal128(12, 2)));
  EXPECT_TRUE(SameType(CommonType(arrow::int64(), arrow::decimal128(3, 1)), arrow::decimal128(21, 1)));
  EXPECT_TRUE(SameType(CommonType(arrow::decimal128(10, 2), arrow::decimal128(5, 4)),
                       arrow::decimal128(12, 4)));
  EXPECT_TRUE(SameType(CommonType(arrow::decimal128(38, 0), arrow::decimal128(38, 10)),
                       arrow::decimal128(38, 0)));
  EXPECT_TRUE(SameType(CommonType(arrow::decimal128(10, 2), arrow::float64()), arrow::float64()));
  EXPECT_TRUE(SameType(CommonType(arrow::date32(), arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                       arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  EXPECT_TRUE(SameType(CommonType(arrow::timestamp(arrow::TimeUnit::MICRO),
                                  arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                       arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  EXPECT_TRUE(SameType(CommonType(arrow::null(), arrow::utf8()), arrow::utf8()));
  EXPECT_TRUE(SameType(CommonType(arrow::utf8(), arrow::large_utf8()), arrow::large_utf8()));
  EXPECT_EQ(CommonType(arrow::utf8(), arrow::int32()), nullptr);
  EXPECT_EQ(CommonType(arrow::boolean(), arrow::int32()), nullptr);
  EXPECT_EQ(CommonType(arrow::date32(), arrow::int32()), nullptr);
}

TEST(ConvertLiteral, OnlyExactConversionsSucceed) {
  auto i32 = [](int32_t v) { return std::make_shared<arrow::Int32Scalar>(v); };
  auto dec = [](int64_t unscaled, int32_t p, int32_t s) {
    return std::make_shared<arrow::Decimal128Scalar>(arrow::Decimal128(unscaled), arrow::decimal128(p, s));
  };
  auto ok = [](const arrow::Result<std::shared_ptr<arrow::Scalar>>& r, const arrow::Scalar& want) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE((*r)->Equals(want)) << (*r)->type->ToString() << " " << (*r)->ToString();
  };
  ok(ConvertLiteral(i32(5), arrow::int64()), arrow::Int64Scalar(5));
  ok(ConvertLiteral(i32(5), arrow::int8()), arrow::Int8Scalar(5));
  EXPECT_FALSE(ConvertLiteral(i32(300), arrow::int8()).ok());
  ok(ConvertLiteral(i32(5), arrow::decimal128(3, 2)), *dec(500, 3, 2));
  EXPECT_FALSE(ConvertLiteral(i32(50), arrow::decimal128(3, 2)).ok());
  ok(ConvertLiteral(dec(150, 3, 2), arrow::decimal128(5, 1)), *dec(15, 5, 1));
  EXPECT_FALSE(ConvertLiteral(dec(155, 3, 2), arrow::decimal128(5, 1)).ok());
  ok(ConvertLiteral(dec(200, 3, 2), arrow::int32()), arrow::Int32Scalar(2));
  EXPECT_FALSE(ConvertLiteral(dec(250, 3, 2), arrow::int32()).ok());
  ok(ConvertLiteral(std::make_shared<arrow::DoubleScalar>(4.0), arrow::int16()), arrow::Int16Scalar(4));
  EXPECT_FALSE(ConvertLiteral(std::make_shared<arrow::DoubleScalar>(4.5), arrow::int16()).ok());
  EXPECT_FALSE(ConvertLiteral(std::make_shared<arrow::DoubleScalar>(0.1), arrow::float32()).ok());
  EXPECT_FALSE(ConvertLiteral(std::make_shared<arrow::DoubleScalar>(0.5), arrow::decimal128(3, 1)).ok());
  EXPECT_FALSE(ConvertLiteral(std::make_shared<arrow::Int32Scalar>(16777217), arrow::float32()).ok());
  ok(ConvertLiteral(std::make_shared<arrow::StringScalar>("2021-01-01"), arrow::date32()),
     arrow::Date32Scalar(18628));
  EXPECT_FALSE(ConvertLiteral(std::make_shared<arrow::StringScalar>("true"), arrow::boolean()).ok());
  ok(ConvertLiteral(std::make_shared<arrow::Date32Scalar>(1), arrow::timestamp(arrow::TimeUnit::MILLI)),
     arrow::TimestampScalar(86400000, arrow::timestamp(arrow::TimeUnit::MILLI)));
  EXPECT_FALSE(ConvertLiteral(std::make_shared<arrow::TimestampScalar>(
                                  1500, arrow::timestamp(arrow::TimeUnit::MICRO)),
                              arrow::timestamp(arrow::TimeUnit::MILLI))
                   .ok());
  auto null_int = ConvertLiteral(std::make_shared<arrow::NullScalar>(), arrow::int32());
  ASSERT_TRUE(null_int.ok());
  EXPECT_FALSE((*null_int)->is_valid);
  EXPECT_TRUE((*null_int)->type->Equals(*arrow::int32()));
}

TEST(ScalarFromText, NumbersAndTemporals) {
  auto parse = [](std::string_view text, std::shared_ptr<arrow::DataType> type) {
    return ScalarFromText(text, std::move(type));
  };
  EXPECT_TRUE((*parse("-12", arrow::int32()))->Equals(arrow::Int32Scalar(-12)));
  EXPECT_TRUE((*parse("5.0", arrow::int64()))->Equals(arrow::Int64Scalar(5)));
  EXPECT_FALSE(parse("5.5", arrow::int64()).ok());
  EXPECT_FALSE(parse("99999999999", arrow::int32()).ok());
  EXPECT_TRUE((*parse("1.5E+3", arrow::decimal128(10, 2)))
                  ->Equals(arrow::Decimal128Scalar(arrow::Decimal128(150000), arrow::decimal128(10, 2))));
  EXPECT_TRUE((*parse("2.5", arrow::float64()))->Equals(arrow::DoubleScalar(2.5)));
  EXPECT_TRUE((*parse("TRUE", arrow::boolean()))->Equals(arrow::BooleanScalar(true)));
  EXPECT_TRUE((*parse("2021-01-01T00:00:00.000+01:00", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")))
                  ->Equals(arrow::TimestampScalar(1609455600000000,
                                                  arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))));
  EXPECT_FALSE(parse("2021-01-01T00:00:00Z", arrow::timestamp(arrow::TimeUnit::MICRO)).ok());
  EXPECT_TRUE((*parse("2021-01-01T00:00:00.001", arrow::timestamp(arrow::TimeUnit::NANO)))
                  ->Equals(arrow::TimestampScalar(1609459200001000000,
                                                  arrow::timestamp(arrow::TimeUnit::NANO))));
}

TEST(CompareScalars, OrdersLikeSql) {
  EXPECT_EQ(CompareScalars(arrow::Int32Scalar(1), arrow::Int32Scalar(2)), -1);
  EXPECT_EQ(CompareScalars(arrow::StringScalar("b"), arrow::StringScalar("ab")), 1);
  EXPECT_EQ(CompareScalars(arrow::StringScalar("ab"), arrow::StringScalar("ab")), 0);
  // Bytes compare unsigned: 'é' (0xC3 0xA9) sorts after 'z'.
  EXPECT_EQ(CompareScalars(arrow::StringScalar("\xc3\xa9"), arrow::StringScalar("z")), 1);
  EXPECT_EQ(CompareScalars(arrow::StringScalar("a"), arrow::StringScalar("ab")), -1);
  EXPECT_EQ(CompareScalars(arrow::BooleanScalar(false), arrow::BooleanScalar(true)), -1);
  EXPECT_EQ(CompareScalars(arrow::Decimal128Scalar(arrow::Decimal128(-5), arrow::decimal128(3, 1)),
                           arrow::Decimal128Scalar(arrow::Decimal128(3), arrow::decimal128(3, 1))),
            -1);
  // Spark's floating-point order: NaN equals NaN and is above everything, even +Infinity.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(CompareScalars(arrow::DoubleScalar(nan), arrow::DoubleScalar(1)), 1);
  EXPECT_EQ(CompareScalars(arrow::DoubleScalar(inf), arrow::DoubleScalar(nan)), -1);
  EXPECT_EQ(CompareScalars(arrow::DoubleScalar(nan), arrow::DoubleScalar(-nan)), 0);
  EXPECT_EQ(CompareScalars(arrow::FloatScalar(-0.0f), arrow::FloatScalar(0.0f)), 0);
  EXPECT_EQ(CompareScalars(arrow::FloatScalar(std::nanf("")), arrow::FloatScalar(-1.0f)), 1);
  EXPECT_EQ(CompareScalars(arrow::Int32Scalar(1), arrow::Int64Scalar(1)), std::nullopt);
  EXPECT_EQ(CompareScalars(*arrow::MakeNullScalar(arrow::int32()), arrow::Int32Scalar(1)),
            std::nullopt);
}

}  // namespace
}  // namespace deltacpp::internal
