#include <gtest/gtest.h>

#include <arrow/util/decimal.h>
#include <arrow/util/key_value_metadata.h>

#include <cmath>
#include <limits>

#include "deltacpp/error.h"
#include "expr/file_stats.h"

namespace deltacpp::internal {
namespace {

std::shared_ptr<arrow::Field> Mapped(std::string name, std::shared_ptr<arrow::DataType> type,
                                     std::string physical) {
  return arrow::field(std::move(name), std::move(type), true,
                      arrow::key_value_metadata({"delta.columnMapping.physicalName"},
                                                {"\"" + physical + "\""}));
}

std::shared_ptr<arrow::Schema> StatsSchema() {
  auto info = arrow::struct_({Mapped("city", arrow::utf8(), "col-city"),
                              arrow::field("zip", arrow::int32())});
  return arrow::schema({
      arrow::field("id", arrow::int64()),
      arrow::field("name", arrow::utf8()),
      arrow::field("price", arrow::decimal128(10, 2)),
      arrow::field("big", arrow::decimal128(38, 0)),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("d", arrow::date32()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("ratio", arrow::float64()),
      arrow::field("small", arrow::int16()),
      Mapped("info", info, "col-info"),
      Mapped("mapped", arrow::int32(), "col-5f3a"),
      arrow::field("tags", arrow::list(arrow::utf8())),
  });
}

FileStats MustParse(const std::string& json) {
  auto result = ParseStatsJson(json, *StatsSchema());
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : FileStats{};
}

void ExpectScalar(const std::shared_ptr<arrow::Scalar>& actual, const arrow::Scalar& expected) {
  ASSERT_NE(actual, nullptr) << "missing, want " << expected.ToString();
  EXPECT_TRUE(actual->Equals(expected))
      << "got " << actual->type->ToString() << " " << actual->ToString() << ", want "
      << expected.type->ToString() << " " << expected.ToString();
}

const auto kUtc = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
const auto kNtz = arrow::timestamp(arrow::TimeUnit::MICRO);

TEST(ParseStatsJson, SparkWritesNaNAndInfinitiesAsStrings) {
  // As delta-spark records a file holding -2.5 and NaN (Spark orders NaN above everything).
  auto stats = MustParse(
      R"({"numRecords":2,"minValues":{"ratio":-2.5},"maxValues":{"ratio":"NaN"},)"
      R"("nullCount":{"ratio":0}})");
  ExpectScalar(stats.columns["ratio"].min, arrow::DoubleScalar(-2.5));
  ASSERT_NE(stats.columns["ratio"].max, nullptr);
  ASSERT_EQ(stats.columns["ratio"].max->type->id(), arrow::Type::DOUBLE);
  EXPECT_TRUE(std::isnan(static_cast<const arrow::DoubleScalar&>(*stats.columns["ratio"].max).value));
  auto infinite = MustParse(R"({"minValues":{"ratio":"-Infinity"},"maxValues":{"ratio":"Infinity"}})");
  ExpectScalar(infinite.columns["ratio"].min,
               arrow::DoubleScalar(-std::numeric_limits<double>::infinity()));
  ExpectScalar(infinite.columns["ratio"].max,
               arrow::DoubleScalar(std::numeric_limits<double>::infinity()));
}

TEST(ParseStatsJson, TypedValuesKeyedByPhysicalPath) {
  auto stats = MustParse(R"({
    "numRecords": 3,
    "minValues": {"id": 1, "name": "a", "price": 1.5, "big": 12345678901234567890123456789012345678,
                  "ts": "2021-01-01T10:00:00.123Z", "ntz": "2021-01-01T10:00:00.123",
                  "d": "2021-01-01", "flag": false, "ratio": -0.5, "small": -7,
                  "col-info": {"col-city": "Berlin", "zip": 10115}, "col-5f3a": 7},
    "maxValues": {"id": 100, "name": "zz", "price": 99.99, "big": -1,
                  "ts": "2021-01-02T10:00:00.123+01:00", "ntz": "2021-01-02T00:00:00.000",
                  "d": "2021-12-31", "flag": true, "ratio": 1e3, "small": 300,
                  "col-info": {"col-city": "Paris", "zip": 75000}, "col-5f3a": 9},
    "nullCount": {"id": 0, "name": 1, "ts": 0, "col-info": {"col-city": 2, "zip": 0},
                  "col-5f3a": 1, "tags": 3},
    "tightBounds": true
  })");
  EXPECT_EQ(stats.num_records, 3);
  EXPECT_EQ(stats.tight_bounds, true);

  ExpectScalar(stats.columns["id"].min, arrow::Int64Scalar(1));
  ExpectScalar(stats.columns["id"].max, arrow::Int64Scalar(100));
  EXPECT_EQ(stats.columns["id"].null_count, 0);

  ExpectScalar(stats.columns["name"].min, arrow::StringScalar("a"));
  ExpectScalar(stats.columns["name"].max, arrow::StringScalar("zz"));
  EXPECT_EQ(stats.columns["name"].null_count, 1);

  ExpectScalar(stats.columns["price"].min,
               arrow::Decimal128Scalar(arrow::Decimal128(150), arrow::decimal128(10, 2)));
  ExpectScalar(stats.columns["price"].max,
               arrow::Decimal128Scalar(arrow::Decimal128(9999), arrow::decimal128(10, 2)));
  ExpectScalar(stats.columns["big"].min,
               arrow::Decimal128Scalar(arrow::Decimal128("12345678901234567890123456789012345678"),
                                       arrow::decimal128(38, 0)));
  ExpectScalar(stats.columns["big"].max,
               arrow::Decimal128Scalar(arrow::Decimal128(-1), arrow::decimal128(38, 0)));

  // 2021-01-01T10:00:00.123Z and 2021-01-02T09:00:00.123Z in microseconds.
  ExpectScalar(stats.columns["ts"].min, arrow::TimestampScalar(1609495200123000, kUtc));
  ExpectScalar(stats.columns["ts"].max, arrow::TimestampScalar(1609578000123000, kUtc));
  ExpectScalar(stats.columns["ntz"].min, arrow::TimestampScalar(1609495200123000, kNtz));
  ExpectScalar(stats.columns["ntz"].max, arrow::TimestampScalar(1609545600000000, kNtz));

  ExpectScalar(stats.columns["d"].min, arrow::Date32Scalar(18628));
  ExpectScalar(stats.columns["d"].max, arrow::Date32Scalar(18992));
  ExpectScalar(stats.columns["flag"].min, arrow::BooleanScalar(false));
  ExpectScalar(stats.columns["flag"].max, arrow::BooleanScalar(true));
  ExpectScalar(stats.columns["ratio"].min, arrow::DoubleScalar(-0.5));
  ExpectScalar(stats.columns["ratio"].max, arrow::DoubleScalar(1000.0));
  ExpectScalar(stats.columns["small"].min, arrow::Int16Scalar(-7));
  ExpectScalar(stats.columns["small"].max, arrow::Int16Scalar(300));

  ExpectScalar(stats.columns["col-info.col-city"].min, arrow::StringScalar("Berlin"));
  ExpectScalar(stats.columns["col-info.col-city"].max, arrow::StringScalar("Paris"));
  EXPECT_EQ(stats.columns["col-info.col-city"].null_count, 2);
  ExpectScalar(stats.columns["col-info.zip"].min, arrow::Int32Scalar(10115));
  EXPECT_EQ(stats.columns["col-info.zip"].null_count, 0);

  ExpectScalar(stats.columns["col-5f3a"].min, arrow::Int32Scalar(7));
  EXPECT_EQ(stats.columns["col-5f3a"].null_count, 1);
  EXPECT_EQ(stats.columns.count("mapped"), 0u) << "statistics are keyed by physical name";

  EXPECT_EQ(stats.columns["tags"].null_count, 3);
  EXPECT_EQ(stats.columns["tags"].min, nullptr);
}

TEST(ParseStatsJson, TimestampZoneForms) {
  auto stats = MustParse(R"({"minValues": {"ts": "2021-01-01T10:00:00.123+00:00"},
                             "maxValues": {"ts": "2021-01-01T12:00:00.5+02:00"}})");
  ExpectScalar(stats.columns["ts"].min, arrow::TimestampScalar(1609495200123000, kUtc));
  ExpectScalar(stats.columns["ts"].max, arrow::TimestampScalar(1609495200500000, kUtc));
}

TEST(ParseStatsJson, UnknownColumnsAndUnconvertibleValuesAreLeftOut) {
  auto stats = MustParse(R"({
    "numRecords": 2,
    "minValues": {"id": "abc", "d": "not-a-date", "ts": 12, "ntz": "2021-01-01T00:00:00Z",
                  "name": 5, "flag": "yes", "small": 70000, "price": 1.234,
                  "nope": 1, "col-info": 5, "mapped": 3, "ratio": null},
    "maxValues": {"id": 1.5, "name": "ok", "col-info": {"nope": 1}},
    "nullCount": {"id": "x", "name": -1, "d": 2}
  })");
  EXPECT_EQ(stats.num_records, 2);
  EXPECT_EQ(stats.tight_bounds, std::nullopt);
  EXPECT_EQ(stats.columns.count("id"), 0u);
  EXPECT_EQ(stats.columns.count("ts"), 0u);
  EXPECT_EQ(stats.columns.count("ntz"), 0u);
  EXPECT_EQ(stats.columns.count("flag"), 0u);
  EXPECT_EQ(stats.columns.count("small"), 0u);
  EXPECT_EQ(stats.columns.count("price"), 0u);
  EXPECT_EQ(stats.columns.count("nope"), 0u);
  EXPECT_EQ(stats.columns.count("col-5f3a"), 0u);
  EXPECT_EQ(stats.columns.count("ratio"), 0u);
  EXPECT_EQ(stats.columns.count("col-info.col-city"), 0u);
  ASSERT_EQ(stats.columns.count("name"), 1u);
  EXPECT_EQ(stats.columns["name"].min, nullptr);
  ExpectScalar(stats.columns["name"].max, arrow::StringScalar("ok"));
  EXPECT_EQ(stats.columns["name"].null_count, std::nullopt);
  ASSERT_EQ(stats.columns.count("d"), 1u);
  EXPECT_EQ(stats.columns["d"].min, nullptr);
  EXPECT_EQ(stats.columns["d"].null_count, 2);
}

TEST(ParseStatsJson, MissingPiecesAreUnknown) {
  auto empty = MustParse("{}");
  EXPECT_EQ(empty.num_records, std::nullopt);
  EXPECT_TRUE(empty.columns.empty());
  auto only_count = MustParse(R"({"numRecords": 10, "extra": {"a": [1, 2, {"b": null}]}})");
  EXPECT_EQ(only_count.num_records, 10);
  EXPECT_TRUE(only_count.columns.empty());
  auto bad_count = MustParse(R"({"numRecords": "ten", "tightBounds": "yes"})");
  EXPECT_EQ(bad_count.num_records, std::nullopt);
  EXPECT_EQ(bad_count.tight_bounds, std::nullopt);
}

TEST(ParseStatsJson, MalformedJsonIsAnError) {
  for (const char* json : {"", "not json", "{\"numRecords\":", "{\"minValues\":{\"id\":1,}}",
                           "[1, 2]", "{\"numRecords\": 1} trailing", "{\"a\": tru}"}) {
    auto result = ParseStatsJson(json, *StatsSchema());
    EXPECT_FALSE(result.ok()) << "accepted: " << json;
    if (!result.ok()) {
      EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kCorruptLog))
          << result.status().ToString();
    }
  }
}

}  // namespace
}  // namespace deltacpp::internal
