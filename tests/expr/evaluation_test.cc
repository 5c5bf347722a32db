// Row evaluation of LIKE, CASE, CAST, `%` and the string and date functions, with the answers
// Spark 4 (ANSI SQL, its default) gives for the same rows.
#include <gtest/gtest.h>

#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/json/from_string.h>

#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"

namespace deltacpp::internal {
namespace {

namespace cp = arrow::compute;

class EvaluationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cp::Initialize().ok());
    schema_ = arrow::schema({
        arrow::field("id", arrow::int64()),
        arrow::field("name", arrow::utf8()),
        arrow::field("score", arrow::int32()),
        arrow::field("price", arrow::decimal128(10, 2)),
        arrow::field("d", arrow::date32()),
        arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
        arrow::field("s2", arrow::utf8()),
    });
    // d: 2024-01-31, 2024-02-29, NULL, 2023-12-31.
    // ts: 2024-01-31 10:30, 2024-02-29 23:00, NULL, 2023-12-31 00:59 (UTC).
    const char* rows = R"([
      {"id": 1, "name": "alice", "score": 10, "price": "1.50", "d": 19753,
       "ts": 1706697000000000, "s2": " 12 "},
      {"id": 2, "name": "Bob_x", "score": null, "price": "20.00", "d": 19782,
       "ts": 1709247600000000, "s2": "abc"},
      {"id": 3, "name": null, "score": 30, "price": null, "d": null, "ts": null, "s2": null},
      {"id": 4, "name": "100%", "score": -7, "price": "3.25", "d": 19722,
       "ts": 1703984340000000, "s2": "true"}
    ])";
    auto array = arrow::json::ArrayFromJSONString(arrow::struct_(schema_->fields()), rows);
    ASSERT_TRUE(array.ok()) << array.status().ToString();
    auto batch = arrow::RecordBatch::FromStructArray(*array);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    batch_ = *batch;
  }

  arrow::Result<std::shared_ptr<arrow::Array>> Run(const std::string& sql) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(sql));
    ARROW_ASSIGN_OR_RAISE(auto bound, BindPredicate(parsed, *schema_, /*allow_current_time=*/true));
    ARROW_ASSIGN_OR_RAISE(auto expr, ToArrowExpression(bound));
    ARROW_ASSIGN_OR_RAISE(expr, expr.Bind(*schema_));
    ARROW_ASSIGN_OR_RAISE(auto datum,
                          cp::ExecuteScalarExpression(expr, *schema_, arrow::Datum(batch_)));
    if (datum.is_scalar()) return arrow::MakeArrayFromScalar(*datum.scalar(), batch_->num_rows());
    return datum.make_array();
  }

  // The predicate's value per row: T, F or N (NULL).
  std::string Eval(const std::string& sql) {
    auto result = Run(sql);
    if (!result.ok()) return "error: " + result.status().ToString();
    const auto& values = static_cast<const arrow::BooleanArray&>(**result);
    std::string out;
    for (int64_t i = 0; i < values.length(); ++i) {
      out += values.IsNull(i) ? 'N' : (values.Value(i) ? 'T' : 'F');
    }
    return out;
  }

  bool Fails(const std::string& sql) { return !Run(sql).ok(); }

  std::shared_ptr<arrow::DataType> TypeOf(const std::string& sql) {
    auto parsed = ParseExpression(sql);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    if (!parsed.ok()) return nullptr;
    auto bound = Bind(*parsed, *schema_);
    EXPECT_TRUE(bound.ok()) << bound.status().ToString();
    return bound.ok() ? bound->type : nullptr;
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::RecordBatch> batch_;
};

TEST_F(EvaluationTest, NewSyntaxPrintsBackToTheSameTree) {
  for (const char* sql :
       {"name LIKE 'a%'", "name NOT LIKE 'a!%' ESCAPE '!'",
        "CASE WHEN score > 1 THEN 'x' WHEN score IS NULL THEN 'n' ELSE 'y' END = 'x'",
        "CASE id WHEN 1 THEN 2 END", "CAST(score AS BIGINT) > 1", "CAST(s2 AS DECIMAL(10,2))",
        "score % 3 = 1", "-score % 3 * 2", "`case` + `end`"}) {
    auto parsed = ParseExpression(sql);
    ASSERT_TRUE(parsed.ok()) << sql << ": " << parsed.status().ToString();
    auto again = ParseExpression((*parsed)->ToString());
    ASSERT_TRUE(again.ok()) << (*parsed)->ToString() << ": " << again.status().ToString();
    EXPECT_TRUE((*parsed)->Equals(**again)) << sql << " printed as " << (*parsed)->ToString();
  }
}

TEST_F(EvaluationTest, SyntaxErrorsNameTheProblem) {
  EXPECT_FALSE(ParseExpression("CASE WHEN a THEN 1").ok());
  EXPECT_FALSE(ParseExpression("CASE END").ok());
  EXPECT_FALSE(ParseExpression("CAST(a AS NOTATYPE)").ok());
  EXPECT_FALSE(ParseExpression("CAST(a BIGINT)").ok());
  EXPECT_FALSE(ParseExpression("a LIKE 'x' ESCAPE 'ab'").ok());
}

TEST_F(EvaluationTest, Like) {
  EXPECT_EQ(Eval("name LIKE 'a%'"), "TFNF");
  EXPECT_EQ(Eval("name LIKE 'ALICE'"), "FFNF");  // case-sensitive
  EXPECT_EQ(Eval("name LIKE '_ob%'"), "FTNF");
  EXPECT_EQ(Eval("name LIKE '%\\\\_%'"), "FTNF");  // the SQL text '%\\_%': an escaped '_'
  EXPECT_EQ(Eval("name LIKE '100!%' ESCAPE '!'"), "FFNT");
  EXPECT_EQ(Eval("name LIKE '1__!%' ESCAPE '!'"), "FFNT");
  EXPECT_EQ(Eval("name NOT LIKE 'a%'"), "FTNT");
  EXPECT_EQ(Eval("name LIKE '%'"), "TTNT");
  EXPECT_EQ(Eval("name LIKE 'a.*'"), "FFNF");  // regular-expression characters are literal
  EXPECT_EQ(Eval("name LIKE NULL"), "NNNN");
  // As in Spark, the escape character may only precede '%', '_' or itself.
  EXPECT_TRUE(Fails("name LIKE 'a!b' ESCAPE '!'"));
  EXPECT_TRUE(Fails("name LIKE 'ab!' ESCAPE '!'"));
  EXPECT_TRUE(Fails("score LIKE '1%'"));
}

TEST_F(EvaluationTest, CaseIfAndNvl) {
  EXPECT_EQ(Eval("CASE WHEN score > 15 THEN 'hi' WHEN score > 0 THEN 'lo' ELSE 'neg' END = 'lo'"),
            "TFFF");
  EXPECT_EQ(Eval("CASE WHEN score > 15 THEN 'hi' END IS NULL"), "TTFT");
  EXPECT_EQ(Eval("CASE id WHEN 1 THEN 'one' WHEN 4 THEN 'four' ELSE 'other' END = 'four'"),
            "FFFT");
  EXPECT_EQ(Eval("CASE score WHEN NULL THEN 1 ELSE 2 END = 2"), "TTTT");
  EXPECT_EQ(Eval("CASE WHEN score > 15 THEN id ELSE 1.5 END = 1.5"), "TTFT");
  EXPECT_EQ(Eval("if(score > 15, 1, 0) = 1"), "FFTF");
  EXPECT_EQ(Eval("nvl(score, 99) = 99"), "FTFF");
  EXPECT_EQ(Eval("CASE WHEN id > 2 THEN score > 0 ELSE name LIKE 'a%' END"), "TFTF");
  EXPECT_TRUE(Fails("CASE WHEN score THEN 1 END = 1"));
  EXPECT_TRUE(Fails("CASE WHEN id > 1 THEN 'x' ELSE d END = 'x'"));
}

TEST_F(EvaluationTest, CastFollowsSparkAnsiRules) {
  EXPECT_EQ(Eval("CAST(' 12 ' AS INT) = 12"), "TTTT");
  EXPECT_EQ(Eval("CAST(price AS INT) = 3"), "FFNT");  // truncated toward zero
  EXPECT_EQ(Eval("CAST(3.9D AS INT) = 3 AND CAST(-3.9D AS INT) = -3"), "TTTT");
  EXPECT_EQ(Eval("CAST(score AS STRING) = '-7'"), "FNFT");
  EXPECT_EQ(Eval("CAST(' Yes ' AS BOOLEAN) AND NOT CAST('f' AS BOOLEAN)"), "TTTT");
  EXPECT_EQ(Eval("CAST(ts AS DATE) = d"), "TTNT");
  EXPECT_EQ(Eval("CAST('2024-01-31' AS DATE) = d"), "TFNF");
  EXPECT_EQ(Eval("CAST(id AS DOUBLE) / 2 = 0.5"), "TFFF");
  EXPECT_EQ(Eval("CAST(NULL AS INT) IS NULL"), "TTTT");
  // ANSI: text that is not a number, and values out of range, are errors rather than NULL.
  EXPECT_TRUE(Fails("CAST(s2 AS INT) = 12"));
  EXPECT_TRUE(Fails("CAST('abc' AS INT) = 1"));
  EXPECT_TRUE(Fails("CAST(1e20 AS INT) = 1"));
  EXPECT_TRUE(Fails("CAST('maybe' AS BOOLEAN)"));
  EXPECT_TRUE(Fails("CAST(d AS INT) = 1"));  // not a conversion Spark has
}

TEST_F(EvaluationTest, ArithmeticTypesAndAnsiErrors) {
  EXPECT_TRUE(TypeOf("score + id")->Equals(*arrow::int64()));
  EXPECT_TRUE(TypeOf("score + score")->Equals(*arrow::int32()));
  EXPECT_TRUE(TypeOf("score / score")->Equals(*arrow::float64()));
  EXPECT_TRUE(TypeOf("price + 1")->Equals(*arrow::decimal128(11, 2)));
  EXPECT_TRUE(TypeOf("score % id")->Equals(*arrow::int64()));
  EXPECT_EQ(Eval("score % 4 = 2"), "TNTF");
  EXPECT_EQ(Eval("score % -4 = -3"), "FNFT");  // the sign of the dividend
  EXPECT_EQ(Eval("2147483647 + id > 0"), "TTTT");
  EXPECT_TRUE(Fails("score + 2147483647 > 0"));
  EXPECT_TRUE(Fails("score % 0 = 0"));
  EXPECT_TRUE(Fails("id / 0 > 1"));
  EXPECT_TRUE(Fails("price % 2 = 1"));  // only integral operands for now
}

TEST_F(EvaluationTest, StringFunctions) {
  EXPECT_EQ(Eval("trim('  a  ') = 'a' AND ltrim('  a ') = 'a ' AND rtrim(' a  ') = ' a'"),
            "TTTT");
  EXPECT_EQ(Eval("length(trim(s2)) = 2"), "TFNF");
  EXPECT_EQ(Eval("substring(name, 2, 3) = 'lic'"), "TFNF");
  EXPECT_EQ(Eval("substr(name, -2) = '_x'"), "FTNF");
  EXPECT_EQ(Eval("substring(name, 0, 2) = 'al'"), "TFNF");
  EXPECT_EQ(Eval("substring('hello', -3, 2) = 'll' AND substring('hello', -7, 3) = 'h' AND "
                 "substring('hello', 2, -1) = '' AND substring('hello', -3, 5) = 'llo' AND "
                 "substring('hello', 4) = 'lo'"),
            "TTTT");
  EXPECT_EQ(Eval("concat(name, '!') = 'alice!'"), "TFNF");
  EXPECT_EQ(Eval("concat(name, NULL) IS NULL"), "TTTT");
  EXPECT_EQ(Eval("replace(name, 'l', 'L') = 'aLice'"), "TFNF");
  EXPECT_EQ(Eval("replace('aaa', 'a', 'bb') = 'bbbbbb' AND replace('abc', 'b') = 'ac'"), "TTTT");
  EXPECT_EQ(Eval("replace(name, '', 'x') = name"), "TTNT");
  EXPECT_TRUE(Fails("substring(name, id) = 'a'"));
}

TEST_F(EvaluationTest, DateFunctions) {
  EXPECT_EQ(Eval("year(d) = 2024"), "TTNF");
  EXPECT_EQ(Eval("month(d) = 2"), "FTNF");
  EXPECT_EQ(Eval("day(d) = 31"), "TFNT");
  EXPECT_EQ(Eval("dayofmonth(ts) = 31"), "TFNT");
  EXPECT_EQ(Eval("hour(ts) = 10"), "TFNF");
  EXPECT_EQ(Eval("hour(d) = 0"), "TTNT");
  // 10:30:00, 23:00:00, NULL, 00:59:00.
  EXPECT_EQ(Eval("minute(ts) = 30"), "TFNF");
  EXPECT_EQ(Eval("minute(ts) = 59"), "FFNT");
  EXPECT_EQ(Eval("second(ts) = 0"), "TTNT");
  EXPECT_EQ(Eval("second(TIMESTAMP '2024-01-31 10:30:07.9') = 7"), "TTTT");
  EXPECT_EQ(Eval("minute(d) = 0 AND second(d) = 0"), "TTNT");
  EXPECT_TRUE(TypeOf("minute(ts)")->Equals(*arrow::int32()));
  EXPECT_TRUE(TypeOf("second(ts)")->Equals(*arrow::int32()));
  // to_date(x) without a format is CAST(x AS DATE).
  EXPECT_EQ(Eval("to_date(ts) = d"), "TTNT");
  EXPECT_EQ(Eval("to_date(' 2024-01-31 ') = DATE '2024-01-31'"), "TTTT");
  EXPECT_TRUE(TypeOf("to_date(ts)")->Equals(*arrow::date32()));
  EXPECT_TRUE(Fails("to_date(s2) IS NULL"));      // 'abc' is not a date: an error under ANSI
  EXPECT_TRUE(Fails("to_date(ts, 'yyyy') = d"));  // formats are not supported
  EXPECT_TRUE(Fails("minute(name) = 1"));
  EXPECT_EQ(Eval("date_add(d, 1) = DATE '2024-02-01'"), "TFNF");
  EXPECT_EQ(Eval("date_add(d, 1) = DATE '2024-03-01'"), "FTNF");
  EXPECT_EQ(Eval("date_sub(d, 31) = DATE '2023-11-30'"), "FFNT");
  EXPECT_EQ(Eval("datediff(DATE '2024-03-01', d) = 30"), "TFNF");
  EXPECT_EQ(Eval("current_date() >= DATE '2026-01-01'"), "TTTT");
  EXPECT_EQ(Eval("current_timestamp() > TIMESTAMP '2026-01-01 00:00:00'"), "TTTT");
  EXPECT_TRUE(Fails("year(name) = 1"));
  // Stored rules (generation expressions, CHECK constraints) must be deterministic.
  auto parsed = ParseExpression("current_date() > d");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(BindPredicate(*parsed, *schema_).ok());
}

}  // namespace
}  // namespace deltacpp::internal
