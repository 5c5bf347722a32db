// `SET column = value` as delta-spark's UPDATE stores values under Spark's default ANSI policy:
// which value types a column takes, and the values stored, with the results Spark's ANSI cast
// gives (overflow fails, fractions truncate toward zero into integers, decimals round half up,
// text is parsed, DATE/TIMESTAMP convert to one another). Values marked "observed" were taken
// from Spark 4 with delta-spark 4 running the same UPDATE.
#include <gtest/gtest.h>

#include <arrow/compute/initialize.h>
#include <arrow/json/from_string.h>

#include <cmath>

#include "deltacpp/error.h"
#include "expr/assignment.h"
#include "expr/parser.h"

namespace deltacpp::internal {
namespace {

class AssignmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(arrow::compute::Initialize().ok());
    schema_ = arrow::schema({
        arrow::field("id", arrow::int32(), /*nullable=*/false),
        arrow::field("big", arrow::int64()),
        arrow::field("dbl", arrow::float64()),
        arrow::field("dec", arrow::decimal128(6, 3)),
        arrow::field("name", arrow::utf8()),
        arrow::field("flag", arrow::boolean()),
        arrow::field("d", arrow::date32()),
        arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
        arrow::field("tiny", arrow::int8()),
        arrow::field("small_dec", arrow::decimal128(4, 2)),
        arrow::field("flt", arrow::float32()),
        arrow::field("s", arrow::struct_({arrow::field("x", arrow::int32())})),
        arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
    });
    // d: 2024-01-31 = day 19753; ts: 2024-01-31 10:30:00 UTC.
    rows_ = Rows(R"([
      {"id": 1, "big": 5, "dbl": 1.9, "dec": "1.125", "name": "a", "flag": true, "d": 19753,
       "ts": 1706697000000000, "tiny": 1, "small_dec": "1.00", "flt": 1.5, "s": {"x": 1},
       "ntz": 0},
      {"id": 2, "big": 300, "dbl": -1.9, "dec": "-1.125", "name": "b", "flag": false, "d": 0,
       "ts": 0, "tiny": 2, "small_dec": "2.00", "flt": 2.5, "s": null, "ntz": 0},
      {"id": 3, "big": null, "dbl": null, "dec": "1.124", "name": null, "flag": null, "d": null,
       "ts": null, "tiny": null, "small_dec": null, "flt": null, "s": null, "ntz": null}
    ])");
  }

  std::shared_ptr<arrow::RecordBatch> Rows(const std::string& json) {
    auto array = arrow::json::ArrayFromJSONString(arrow::struct_(schema_->fields()), json);
    EXPECT_TRUE(array.ok()) << array.status().ToString();
    auto batch = arrow::RecordBatch::FromStructArray(*array);
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    return *batch;
  }

  arrow::Result<BoundAssignment> BindSet(const std::string& column, const std::string& sql) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(sql));
    return BindAssignment(column, parsed, *schema_);
  }

  arrow::Result<std::shared_ptr<arrow::Array>> Set(const std::string& column,
                                                   const std::string& sql,
                                                   int64_t first_row = 0,
                                                   std::shared_ptr<arrow::RecordBatch> rows = nullptr) {
    ARROW_ASSIGN_OR_RAISE(auto bound, BindSet(column, sql));
    return EvaluateAssignment(bound, rows ? rows : rows_, first_row, "table t, version 3");
  }

  // The stored values as JSON-like text, compared with arrays built from JSON.
  void ExpectValues(const std::string& column, const std::string& sql,
                    const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
    auto got = Set(column, sql);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto want = arrow::json::ArrayFromJSONString(type, json);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    EXPECT_TRUE((*got)->Equals(**want))
        << "SET " << column << " = " << sql << ": got " << (*got)->ToString() << ", want "
        << (*want)->ToString();
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::RecordBatch> rows_;
};

// ---- binding: which types a column takes ----

TEST_F(AssignmentTest, ResolvesTheColumnCaseInsensitively) {
  auto bound = BindSet("NAME", "'x'");
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ(bound->field_index, 4);
  EXPECT_EQ(bound->target->name(), "name");
}

TEST_F(AssignmentTest, UnknownColumnIsInvalidExpression) {
  auto bound = BindSet("nope", "1");
  ASSERT_FALSE(bound.ok());
  EXPECT_TRUE(IsDeltaError(bound.status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_NE(bound.status().message().find("'nope'"), std::string::npos)
      << bound.status().message();
}

TEST_F(AssignmentTest, AmbiguousColumnIsInvalidExpression) {
  schema_ = arrow::schema({arrow::field("a", arrow::int32()), arrow::field("A", arrow::int32())});
  auto bound = BindSet("a", "1");
  ASSERT_FALSE(bound.ok());
  EXPECT_TRUE(IsDeltaError(bound.status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_NE(bound.status().message().find("ambiguous"), std::string::npos);
}

TEST_F(AssignmentTest, NestedTargetIsRefusedWithTheStructToAssign) {
  auto bound = BindSet("s.x", "1");
  ASSERT_FALSE(bound.ok());
  EXPECT_TRUE(IsDeltaError(bound.status(), DeltaErrorCode::kUnsupportedFeature));
  EXPECT_NE(bound.status().message().find("struct 's'"), std::string::npos)
      << bound.status().message();
}

TEST_F(AssignmentTest, ValueThatDoesNotBindNamesTheAssignment) {
  auto bound = BindSet("big", "missing + 1");
  ASSERT_FALSE(bound.ok());
  EXPECT_TRUE(IsDeltaError(bound.status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_NE(bound.status().message().find("SET big"), std::string::npos)
      << bound.status().message();
}

TEST_F(AssignmentTest, DatesAndNumbersDoNotMix) {
  EXPECT_TRUE(IsDeltaError(BindSet("big", "d").status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_TRUE(IsDeltaError(BindSet("d", "big").status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_TRUE(IsDeltaError(BindSet("ts", "dbl").status(), DeltaErrorCode::kInvalidExpression));
  auto bound = BindSet("d", "big");
  const auto& msg = bound.status().message();
  EXPECT_NE(msg.find("BIGINT"), std::string::npos) << msg;
  EXPECT_NE(msg.find("DATE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'d'"), std::string::npos) << msg;
}

TEST_F(AssignmentTest, BinaryAndNumbersDoNotMix) {
  EXPECT_TRUE(IsDeltaError(BindSet("id", "X'01'").status(), DeltaErrorCode::kInvalidExpression));
}
TEST_F(AssignmentTest, StructFromScalarIsRefused) {
  EXPECT_TRUE(IsDeltaError(BindSet("s", "1").status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_TRUE(IsDeltaError(BindSet("id", "s").status(), DeltaErrorCode::kInvalidExpression));
}

TEST_F(AssignmentTest, HalfFloatToStringIsNotSupported) {
  schema_ = arrow::schema({arrow::field("h", arrow::float16()), arrow::field("s", arrow::utf8())});
  EXPECT_TRUE(IsDeltaError(BindSet("s", "h").status(), DeltaErrorCode::kUnsupportedFeature));
}

TEST_F(AssignmentTest, CurrentTimeBindsOnlyWhenAllowed) {
  auto parsed = ParseExpression("current_date()");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(BindAssignment("d", *parsed, *schema_).ok());
  EXPECT_FALSE(BindAssignment("d", *parsed, *schema_, /*allow_current_time=*/false).ok());
}

// ---- values stored ----

TEST_F(AssignmentTest, NullIsStoredInAnyColumnEvenNotNull) {
  ExpectValues("id", "NULL", arrow::int32(), "[null, null, null]");
  ExpectValues("d", "NULL", arrow::date32(), "[null, null, null]");
  ExpectValues("s", "NULL", schema_->GetFieldByName("s")->type(), "[null, null, null]");
}

TEST_F(AssignmentTest, SameTypeIsStoredAsIs) {
  ExpectValues("big", "big + 1", arrow::int64(), "[6, 301, null]");
  ExpectValues("s", "s", schema_->GetFieldByName("s")->type(), R"([{"x": 1}, null, null])");
}

TEST_F(AssignmentTest, IntegersWidenAndNarrowWhenTheyFit) {
  ExpectValues("big", "id", arrow::int64(), "[1, 2, 3]");
  ExpectValues("tiny", "id * 10", arrow::int8(), "[10, 20, 30]");
  ExpectValues("id", "big", arrow::int32(), "[5, 300, null]");
}

TEST_F(AssignmentTest, IntegerOverflowFailsNamingValueColumnAndRow) {
  // Spark: CAST_OVERFLOW_IN_TABLE_INSERT for 300 into a TINYINT column.
  auto got = Set("tiny", "big", /*first_row=*/10);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kSchemaMismatch)) << got.status();
  const auto& msg = got.status().message();
  EXPECT_EQ(msg.rfind("table t, version 3: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("300"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'tiny'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TINYINT"), std::string::npos) << msg;
  EXPECT_NE(msg.find("row 12"), std::string::npos) << msg;  // rows 11, 12, 13: the second
}

TEST_F(AssignmentTest, BigintBeyondIntFails) {
  // Spark's documented example: INSERT INTO test(i INT) VALUES (2147483648L) overflows.
  auto got = Set("id", "2147483648L");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kSchemaMismatch));
  EXPECT_NE(got.status().message().find("2147483648"), std::string::npos);
  EXPECT_NE(got.status().message().find("row 1 "), std::string::npos) << got.status();
}

TEST_F(AssignmentTest, FractionsAreTruncatedTowardZeroIntoIntegers) {
  ExpectValues("big", "dbl", arrow::int64(), "[1, -1, null]");
  ExpectValues("tiny", "dec", arrow::int8(), "[1, -1, 1]");
  ExpectValues("id", "flt * 3", arrow::int32(), "[4, 7, null]");
}

TEST_F(AssignmentTest, DoubleOutOfIntegerRangeFails) {
  auto got = Set("id", "1e20");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kSchemaMismatch)) << got.status();
  auto nan = Set("big", "CAST('NaN' AS DOUBLE)");
  ASSERT_FALSE(nan.ok());
  EXPECT_TRUE(IsDeltaError(nan.status(), DeltaErrorCode::kSchemaMismatch)) << nan.status();
}

TEST_F(AssignmentTest, DecimalsRoundHalfUpToTheTargetScale) {
  // 1.125 -> 1.13, -1.125 -> -1.13 (away from zero), 1.124 -> 1.12.
  ExpectValues("small_dec", "dec", arrow::decimal128(4, 2), R"(["1.13", "-1.13", "1.12"])");
}

TEST_F(AssignmentTest, DecimalPrecisionOverflowFails) {
  auto got = Set("small_dec", "dec * 100");  // 112.500 does not fit DECIMAL(4,2)
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kSchemaMismatch)) << got.status();
  EXPECT_NE(got.status().message().find("DECIMAL(4,2)"), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find("row 1 "), std::string::npos) << got.status();
}

TEST_F(AssignmentTest, IntegersIntoDecimalsCheckThePrecision) {
  ExpectValues("small_dec", "tiny * 10", arrow::decimal128(4, 2), R"(["10.00", "20.00", null])");
  auto got = Set("small_dec", "big");  // 300.00 needs DECIMAL(5,2)
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kSchemaMismatch)) << got.status();
  EXPECT_NE(got.status().message().find("row 2 "), std::string::npos) << got.status();
}

TEST_F(AssignmentTest, DoublesIntoDecimalsRoundTheirDecimalTextHalfUp) {
  // Spark converts through the double's decimal text: 0.125 -> 0.13 and 2.675 -> 2.68 (the
  // binary value of 2.675 is a little less, but Spark rounds the text).
  ExpectValues("small_dec", "dbl", arrow::decimal128(4, 2), R"(["1.90", "-1.90", null])");
  auto rows = Rows(R"([
      {"id": 1, "dbl": 0.125}, {"id": 2, "dbl": 2.675}, {"id": 3, "dbl": -0.005},
      {"id": 4, "dbl": 1e-300}])");
  auto got = Set("small_dec", "dbl", 0, rows);
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = arrow::json::ArrayFromJSONString(arrow::decimal128(4, 2),
                                               R"(["0.13", "2.68", "-0.01", "0.00"])");
  EXPECT_TRUE((*got)->Equals(**want)) << (*got)->ToString();
  EXPECT_TRUE(IsDeltaError(Set("small_dec", "dbl * 100", 0, rows).status(),
                           DeltaErrorCode::kSchemaMismatch));
}

TEST_F(AssignmentTest, NanIntoDecimalFails) {
  EXPECT_TRUE(IsDeltaError(Set("dec", "CAST('NaN' AS DOUBLE)").status(),
                           DeltaErrorCode::kSchemaMismatch));
}

TEST_F(AssignmentTest, NumbersIntoFloatingPointRound) {
  // 2^53 + 1 has no DOUBLE; Java rounds it to 2^53.
  ExpectValues("dbl", "9007199254740993L", arrow::float64(),
               "[9007199254740992, 9007199254740992, 9007199254740992]");
  ExpectValues("dbl", "dec", arrow::float64(), "[1.125, -1.125, 1.124]");
  // A DOUBLE beyond FLOAT's range becomes infinity (Java's double-to-float conversion).
  auto got = Set("flt", "1e300");
  ASSERT_TRUE(got.ok()) << got.status();
  const auto& f = static_cast<const arrow::FloatArray&>(**got);
  EXPECT_TRUE(std::isinf(f.Value(0)) && f.Value(0) > 0);
}

// Observed with Spark 4 and delta-spark: SET s = dbl (1.9) stores '1.9', SET s = 1e20D
// '1.0E20', SET s = ts '2024-01-31 10:30:00.5'. The other shapes follow Java's
// Double.toString / Float.toString, which Spark's cast uses.
TEST_F(AssignmentTest, DoublesAndTimestampsAreStoredAsSparkPrintsThem) {
  ExpectValues("name", "dbl", arrow::utf8(), R"(["1.9", "-1.9", null])");
  ExpectValues("name", "1e20", arrow::utf8(), R"(["1.0E20", "1.0E20", "1.0E20"])");
  ExpectValues("name", "ts", arrow::utf8(), R"(["2024-01-31 10:30:00", "1970-01-01 00:00:00", null])");
  ExpectValues("name", "TIMESTAMP '2024-01-31 10:30:00.5'", arrow::utf8(),
               R"(["2024-01-31 10:30:00.5", "2024-01-31 10:30:00.5", "2024-01-31 10:30:00.5"])");
  ExpectValues("name", "TIMESTAMP_NTZ '2024-01-31 10:30:00.000120'", arrow::utf8(),
               R"(["2024-01-31 10:30:00.00012", "2024-01-31 10:30:00.00012",
                   "2024-01-31 10:30:00.00012"])");
  const std::vector<std::pair<std::string, std::string>> doubles = {
      {"100.0D", "100.0"},     {"0.001D", "0.001"},       {"1e-4", "1.0E-4"},
      {"1e7", "1.0E7"},        {"1234567.5D", "1234567.5"}, {"-0.0D", "-0.0"},
      {"0.1D + 0.2D", "0.30000000000000004"}, {"123456789.125D", "1.23456789125E8"},
      {"CAST('NaN' AS DOUBLE)", "NaN"}, {"-1e308 * 10", "-Infinity"}};
  for (const auto& [sql, text] : doubles) {
    auto got = Set("name", sql);
    ASSERT_TRUE(got.ok()) << sql << ": " << got.status();
    EXPECT_EQ(static_cast<const arrow::StringArray&>(**got).GetString(0), text) << sql;
  }
  // FLOAT values print their own shortest digits: 1.1F is '1.1', not the double's digits.
  ExpectValues("name", "flt", arrow::utf8(), R"(["1.5", "2.5", null])");
  ExpectValues("name", "1.1F", arrow::utf8(), R"(["1.1", "1.1", "1.1"])");
}

// Observed with Spark 4 and delta-spark: `UPDATE t SET i = '5'` stores 5, `SET d = '2024-02-01'`
// the date, `SET i = 'abc'` fails with CAST_INVALID_INPUT.
TEST_F(AssignmentTest, TextIsParsedAsSparkCastsIt) {
  ExpectValues("id", "'5'", arrow::int32(), "[5, 5, 5]");
  ExpectValues("big", "' 12 '", arrow::int64(), "[12, 12, 12]");
  ExpectValues("d", "'2024-02-01'", arrow::date32(), "[19754, 19754, 19754]");
  ExpectValues("flag", "'yes'", arrow::boolean(), "[true, true, true]");
  ExpectValues("dbl", "'1.5'", arrow::float64(), "[1.5, 1.5, 1.5]");
  // Text into a decimal rounds half up like any other value.
  ExpectValues("small_dec", "' -1.125 '", arrow::decimal128(4, 2), R"(["-1.13", "-1.13", "-1.13"])");
}

TEST_F(AssignmentTest, TextThatDoesNotParseFails) {
  auto got = Set("id", "'abc'", /*first_row=*/4);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kInvalidArgument)) << got.status();
  EXPECT_NE(got.status().message().find("'id'"), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find("row 5"), std::string::npos) << got.status();
  auto decimal = Set("small_dec", "'x1'");
  EXPECT_TRUE(IsDeltaError(decimal.status(), DeltaErrorCode::kSchemaMismatch)) << decimal.status();
  EXPECT_NE(decimal.status().message().find("'x1'"), std::string::npos) << decimal.status();
  EXPECT_NE(decimal.status().message().find("not a number"), std::string::npos)
      << decimal.status();
  EXPECT_TRUE(IsDeltaError(Set("d", "'2024-13-01'").status(), DeltaErrorCode::kInvalidArgument));
}

// Observed with Spark 4 and delta-spark: `SET b = 1` stores TRUE, `SET i = b` (b TRUE) stores 1.
TEST_F(AssignmentTest, BooleansAndNumbersConvert) {
  ExpectValues("flag", "1", arrow::boolean(), "[true, true, true]");
  ExpectValues("flag", "0", arrow::boolean(), "[false, false, false]");
  ExpectValues("flag", "dbl", arrow::boolean(), "[true, true, null]");
  ExpectValues("flag", "dec", arrow::boolean(), "[true, true, true]");
  ExpectValues("id", "flag", arrow::int32(), "[1, 0, null]");
  ExpectValues("dbl", "flag", arrow::float64(), "[1, 0, null]");
  ExpectValues("small_dec", "flag", arrow::decimal128(4, 2), R"(["1.00", "0.00", null])");
}

TEST_F(AssignmentTest, AtomicValuesAreStoredAsTheirText) {
  ExpectValues("name", "id", arrow::utf8(), R"(["1", "2", "3"])");
  ExpectValues("name", "flag", arrow::utf8(), R"(["true", "false", null])");
  ExpectValues("name", "d", arrow::utf8(), R"(["2024-01-31", "1970-01-01", null])");
  ExpectValues("name", "dec", arrow::utf8(), R"(["1.125", "-1.125", "1.124"])");
  // Observed with Spark 4: CAST(0.0000000001 AS DECIMAL(38,10)) is stored as '0.0000000001'.
  ExpectValues("name", "CAST(0.0000000001 AS DECIMAL(38,10))", arrow::utf8(),
               R"(["0.0000000001", "0.0000000001", "0.0000000001"])");
  ExpectValues("name", "small_dec * -1", arrow::utf8(), R"(["-1.00", "-2.00", null])");
}

TEST_F(AssignmentTest, DatesAndTimestampsConvert) {
  // DATE -> TIMESTAMP is midnight UTC; TIMESTAMP -> DATE keeps the UTC date.
  ExpectValues("ts", "d", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
               "[1706659200000000, 0, null]");
  ExpectValues("d", "ts", arrow::date32(), "[19753, 0, null]");
  ExpectValues("ntz", "ts", arrow::timestamp(arrow::TimeUnit::MICRO),
               "[1706697000000000, 0, null]");
}

TEST_F(AssignmentTest, FailedComputationNamesTheRowAndItsInputs) {
  // ANSI: division by zero is an error, not NULL.
  auto rows = Rows(R"([{"id": 1, "big": 2}, {"id": 2, "big": 0}, {"id": 3, "big": 0}])");
  auto got = Set("dbl", "10 / big", /*first_row=*/100, rows);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsDeltaError(got.status(), DeltaErrorCode::kInvalidArgument)) << got.status();
  const auto& msg = got.status().message();
  EXPECT_NE(msg.find("row 102"), std::string::npos) << msg;
  EXPECT_NE(msg.find("big = 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'dbl'"), std::string::npos) << msg;
}

TEST_F(AssignmentTest, ManyRowsLocateTheFirstFailure) {
  arrow::Int64Builder big;
  const int64_t n = 10'000;
  for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(big.Append(i == 7'321 || i == 9'000 ? 1000 : i % 100).ok());
  auto big_array = big.Finish();
  ASSERT_TRUE(big_array.ok());
  auto schema = arrow::schema({arrow::field("big", arrow::int64()),
                               arrow::field("tiny", arrow::int8())});
  schema_ = schema;
  auto tiny = arrow::MakeArrayOfNull(arrow::int8(), n);
  ASSERT_TRUE(tiny.ok());
  auto rows = arrow::RecordBatch::Make(schema, n, {*big_array, *tiny});
  auto got = Set("tiny", "big", /*first_row=*/0, rows);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("row 7322 "), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find("1000"), std::string::npos) << got.status();
}

TEST_F(AssignmentTest, EmptyBatchGivesAnEmptyColumn) {
  auto got = Set("tiny", "big", 0, rows_->Slice(0, 0));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->length(), 0);
  EXPECT_TRUE((*got)->type()->Equals(*arrow::int8()));
}

}  // namespace
}  // namespace deltacpp::internal
