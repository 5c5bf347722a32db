#include <gtest/gtest.h>

#include <arrow/util/key_value_metadata.h>

#include <limits>

#include "expr/binder.h"
#include "expr/data_skipping.h"
#include "expr/parser.h"

namespace deltacpp::internal {
namespace {

const auto kUtc = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
const auto kNtz = arrow::timestamp(arrow::TimeUnit::MICRO);
// 2021-01-01 00:00:00 and 2021-01-01 10:00:00.123 (UTC / wall clock) in microseconds.
constexpr int64_t kJan1 = 1609459200000000;
constexpr int64_t kJan1At10_123 = 1609495200123000;

std::shared_ptr<arrow::Field> Mapped(std::string name, std::shared_ptr<arrow::DataType> type,
                                     std::string physical) {
  return arrow::field(std::move(name), std::move(type), true,
                      arrow::key_value_metadata({"delta.columnMapping.physicalName"},
                                                {"\"" + physical + "\""}));
}

std::shared_ptr<arrow::Schema> SkipSchema() {
  return arrow::schema({
      arrow::field("x", arrow::int64()),
      arrow::field("y", arrow::int32()),
      arrow::field("s", arrow::utf8()),
      arrow::field("ts", kUtc),
      arrow::field("ntz", kNtz),
      arrow::field("d", arrow::date32()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("f", arrow::float64()),
      arrow::field("p", arrow::utf8()),
      arrow::field("q", arrow::int32()),
      Mapped("n", arrow::struct_({Mapped("v", arrow::int32(), "col-v")}), "col-n"),
      Mapped("m", arrow::int64(), "col-m"),
  });
}

ColumnStats Range(std::shared_ptr<arrow::Scalar> min, std::shared_ptr<arrow::Scalar> max,
                  std::optional<int64_t> nulls) {
  return ColumnStats{std::move(min), std::move(max), nulls};
}
std::shared_ptr<arrow::Scalar> I64(int64_t v) { return std::make_shared<arrow::Int64Scalar>(v); }
std::shared_ptr<arrow::Scalar> I32(int32_t v) { return std::make_shared<arrow::Int32Scalar>(v); }
std::shared_ptr<arrow::Scalar> S(std::string v) {
  return std::make_shared<arrow::StringScalar>(std::move(v));
}
std::shared_ptr<arrow::Scalar> Ts(int64_t v, std::shared_ptr<arrow::DataType> type = kUtc) {
  return std::make_shared<arrow::TimestampScalar>(v, std::move(type));
}

// A file of 100 rows: x in [10, 20] without nulls, s in ["apple", "melon"], timestamps from
// 2021-01-01 00:00 to a (millisecond-truncated) maximum of 2021-01-01 10:00:00.123.
FileStats BaseStats() {
  FileStats stats;
  stats.num_records = 100;
  stats.columns["x"] = Range(I64(10), I64(20), 0);
  stats.columns["s"] = Range(S("apple"), S("melon"), 3);
  stats.columns["ts"] = Range(Ts(kJan1), Ts(kJan1At10_123), 0);
  stats.columns["ntz"] = Range(Ts(kJan1, kNtz), Ts(kJan1At10_123, kNtz), 0);
  stats.columns["d"] = Range(std::make_shared<arrow::Date32Scalar>(18628),   // 2021-01-01
                             std::make_shared<arrow::Date32Scalar>(18992),   // 2021-12-31
                             0);
  stats.columns["flag"] = Range(std::make_shared<arrow::BooleanScalar>(false),
                                std::make_shared<arrow::BooleanScalar>(false), 0);
  stats.columns["f"] = Range(std::make_shared<arrow::DoubleScalar>(0.5),
                             std::make_shared<arrow::DoubleScalar>(2.5), 0);
  stats.columns["col-n.col-v"] = Range(I32(1), I32(3), 0);
  stats.columns["col-m"] = Range(I64(100), I64(200), 0);
  return stats;
}

bool Skips(const std::string& sql, const FileStats& stats,
           const PartitionValuesView& partitions = {}) {
  auto parsed = ParseExpression(sql);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return false;
  auto bound = BindPredicate(*parsed, *SkipSchema());
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  if (!bound.ok()) return false;
  return CanSkipFile(*bound, stats, partitions);
}

bool Skips(const std::string& sql) { return Skips(sql, BaseStats()); }

TEST(DataSkipping, Equality) {
  EXPECT_TRUE(Skips("x = 5"));
  EXPECT_FALSE(Skips("x = 10"));
  EXPECT_FALSE(Skips("x = 15"));
  EXPECT_FALSE(Skips("x = 20"));
  EXPECT_TRUE(Skips("x = 21"));
  EXPECT_TRUE(Skips("5 = x"));
}

TEST(DataSkipping, RangeComparisons) {
  EXPECT_TRUE(Skips("x < 10"));
  EXPECT_FALSE(Skips("x < 11"));
  EXPECT_TRUE(Skips("x <= 9"));
  EXPECT_FALSE(Skips("x <= 10"));
  EXPECT_TRUE(Skips("x > 20"));
  EXPECT_FALSE(Skips("x > 19"));
  EXPECT_TRUE(Skips("x >= 21"));
  EXPECT_FALSE(Skips("x >= 20"));
  // Literal on the left.
  EXPECT_TRUE(Skips("10 > x"));
  EXPECT_FALSE(Skips("11 > x"));
  EXPECT_TRUE(Skips("20 < x"));
  EXPECT_TRUE(Skips("x BETWEEN 21 AND 30"));
  EXPECT_FALSE(Skips("x BETWEEN 0 AND 10"));
}

TEST(DataSkipping, NotEqualNeedsAllValuesEqual) {
  EXPECT_FALSE(Skips("x != 15"));
  FileStats constant = BaseStats();
  constant.columns["x"] = Range(I64(7), I64(7), 4);
  EXPECT_TRUE(Skips("x != 7", constant));  // NULL rows give NULL, not TRUE
  EXPECT_TRUE(Skips("NOT (x = 7)", constant));
  EXPECT_FALSE(Skips("x = 7", constant));
  EXPECT_FALSE(Skips("x != 8", constant));
}

TEST(DataSkipping, IsNullAndIsNotNull) {
  EXPECT_TRUE(Skips("x IS NULL"));  // nullCount 0
  EXPECT_FALSE(Skips("x IS NOT NULL"));
  FileStats some_null = BaseStats();
  some_null.columns["x"].null_count = 5;
  EXPECT_FALSE(Skips("x IS NULL", some_null));
  EXPECT_FALSE(Skips("x IS NOT NULL", some_null));
  FileStats all_null = BaseStats();
  all_null.columns["x"] = Range(nullptr, nullptr, 100);
  EXPECT_FALSE(Skips("x IS NULL", all_null));
  EXPECT_TRUE(Skips("x IS NOT NULL", all_null));
  EXPECT_TRUE(Skips("x = 15", all_null));
  EXPECT_TRUE(Skips("NOT (x IS NULL)", all_null));
  FileStats unknown_count = BaseStats();
  unknown_count.columns["x"].null_count.reset();
  EXPECT_FALSE(Skips("x IS NULL", unknown_count));
  EXPECT_FALSE(Skips("x IS NOT NULL", unknown_count));
  FileStats unknown_rows = all_null;
  unknown_rows.num_records.reset();
  EXPECT_FALSE(Skips("x IS NOT NULL", unknown_rows));
}

TEST(DataSkipping, InIsADisjunctionOfEqualities) {
  EXPECT_TRUE(Skips("x IN (1, 2, 30)"));
  EXPECT_FALSE(Skips("x IN (1, 15)"));
  EXPECT_TRUE(Skips("x IN (1, NULL)"));
  EXPECT_FALSE(Skips("x NOT IN (5, 6)"));
  // x NOT IN (15, NULL) is never TRUE: it is FALSE for 15 and NULL otherwise.
  EXPECT_TRUE(Skips("x NOT IN (15, NULL)"));
  FileStats constant = BaseStats();
  constant.columns["x"] = Range(I64(5), I64(5), 0);
  EXPECT_TRUE(Skips("x NOT IN (5, 6)", constant));
  EXPECT_FALSE(Skips("x NOT IN (6, 7)", constant));
}

TEST(DataSkipping, NotFlipsComparisons) {
  EXPECT_TRUE(Skips("NOT (x > 5)"));
  EXPECT_FALSE(Skips("NOT (x > 15)"));
  EXPECT_TRUE(Skips("NOT (x <= 20)"));
  EXPECT_FALSE(Skips("NOT (x <= 19)"));
  EXPECT_TRUE(Skips("NOT NOT (x = 5)"));
  EXPECT_TRUE(Skips("NOT (x BETWEEN 0 AND 30)"));
  EXPECT_FALSE(Skips("x NOT BETWEEN 12 AND 30"));
  // De Morgan: NOT (x < 10 OR x > 20) keeps, NOT (x >= 0 AND x <= 30) skips.
  EXPECT_FALSE(Skips("NOT (x < 10 OR x > 20)"));
  EXPECT_TRUE(Skips("NOT (x >= 0 AND x <= 30)"));
}

TEST(DataSkipping, AndOr) {
  EXPECT_TRUE(Skips("x = 5 AND s = 'banana'"));
  EXPECT_TRUE(Skips("s = 'banana' AND x = 5"));
  EXPECT_FALSE(Skips("x = 15 AND s = 'banana'"));
  EXPECT_TRUE(Skips("x = 5 OR x = 25"));
  EXPECT_FALSE(Skips("x = 5 OR x = 15"));
  EXPECT_FALSE(Skips("x = 5 OR y = 1"));  // no statistics for y
  EXPECT_TRUE(Skips("(x = 5 OR x = 25) AND y = 1"));
}

TEST(DataSkipping, MissingStatisticsKeepTheFile) {
  EXPECT_FALSE(Skips("y = 1"));
  EXPECT_FALSE(Skips("y IS NULL"));
  EXPECT_FALSE(Skips("NOT (y = 1)"));
  EXPECT_FALSE(Skips("x = 5", FileStats{}));
  FileStats max_only = BaseStats();
  max_only.columns["x"] = Range(nullptr, I64(20), std::nullopt);
  EXPECT_FALSE(Skips("x < 5", max_only));
  EXPECT_TRUE(Skips("x > 25", max_only));
}

TEST(DataSkipping, NotUnderstoodExpressionsKeepTheFile) {
  EXPECT_FALSE(Skips("x + 1 > 100"));
  EXPECT_FALSE(Skips("x = y"));
  EXPECT_FALSE(Skips("lower(s) = 'zzz'"));
  EXPECT_FALSE(Skips("NOT (x + 1 > 100)"));
}

TEST(DataSkipping, TimestampMaximumIsTruncatedToMilliseconds) {
  // The real maximum may be up to 2021-01-01 10:00:00.123999.
  EXPECT_FALSE(Skips("ts > TIMESTAMP '2021-01-01 10:00:00.123'"));
  EXPECT_FALSE(Skips("ts = TIMESTAMP '2021-01-01 10:00:00.123500'"));
  EXPECT_FALSE(Skips("ts >= TIMESTAMP '2021-01-01 10:00:00.123999'"));
  EXPECT_TRUE(Skips("ts > TIMESTAMP '2021-01-01 10:00:00.123999'"));
  EXPECT_TRUE(Skips("ts >= TIMESTAMP '2021-01-01 10:00:00.124'"));
  EXPECT_TRUE(Skips("ts = TIMESTAMP '2021-01-01 10:00:00.124'"));
  // The minimum is not widened.
  EXPECT_TRUE(Skips("ts < TIMESTAMP '2021-01-01 00:00:00'"));
  EXPECT_FALSE(Skips("ts <= TIMESTAMP '2021-01-01 00:00:00'"));
  // Same for timestamps without time zone.
  EXPECT_FALSE(Skips("ntz > TIMESTAMP_NTZ '2021-01-01 10:00:00.123'"));
  EXPECT_TRUE(Skips("ntz > TIMESTAMP_NTZ '2021-01-01 10:00:00.123999'"));
  EXPECT_FALSE(Skips("ntz = '2021-01-01 10:00:00.1235'"));
  EXPECT_TRUE(Skips("ntz = '2021-01-01 10:00:00.124'"));
}

TEST(DataSkipping, Strings) {
  EXPECT_FALSE(Skips("s = 'banana'"));
  EXPECT_TRUE(Skips("s < 'apple'"));
  EXPECT_FALSE(Skips("s <= 'apple'"));
  EXPECT_TRUE(Skips("s = 'aardvark'"));
  EXPECT_TRUE(Skips("s = 'zebra'"));
  EXPECT_TRUE(Skips("s > 'melon'"));
  EXPECT_FALSE(Skips("s >= 'melon'"));
  // Bounds may be truncated prefixes: equal bounds do not prove all values are equal.
  FileStats constant = BaseStats();
  constant.columns["s"] = Range(S("kiwi"), S("kiwi"), 0);
  EXPECT_FALSE(Skips("s != 'kiwi'", constant));
}

TEST(DataSkipping, DatesAndWidenedColumns) {
  EXPECT_TRUE(Skips("d > '2022-01-01'"));
  EXPECT_FALSE(Skips("d >= '2021-12-31'"));
  EXPECT_TRUE(Skips("d < TIMESTAMP '2021-01-01 00:00:00'"));
  EXPECT_FALSE(Skips("d < TIMESTAMP '2021-01-01 00:00:01'"));
  // x is widened to DECIMAL / DOUBLE for these literals; the bounds follow.
  EXPECT_TRUE(Skips("x > 20.5"));
  EXPECT_FALSE(Skips("x > 19.5"));
  EXPECT_TRUE(Skips("x < 9.99D"));
  EXPECT_FALSE(Skips("x = 10.0D"));
  EXPECT_TRUE(Skips("f < 0.5"));
  EXPECT_FALSE(Skips("f <= 0.5"));
  EXPECT_TRUE(Skips("f = 2.75"));
  // A NaN, which Spark orders above everything, may hide beyond a maximum that is not NaN.
  EXPECT_FALSE(Skips("f > 2.5"));
}

std::shared_ptr<arrow::Scalar> F64(double v) { return std::make_shared<arrow::DoubleScalar>(v); }
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(DataSkipping, NaNIsAboveEveryNumberAndEqualToItself) {
  // Parquet-style statistics leave NaN out: a NaN row may exist above the maximum of 2.5.
  FileStats parquet_style = BaseStats();
  for (const char* sql : {"f > 2.5", "f >= 3", "f = 'NaN'", "f <=> 'NaN'", "f IN (7, 'NaN')",
                          "f BETWEEN 3 AND 'NaN'", "f != 1.0", "f > 'Infinity'",
                          "NOT (f <= 2.5)"}) {
    EXPECT_FALSE(Skips(sql, parquet_style)) << sql;
  }
  for (const char* sql : {"f < 0.5", "f = 2.75", "f IN (3, 4)", "f < 'Infinity' AND f < 0",
                          "f IS NULL"}) {
    EXPECT_TRUE(Skips(sql, parquet_style)) << sql;
  }
  // Spark's statistics: the maximum of a column holding NaN is NaN; it bounds nothing else.
  FileStats spark_style = BaseStats();
  spark_style.columns["f"] = Range(F64(0.5), F64(kNaN), 0);
  for (const char* sql : {"f > 1e300", "f = 'NaN'", "f = 7", "f < 1", "f >= 'NaN'"}) {
    EXPECT_FALSE(Skips(sql, spark_style)) << sql;
  }
  EXPECT_TRUE(Skips("f < 0.5", spark_style));
  EXPECT_TRUE(Skips("f > 'NaN'", spark_style));  // nothing is above NaN
  // All NaN: Spark writes NaN for both bounds.
  spark_style.columns["f"] = Range(F64(kNaN), F64(kNaN), 0);
  EXPECT_FALSE(Skips("f = 'NaN'", spark_style));
  EXPECT_FALSE(Skips("f > 0", spark_style));
  // Only NULLs: no NaN either.
  FileStats all_null = BaseStats();
  all_null.columns["f"] = Range(nullptr, nullptr, 100);
  EXPECT_TRUE(Skips("f > 0 OR f = 'NaN'", all_null));
}

bool AllMatch(const std::string& sql, const FileStats& stats = BaseStats(),
              const PartitionValuesView& partitions = {}) {
  auto parsed = ParseExpression(sql);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return false;
  auto bound = BindPredicate(*parsed, *SkipSchema());
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  if (!bound.ok()) return false;
  return AllRowsMatch(*bound, stats, partitions);
}

TEST(DataSkipping, AllRowsMatchFromBoundsNullCountsAndPartitions) {
  // x in [10, 20] without NULLs; s has 3 NULLs; f in [0.5, 2.5], possibly NaN.
  for (const char* sql : {"x >= 10", "x BETWEEN 10 AND 20", "x IS NOT NULL", "x != 5",
                          "NOT (x < 10)", "x > 5 OR s LIKE 'a%'", "f > 0", "f IS NOT NULL",
                          "x <= 20 AND m >= 100"}) {
    EXPECT_TRUE(AllMatch(sql)) << sql;
  }
  for (const char* sql : {"x > 10", "x IN (10, 20)", "s IS NOT NULL", "s >= 'a'",
                          "x > 5 AND s LIKE 'a%'", "f < 3", "f = 1", "x = 10",
                          "y > 0"}) {
    EXPECT_FALSE(AllMatch(sql)) << sql;
  }
  PartitionValuesView a{{"p", S("a")}};
  PartitionValuesView null_p{{"p", arrow::MakeNullScalar(arrow::utf8())}};
  EXPECT_TRUE(AllMatch("p = 'a'", BaseStats(), a));
  EXPECT_TRUE(AllMatch("p IN ('a', 'b') AND x > 0", BaseStats(), a));
  EXPECT_FALSE(AllMatch("p = 'a'", BaseStats(), null_p));
  EXPECT_TRUE(AllMatch("p IS NULL", BaseStats(), null_p));
  FileStats empty;
  empty.num_records = 0;
  EXPECT_TRUE(AllMatch("x = 12345", empty));
  EXPECT_FALSE(AllMatch("x >= 10", FileStats{}));  // no statistics
}

TEST(DataSkipping, ConstructsItDoesNotFollowNeverSkip) {
  // x is in [10, 20] and s in ["apple", "melon"]: each of these is FALSE on every row, but
  // skipping does not look into LIKE, CASE, explicit casts or %.
  for (const char* sql : {"CAST(x AS STRING) = '5'", "x % 7 = 100", "if(x > 100, TRUE, FALSE)",
                          "s LIKE 'zzz%'", "NOT (s LIKE '%')", "CAST(x AS INT) > 100",
                          "CASE WHEN x > 100 THEN TRUE END", "upper(s) = 'ZZZ'"}) {
    EXPECT_FALSE(Skips(sql)) << sql;
  }
  // They still combine: one side that proves FALSE decides an AND.
  EXPECT_TRUE(Skips("x > 100 AND s LIKE 'a%'"));
  EXPECT_FALSE(Skips("x > 100 OR s LIKE 'a%'"));
}

TEST(DataSkipping, NaNPartitionValueIsExact) {
  auto schema_sql = [](const std::string& sql, const PartitionValuesView& partitions) {
    auto parsed = ParseExpression(sql);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto schema = arrow::schema({arrow::field("pf", arrow::float32())});
    auto bound = BindPredicate(*parsed, *schema);
    EXPECT_TRUE(bound.ok()) << bound.status().ToString();
    return CanSkipFile(*bound, FileStats{}, partitions);
  };
  PartitionValuesView nan{{"pf", std::make_shared<arrow::StringScalar>("NaN")}};
  EXPECT_FALSE(schema_sql("pf = 'NaN'", nan));
  EXPECT_FALSE(schema_sql("pf > 3.5", nan));
  EXPECT_FALSE(schema_sql("pf >= 'NaN'", nan));
  EXPECT_FALSE(schema_sql("pf != 3.5", nan));
  EXPECT_TRUE(schema_sql("pf < 3.5", nan));
  EXPECT_TRUE(schema_sql("pf = 3.5", nan));
  EXPECT_TRUE(schema_sql("pf != 'NaN'", nan));
  EXPECT_TRUE(schema_sql("pf IS NULL", nan));
  PartitionValuesView three{{"pf", std::make_shared<arrow::StringScalar>("3.5")}};
  EXPECT_TRUE(schema_sql("pf = 'NaN'", three));
  EXPECT_TRUE(schema_sql("pf > 3.5", three));
  EXPECT_FALSE(schema_sql("pf < 'NaN'", three));
}

TEST(DataSkipping, BooleanColumns) {
  // flag is FALSE in every row.
  EXPECT_TRUE(Skips("flag"));
  EXPECT_TRUE(Skips("flag = TRUE"));
  EXPECT_FALSE(Skips("NOT flag"));
  EXPECT_FALSE(Skips("flag = FALSE"));
}

TEST(DataSkipping, NullSafeEquality) {
  EXPECT_TRUE(Skips("x <=> NULL"));  // no NULLs
  EXPECT_TRUE(Skips("x <=> 5"));
  EXPECT_FALSE(Skips("x <=> 15"));
  EXPECT_FALSE(Skips("NOT (x <=> 5)"));
  FileStats all_null = BaseStats();
  all_null.columns["x"] = Range(nullptr, nullptr, 100);
  EXPECT_FALSE(Skips("x <=> NULL", all_null));
  EXPECT_TRUE(Skips("x <=> 15", all_null));
  EXPECT_FALSE(Skips("NOT (x <=> 15)", all_null));
}

TEST(DataSkipping, NestedAndMappedColumnsUsePhysicalNames) {
  EXPECT_TRUE(Skips("n.v > 3"));
  EXPECT_FALSE(Skips("N.V = 2"));
  EXPECT_TRUE(Skips("m < 100"));
  EXPECT_FALSE(Skips("m = 150"));
}

TEST(DataSkipping, PartitionValuesAreExact) {
  const FileStats stats = BaseStats();
  PartitionValuesView part{{"p", S("2021")}, {"q", I32(5)}};
  EXPECT_FALSE(Skips("p = '2021'", stats, part));
  EXPECT_TRUE(Skips("p = '2022'", stats, part));
  EXPECT_TRUE(Skips("p != '2021'", stats, part));
  EXPECT_TRUE(Skips("p IS NULL", stats, part));
  EXPECT_FALSE(Skips("p IS NOT NULL", stats, part));
  EXPECT_FALSE(Skips("q > 4", stats, part));
  EXPECT_TRUE(Skips("q > 5", stats, part));
  EXPECT_TRUE(Skips("q IN (1, 2)", stats, part));
  EXPECT_TRUE(Skips("p = '2022' OR q = 6", stats, part));
  EXPECT_FALSE(Skips("p = '2022' OR q = 5", stats, part));
  EXPECT_TRUE(Skips("p = '2021' AND x = 5", stats, part));
}

TEST(DataSkipping, NullPartitionValue) {
  const FileStats stats = BaseStats();
  PartitionValuesView null_scalar{{"p", arrow::MakeNullScalar(arrow::utf8())}};
  PartitionValuesView null_ptr{{"p", nullptr}};
  for (const auto* part : {&null_scalar, &null_ptr}) {
    EXPECT_TRUE(Skips("p = '2021'", stats, *part));
    EXPECT_TRUE(Skips("p != '2021'", stats, *part));
    EXPECT_TRUE(Skips("NOT (p = '2021')", stats, *part));
    EXPECT_FALSE(Skips("p IS NULL", stats, *part));
    EXPECT_TRUE(Skips("p IS NOT NULL", stats, *part));
    EXPECT_FALSE(Skips("p <=> NULL", stats, *part));
    EXPECT_TRUE(Skips("p <=> '2021'", stats, *part));
    EXPECT_FALSE(Skips("p IS NULL OR x = 5", stats, *part));
  }
}

TEST(DataSkipping, PartitionValueGivenAsTextIsConverted) {
  PartitionValuesView part{{"q", S("5")}};
  EXPECT_TRUE(Skips("q = 6", BaseStats(), part));
  EXPECT_FALSE(Skips("q = 5", BaseStats(), part));
}

TEST(DataSkipping, ConstantPredicatesAndEmptyFiles) {
  EXPECT_TRUE(Skips("FALSE"));
  EXPECT_TRUE(Skips("NULL"));
  EXPECT_TRUE(Skips("1 = 2"));
  EXPECT_FALSE(Skips("1 = 1"));
  EXPECT_FALSE(Skips("TRUE"));
  EXPECT_TRUE(Skips("x = 15 AND FALSE"));
  FileStats empty;
  empty.num_records = 0;
  EXPECT_TRUE(Skips("x = 15", empty));
}

TEST(DataSkipping, WorksOnParsedStatisticsWithColumnMapping) {
  auto stats = ParseStatsJson(
      R"({"numRecords": 4, "minValues": {"col-m": 100, "col-n": {"col-v": 1}, "x": 10},
          "maxValues": {"col-m": 200, "col-n": {"col-v": 3}, "x": 20,
                        "ts": "2021-01-01T10:00:00.123Z"},
          "nullCount": {"col-m": 0, "x": 4}})",
      *SkipSchema());
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_TRUE(Skips("m > 200", *stats));
  EXPECT_FALSE(Skips("m > 199", *stats));
  EXPECT_TRUE(Skips("n.v = 4", *stats));
  EXPECT_TRUE(Skips("x = 15", *stats));  // every x is NULL
  EXPECT_FALSE(Skips("x IS NULL", *stats));
  EXPECT_FALSE(Skips("ts > TIMESTAMP '2021-01-01 10:00:00.123'", *stats));
  EXPECT_TRUE(Skips("ts > TIMESTAMP '2021-01-01 10:00:00.124'", *stats));
}

}  // namespace
}  // namespace deltacpp::internal
