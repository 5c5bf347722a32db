#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "deltacpp/error.h"
#include "protocol/partition_values.h"
#include "protocol/schema_json.h"
#include "support/temp_dir.h"

namespace deltacpp::internal {
namespace {

std::shared_ptr<arrow::Scalar> Parse(std::optional<std::string_view> raw, const std::shared_ptr<arrow::DataType>& type) {
  auto r = ParsePartitionValue(raw, type);
  EXPECT_TRUE(r.ok()) << (raw ? std::string(*raw) : "<absent>") << " as " << type->ToString() << ": " << r.status();
  return r.ok() ? *r : arrow::MakeNullScalar(type);
}

std::optional<std::string> Serialize(const arrow::Scalar& s) {
  auto r = SerializePartitionValue(s);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::nullopt;
}

void ExpectScalar(const arrow::Scalar& expected, const arrow::Scalar& actual) {
  EXPECT_TRUE(expected.Equals(actual)) << "expected " << expected.ToString() << " (" << expected.type->ToString()
                                       << ") got " << actual.ToString() << " (" << actual.type->ToString() << ")";
}

std::shared_ptr<arrow::DataType> Ts() { return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"); }
std::shared_ptr<arrow::DataType> Ntz() { return arrow::timestamp(arrow::TimeUnit::MICRO); }

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;

TEST(PartitionValues, NullAndEmptyAreNullForEveryType) {
  for (const auto& type : {arrow::utf8(), arrow::binary(), arrow::boolean(), arrow::int8(), arrow::int16(),
                           arrow::int32(), arrow::int64(), arrow::float32(), arrow::float64(),
                           arrow::decimal128(10, 2), arrow::date32(), Ts(), Ntz(), arrow::null()}) {
    for (std::optional<std::string_view> raw : {std::optional<std::string_view>(), std::optional<std::string_view>("")}) {
      auto s = Parse(raw, type);
      EXPECT_FALSE(s->is_valid) << type->ToString();
      EXPECT_TRUE(s->type->Equals(type)) << type->ToString();
      EXPECT_EQ(Serialize(*s), std::nullopt);
    }
  }
  // Text that merely looks like null is a value.
  ExpectScalar(arrow::StringScalar("null"), *Parse("null", arrow::utf8()));
  ExpectScalar(arrow::StringScalar(" "), *Parse(" ", arrow::utf8()));
}

TEST(PartitionValues, Strings) {
  for (const char* v : {"a", "a b", "a/b=c", "100%", "x:y", "\xE6\x97\xA5\xE6\x9C\xAC", "tab\there", "quote\"'",
                        "__HIVE_DEFAULT_PARTITION__"}) {
    auto s = Parse(v, arrow::utf8());
    ExpectScalar(arrow::StringScalar(v), *s);
    EXPECT_EQ(Serialize(*s), std::string(v));
  }
  auto large = Parse("abc", arrow::large_utf8());
  ExpectScalar(arrow::LargeStringScalar("abc"), *large);
}

TEST(PartitionValues, Binary) {
  std::string raw("\x01\x02\x00\xFF", 4);
  auto s = Parse(std::string_view(raw), arrow::binary());
  ExpectScalar(arrow::BinaryScalar(raw), *s);
  EXPECT_EQ(Serialize(*s), raw);
}

TEST(PartitionValues, Booleans) {
  ExpectScalar(arrow::BooleanScalar(true), *Parse("true", arrow::boolean()));
  ExpectScalar(arrow::BooleanScalar(false), *Parse("false", arrow::boolean()));
  ExpectScalar(arrow::BooleanScalar(true), *Parse("TRUE", arrow::boolean()));
  EXPECT_EQ(Serialize(arrow::BooleanScalar(true)), "true");
  EXPECT_EQ(Serialize(arrow::BooleanScalar(false)), "false");
}

TEST(PartitionValues, Integers) {
  ExpectScalar(arrow::Int8Scalar(-128), *Parse("-128", arrow::int8()));
  ExpectScalar(arrow::Int8Scalar(127), *Parse("127", arrow::int8()));
  ExpectScalar(arrow::Int16Scalar(-32768), *Parse("-32768", arrow::int16()));
  ExpectScalar(arrow::Int32Scalar(2147483647), *Parse("2147483647", arrow::int32()));
  ExpectScalar(arrow::Int64Scalar(std::numeric_limits<int64_t>::min()), *Parse("-9223372036854775808", arrow::int64()));
  EXPECT_EQ(Serialize(arrow::Int8Scalar(-5)), "-5");
  EXPECT_EQ(Serialize(arrow::Int16Scalar(300)), "300");
  EXPECT_EQ(Serialize(arrow::Int32Scalar(0)), "0");
  EXPECT_EQ(Serialize(arrow::Int64Scalar(9223372036854775807LL)), "9223372036854775807");
}

TEST(PartitionValues, FloatingPoint) {
  ExpectScalar(arrow::DoubleScalar(1.5e10), *Parse("1.5E10", arrow::float64()));
  ExpectScalar(arrow::DoubleScalar(-0.25), *Parse("-0.25", arrow::float64()));
  ExpectScalar(arrow::FloatScalar(1.1f), *Parse("1.1", arrow::float32()));
  ExpectScalar(arrow::DoubleScalar(std::numeric_limits<double>::infinity()), *Parse("Infinity", arrow::float64()));
  ExpectScalar(arrow::FloatScalar(-std::numeric_limits<float>::infinity()), *Parse("-Infinity", arrow::float32()));
  auto nan = Parse("NaN", arrow::float64());
  EXPECT_TRUE(std::isnan(static_cast<const arrow::DoubleScalar&>(*nan).value));

  // Java Double.toString / Float.toString forms.
  EXPECT_EQ(Serialize(arrow::DoubleScalar(1.0)), "1.0");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(0.0)), "0.0");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(-0.0)), "-0.0");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(100.0)), "100.0");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(123.456)), "123.456");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(-2.5)), "-2.5");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(0.001)), "0.001");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(0.0001)), "1.0E-4");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(9999999.0)), "9999999.0");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(1e7)), "1.0E7");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(1.5e10)), "1.5E10");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(1.7976931348623157e308)), "1.7976931348623157E308");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(4.9e-324)), "4.9E-324");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(std::numeric_limits<double>::quiet_NaN())), "NaN");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(std::numeric_limits<double>::infinity())), "Infinity");
  EXPECT_EQ(Serialize(arrow::DoubleScalar(-std::numeric_limits<double>::infinity())), "-Infinity");
  EXPECT_EQ(Serialize(arrow::FloatScalar(1.1f)), "1.1");
  EXPECT_EQ(Serialize(arrow::FloatScalar(0.1f)), "0.1");
  EXPECT_EQ(Serialize(arrow::FloatScalar(3.4028235e38f)), "3.4028235E38");
}

TEST(PartitionValues, Decimals) {
  auto d52 = arrow::decimal128(5, 2);
  ExpectScalar(arrow::Decimal128Scalar(arrow::Decimal128(123), d52), *Parse("1.23", d52));
  ExpectScalar(arrow::Decimal128Scalar(arrow::Decimal128(120), d52), *Parse("1.2", d52));
  ExpectScalar(arrow::Decimal128Scalar(arrow::Decimal128(-50), d52), *Parse("-0.5", d52));
  ExpectScalar(arrow::Decimal128Scalar(arrow::Decimal128(700), d52), *Parse("7", d52));
  ExpectScalar(arrow::Decimal128Scalar(arrow::Decimal128(123), d52), *Parse("1.230", d52));
  auto d3818 = arrow::decimal128(38, 18);
  ExpectScalar(arrow::Decimal128Scalar(arrow::Decimal128(1230000000000000000LL), d3818),
               *Parse("1.230000000000000000", d3818));

  EXPECT_EQ(Serialize(arrow::Decimal128Scalar(arrow::Decimal128(123), d52)), "1.23");
  EXPECT_EQ(Serialize(arrow::Decimal128Scalar(arrow::Decimal128(-5), d52)), "-0.05");
  EXPECT_EQ(Serialize(arrow::Decimal128Scalar(arrow::Decimal128(0), d52)), "0.00");
  EXPECT_EQ(Serialize(arrow::Decimal128Scalar(arrow::Decimal128(1230000000000000000LL), d3818)),
            "1.230000000000000000");
  EXPECT_EQ(Serialize(arrow::Decimal128Scalar(arrow::Decimal128(42), arrow::decimal128(10, 0))), "42");

  for (const char* bad : {"1.234", "12345", "abc", "1.2.3"}) {
    auto r = ParsePartitionValue(std::string_view(bad), d52);
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << bad << ": " << r.status();
  }
}

TEST(PartitionValues, Dates) {
  ExpectScalar(arrow::Date32Scalar(0), *Parse("1970-01-01", arrow::date32()));
  ExpectScalar(arrow::Date32Scalar(1), *Parse("1970-01-02", arrow::date32()));
  ExpectScalar(arrow::Date32Scalar(-1), *Parse("1969-12-31", arrow::date32()));
  ExpectScalar(arrow::Date32Scalar(11016), *Parse("2000-02-29", arrow::date32()));
  ExpectScalar(arrow::Date32Scalar(18628), *Parse("2021-01-01", arrow::date32()));
  ExpectScalar(arrow::Date32Scalar(-719162), *Parse("0001-01-01", arrow::date32()));
  EXPECT_EQ(Serialize(arrow::Date32Scalar(18628)), "2021-01-01");
  EXPECT_EQ(Serialize(arrow::Date32Scalar(-1)), "1969-12-31");
  EXPECT_EQ(Serialize(arrow::Date32Scalar(11016)), "2000-02-29");
  EXPECT_EQ(Serialize(arrow::Date32Scalar(-719162)), "0001-01-01");
  for (const char* bad : {"2021-02-29", "2021-13-01", "2021-1-1", "21-01-01", "2021/01/01", "2021-01-01x"}) {
    auto r = ParsePartitionValue(std::string_view(bad), arrow::date32());
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos);
    EXPECT_NE(r.status().message().find("date32"), std::string::npos);
  }
}

TEST(PartitionValues, Timestamps) {
  const int64_t jan1_2021 = 18628 * kMicrosPerDay;  // 2021-01-01 00:00:00 UTC
  for (const auto& type : {Ts(), Ntz()}) {
    ExpectScalar(arrow::TimestampScalar(jan1_2021, type), *Parse("2021-01-01 00:00:00", type));
    ExpectScalar(arrow::TimestampScalar(jan1_2021 + 123456, type), *Parse("2021-01-01 00:00:00.123456", type));
    ExpectScalar(arrow::TimestampScalar(jan1_2021 + 100000, type), *Parse("2021-01-01 00:00:00.1", type));
    ExpectScalar(arrow::TimestampScalar(jan1_2021 + (13 * 3600 + 14 * 60 + 15) * 1000000LL, type),
                 *Parse("2021-01-01 13:14:15", type));
    ExpectScalar(arrow::TimestampScalar(jan1_2021, type), *Parse("2021-01-01T00:00:00", type));
    ExpectScalar(arrow::TimestampScalar(-1, type), *Parse("1969-12-31 23:59:59.999999", type));
    ExpectScalar(arrow::TimestampScalar(jan1_2021, type), *Parse("2021-01-01", type));

    EXPECT_EQ(Serialize(arrow::TimestampScalar(jan1_2021, type)), "2021-01-01 00:00:00");
    EXPECT_EQ(Serialize(arrow::TimestampScalar(jan1_2021 + 123456, type)), "2021-01-01 00:00:00.123456");
    EXPECT_EQ(Serialize(arrow::TimestampScalar(jan1_2021 + 100000, type)), "2021-01-01 00:00:00.1");
    EXPECT_EQ(Serialize(arrow::TimestampScalar(jan1_2021 + 1, type)), "2021-01-01 00:00:00.000001");
    EXPECT_EQ(Serialize(arrow::TimestampScalar(-1, type)), "1969-12-31 23:59:59.999999");
  }
  // ISO-8601 UTC form and offsets (zoned timestamps only).
  ExpectScalar(arrow::TimestampScalar(123456, Ts()), *Parse("1970-01-01T00:00:00.123456Z", Ts()));
  ExpectScalar(arrow::TimestampScalar((19723 * 86400LL + 10 * 3600) * 1000000, Ts()),
               *Parse("2024-01-01T10:00:00.000000Z", Ts()));
  ExpectScalar(arrow::TimestampScalar(0, Ts()), *Parse("1970-01-01 01:00:00+01:00", Ts()));
  ExpectScalar(arrow::TimestampScalar(0, Ts()), *Parse("1969-12-31T19:00:00-05:00", Ts()));
  for (const char* zoned : {"1970-01-01T00:00:00Z", "1970-01-01 00:00:00+01:00"}) {
    auto r = ParsePartitionValue(std::string_view(zoned), Ntz());
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << zoned;
  }
  // Other units.
  auto ns = arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
  ExpectScalar(arrow::TimestampScalar(123456789, ns), *Parse("1970-01-01 00:00:00.123456789", ns));
  EXPECT_EQ(Serialize(arrow::TimestampScalar(1, ns)), "1970-01-01 00:00:00.000000001");
  auto ms = arrow::timestamp(arrow::TimeUnit::MILLI);
  ExpectScalar(arrow::TimestampScalar(1500, ms), *Parse("1970-01-01 00:00:01.5", ms));
  EXPECT_EQ(Serialize(arrow::TimestampScalar(-1, ms)), "1969-12-31 23:59:59.999");

  for (const char* bad : {"2021-01-01 25:00:00", "2021-01-01 00:00:00.", "2021-01-01 00:60:00",
                          "2021-01-01T00:00:00.1234567890Z", "yesterday", "2021-01-01 00:00:00Zjunk"}) {
    auto r = ParsePartitionValue(std::string_view(bad), Ts());
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << bad << ": " << r.status();
  }
}

TEST(PartitionValues, RejectsMalformedValues) {
  struct Case {
    const char* raw;
    std::shared_ptr<arrow::DataType> type;
  };
  std::vector<Case> cases = {
      {"yes", arrow::boolean()}, {"128", arrow::int8()}, {"1.5", arrow::int32()}, {"12abc", arrow::int64()},
      {" 1", arrow::int32()},    {"inf", arrow::float64()}, {"1.0x", arrow::float32()},
  };
  for (const auto& c : cases) {
    auto r = ParsePartitionValue(std::string_view(c.raw), c.type);
    ASSERT_FALSE(r.ok()) << c.raw;
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << c.raw << ": " << r.status();
    EXPECT_NE(r.status().message().find(std::string("'") + c.raw + "'"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(c.type->ToString()), std::string::npos) << r.status();
  }
  auto nested = ParsePartitionValue(std::string_view("x"), arrow::list(arrow::int32()));
  EXPECT_TRUE(IsDeltaError(nested.status(), DeltaErrorCode::kUnsupportedFeature));
}

TEST(PartitionValues, CanonicalTextRoundTrips) {
  struct Case {
    std::shared_ptr<arrow::DataType> type;
    std::string text;
  };
  std::vector<Case> cases = {
      {arrow::utf8(), "a=b/c d%"},
      {arrow::boolean(), "false"},
      {arrow::int8(), "-7"},
      {arrow::int16(), "1234"},
      {arrow::int32(), "-2147483648"},
      {arrow::int64(), "9007199254740993"},
      {arrow::float32(), "3.25"},
      {arrow::float64(), "1.0E-5"},
      {arrow::float64(), "-Infinity"},
      {arrow::float64(), "NaN"},
      {arrow::decimal128(38, 18), "-12345.000000000000000001"},
      {arrow::decimal128(10, 0), "9999999999"},
      {arrow::date32(), "1900-03-01"},
      {Ts(), "2038-01-19 03:14:07.5"},
      {Ntz(), "1999-12-31 23:59:59.999999"},
      {arrow::binary(), "raw"},
  };
  for (const auto& c : cases) {
    auto s = Parse(c.text, c.type);
    EXPECT_EQ(Serialize(*s), c.text) << c.type->ToString();
  }
}

// The partition values of Spark-written tables in the corpus parse with the table schema, and
// serialize back to the same text.
TEST(PartitionValues, CorpusPartitionValues) {
  namespace fs = std::filesystem;
  for (const char* table : {"delta-golden-data-reader-partition-values", "dat-partitioned_with_null",
                            "dat-multi_partitioned", "delta-golden-kernel-timestamp-partition-col-ISO8601",
                            "delta-rs-partition-type-primitives", "kernel-rs-timestamp-partitioned-table"}) {
    fs::path log = fs::path(deltacpp::testing::ConformanceDir()) / "tables" / table / "_delta_log";
    ASSERT_TRUE(fs::is_directory(log)) << log;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(log)) {
      if (e.path().extension() == ".json" && e.path().filename().string().size() == 25) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    simdjson::dom::parser parser;
    std::shared_ptr<arrow::Schema> schema;
    int checked = 0;
    for (const auto& file : files) {
      std::ifstream in(file);
      std::string line;
      while (std::getline(in, line)) {
        simdjson::dom::element doc;
        ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << file;
        std::string_view schema_string;
        if (doc["metaData"]["schemaString"].get_string().get(schema_string) == simdjson::SUCCESS) {
          auto parsed = SchemaFromDeltaJson(schema_string);
          ASSERT_TRUE(parsed.ok()) << parsed.status();
          schema = *parsed;
        }
        simdjson::dom::object values;
        if (doc["add"]["partitionValues"].get_object().get(values) != simdjson::SUCCESS) continue;
        ASSERT_NE(schema, nullptr);
        for (auto kv : values) {
          auto field = schema->GetFieldByName(std::string(kv.key));
          ASSERT_NE(field, nullptr) << kv.key;
          std::optional<std::string_view> raw;
          std::string_view text;
          if (kv.value.get_string().get(text) == simdjson::SUCCESS) raw = text;
          auto scalar = ParsePartitionValue(raw, field->type());
          ASSERT_TRUE(scalar.ok()) << table << " " << kv.key << ": " << scalar.status();
          EXPECT_EQ((*scalar)->is_valid, raw.has_value() && !raw->empty());
          if (std::string_view(table) == "delta-golden-data-reader-partition-values" && raw && !raw->empty()) {
            EXPECT_EQ(Serialize(**scalar), std::string(*raw)) << kv.key;
          }
          ++checked;
        }
      }
    }
    EXPECT_GT(checked, 0) << table;
  }
}

TEST(PartitionValues, CorpusTimestampValues) {
  // From delta-golden-data-reader-partition-values: "2021-09-08 11:11:11" (UTC here).
  ExpectScalar(arrow::TimestampScalar((18878 * 86400LL + 11 * 3600 + 11 * 60 + 11) * 1000000, Ts()),
               *Parse("2021-09-08 11:11:11", Ts()));
}

}  // namespace
}  // namespace deltacpp::internal
