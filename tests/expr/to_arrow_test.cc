#include <gtest/gtest.h>

#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/json/from_string.h>

#include <limits>
#include <optional>

#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"

namespace deltacpp::internal {
namespace {

namespace cp = arrow::compute;

// Arrow's compute kernels live in libarrow_compute and must be registered once.
class ComputeEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_TRUE(cp::Initialize().ok()); }
};
[[maybe_unused]] const auto* const kComputeEnvironment =
    ::testing::AddGlobalTestEnvironment(new ComputeEnvironment);

class ToArrowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto info = arrow::struct_({arrow::field("city", arrow::utf8()), arrow::field("zip", arrow::int32())});
    schema_ = arrow::schema({
        arrow::field("id", arrow::int64()),
        arrow::field("name", arrow::utf8()),
        arrow::field("score", arrow::int32()),
        arrow::field("price", arrow::decimal128(10, 2)),
        arrow::field("flag", arrow::boolean()),
        arrow::field("d", arrow::date32()),
        arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
        arrow::field("info", info),
    });
    // Rows: 2021-01-01 = day 18628, 2021-06-15 = 18793, 2022-01-01 = 18993.
    const char* rows = R"([
      {"id": 1, "name": "alice", "score": 10, "price": "1.50", "flag": true, "d": 18628,
       "ts": 1609495200000000, "info": {"city": "Paris", "zip": 75000}},
      {"id": 2, "name": "bob", "score": null, "price": "20.00", "flag": false, "d": 18793,
       "ts": 1623715200000000, "info": {"city": "Berlin", "zip": null}},
      {"id": 3, "name": null, "score": 30, "price": null, "flag": null, "d": null,
       "ts": null, "info": null},
      {"id": 4, "name": "Dave", "score": 40, "price": "3.25", "flag": true, "d": 18993,
       "ts": 1641081599500000, "info": {"city": null, "zip": 10115}}
    ])";
    auto array = arrow::json::ArrayFromJSONString(arrow::struct_(schema_->fields()), rows);
    ASSERT_TRUE(array.ok()) << array.status().ToString();
    auto batch = arrow::RecordBatch::FromStructArray(*array);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    batch_ = *batch;
  }

  arrow::Result<std::shared_ptr<arrow::Array>> Run(const std::string& sql, bool as_filter) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(sql));
    ARROW_ASSIGN_OR_RAISE(auto bound, BindPredicate(parsed, *schema_));
    ARROW_ASSIGN_OR_RAISE(auto expr, as_filter ? ToArrowFilter(bound) : ToArrowExpression(bound));
    ARROW_ASSIGN_OR_RAISE(expr, expr.Bind(*schema_));
    ARROW_ASSIGN_OR_RAISE(auto datum, cp::ExecuteScalarExpression(expr, *schema_, arrow::Datum(batch_)));
    if (datum.is_scalar()) {
      return arrow::MakeArrayFromScalar(*datum.scalar(), batch_->num_rows());
    }
    return datum.make_array();
  }

  // The predicate's value per row: T, F or N (NULL).
  std::string Eval(const std::string& sql) {
    auto result = Run(sql, false);
    if (!result.ok()) return "error: " + result.status().ToString();
    const auto& values = static_cast<const arrow::BooleanArray&>(**result);
    std::string out;
    for (int64_t i = 0; i < values.length(); ++i) {
      out += values.IsNull(i) ? 'N' : (values.Value(i) ? 'T' : 'F');
    }
    return out;
  }

  // The ids of the rows the filter keeps.
  std::string Matching(const std::string& sql) {
    auto result = Run(sql, true);
    if (!result.ok()) return "error: " + result.status().ToString();
    const auto& values = static_cast<const arrow::BooleanArray&>(**result);
    const auto& ids = static_cast<const arrow::Int64Array&>(*batch_->column(0));
    std::string out;
    for (int64_t i = 0; i < values.length(); ++i) {
      EXPECT_FALSE(values.IsNull(i)) << "filter produced NULL for " << sql;
      if (!values.IsNull(i) && values.Value(i)) out += std::to_string(ids.Value(i));
    }
    return out;
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::RecordBatch> batch_;
};

TEST_F(ToArrowTest, ComparisonsWithNullsAreUnknown) {
  EXPECT_EQ(Eval("score > 15"), "FNTT");
  EXPECT_EQ(Eval("score = 10"), "TNFF");
  EXPECT_EQ(Eval("score != 10"), "FNTT");
  EXPECT_EQ(Eval("score <= 30"), "TNTF");
  EXPECT_EQ(Eval("15 < score"), "FNTT");
  EXPECT_EQ(Eval("score = NULL"), "NNNN");
  EXPECT_EQ(Matching("score > 15"), "34");
}

TEST_F(ToArrowTest, KleeneLogic) {
  EXPECT_EQ(Eval("score > 15 OR flag"), "TNTT");
  EXPECT_EQ(Eval("score > 15 AND flag"), "FFNT");
  EXPECT_EQ(Eval("NOT (score > 15)"), "TNFF");
  EXPECT_EQ(Eval("flag"), "TFNT");
  EXPECT_EQ(Eval("NOT flag"), "FTNF");
  EXPECT_EQ(Eval("NULL"), "NNNN");
  EXPECT_EQ(Eval("flag OR NULL"), "TNNT");
  EXPECT_EQ(Matching("score > 15 OR flag"), "134");
  EXPECT_EQ(Matching("NOT (score > 15)"), "1");
  EXPECT_EQ(Matching("NULL"), "");
}

TEST_F(ToArrowTest, IsNull) {
  EXPECT_EQ(Eval("name IS NULL"), "FFTF");
  EXPECT_EQ(Eval("name IS NOT NULL"), "TTFT");
  EXPECT_EQ(Eval("score > 15 IS NULL"), "FTFF");
}

TEST_F(ToArrowTest, InFollowsSqlNullRules) {
  EXPECT_EQ(Eval("score IN (10, 40)"), "TNFT");
  EXPECT_EQ(Eval("score IN (10, NULL)"), "TNNN");
  EXPECT_EQ(Eval("score NOT IN (10)"), "FNTT");
  EXPECT_EQ(Eval("score NOT IN (10, NULL)"), "FNNN");
  EXPECT_EQ(Matching("score NOT IN (10, NULL)"), "");
  EXPECT_EQ(Eval("name IN ('bob', 'Dave')"), "FTNT");
  EXPECT_EQ(Eval("score IN (id * 10, 40)"), "TNTT");
  EXPECT_EQ(Eval("price IN (1.5, 3.25)"), "TFNT");
}

TEST_F(ToArrowTest, NullSafeEquality) {
  EXPECT_EQ(Eval("score <=> NULL"), "FTFF");
  EXPECT_EQ(Eval("score <=> 10"), "TFFF");
  EXPECT_EQ(Eval("score <=> id * 10"), "TFTT");
  EXPECT_EQ(Eval("NULL <=> NULL"), "TTTT");
}

TEST_F(ToArrowTest, Between) {
  EXPECT_EQ(Eval("score BETWEEN 10 AND 30"), "TNTF");
  EXPECT_EQ(Eval("score NOT BETWEEN 10 AND 30"), "FNFT");
}

TEST_F(ToArrowTest, DecimalsDatesAndTimestamps) {
  EXPECT_EQ(Eval("price > 2"), "FTNT");
  EXPECT_EQ(Eval("price = 1.5"), "TFNF");
  EXPECT_EQ(Eval("price > 1.499"), "TTNT");
  EXPECT_EQ(Eval("d >= '2021-06-01'"), "FTNT");
  EXPECT_EQ(Eval("d = DATE '2021-01-01'"), "TFNF");
  EXPECT_EQ(Eval("ts < TIMESTAMP '2021-06-15 00:00:00.000001'"), "TTNF");
  EXPECT_EQ(Eval("ts > '2022-01-01 23:59:59'"), "FFNT");
  EXPECT_EQ(Eval("ts = TIMESTAMP '2021-01-01 12:00:00+02:00'"), "TFNF");
  EXPECT_EQ(Eval("d < TIMESTAMP '2021-06-15 12:00:00'"), "TTNF");
  EXPECT_EQ(Eval("ts >= DATE '2021-06-15'"), "FTNT");
}

TEST_F(ToArrowTest, NestedFields) {
  EXPECT_EQ(Eval("info.city = 'Paris'"), "TFNN");
  EXPECT_EQ(Eval("INFO.ZIP IS NULL"), "FTTF");
  EXPECT_EQ(Eval("info.zip > 50000"), "TNNF");
}

TEST_F(ToArrowTest, ArithmeticAndFunctions) {
  EXPECT_EQ(Eval("id + score > 40"), "FNFT");
  EXPECT_EQ(Eval("score / 4 = 2.5"), "TNFF");
  EXPECT_EQ(Eval("-score < -20"), "FNTT");
  EXPECT_EQ(Eval("price * 2 > 6"), "FTNT");
  EXPECT_EQ(Eval("price + 1 = 2.5"), "TFNF");
  EXPECT_EQ(Eval("score - id * 10 = 0"), "TNTT");
  EXPECT_EQ(Eval("lower(name) = 'dave'"), "FFNT");
  EXPECT_EQ(Eval("upper(name) = 'BOB'"), "FTNF");
  EXPECT_EQ(Eval("length(name) = 3"), "FTNF");
  EXPECT_EQ(Eval("abs(-score) = 30"), "FNTF");
  EXPECT_EQ(Eval("coalesce(score, 0) = 0"), "FTFF");
}

TEST_F(ToArrowTest, IntegerOverflowIsAnErrorNotAWrongAnswer) {
  auto result = Run("id * 9223372036854775807 > 0", false);
  EXPECT_FALSE(result.ok());
}

TEST_F(ToArrowTest, DivisionByZeroIsAnErrorAsUnderAnsiSql) {
  EXPECT_FALSE(Run("score / 0 IS NULL", false).ok());
  EXPECT_FALSE(Run("id / (score - score) > 1", false).ok());
  EXPECT_EQ(Eval("score / 4 = 2.5"), "TNFF");
}

// Spark's floating-point comparisons: NaN = NaN, NaN above every other value, -0.0 = 0.0.
class NaNComparisonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = arrow::schema({arrow::field("d", arrow::float64()),
                             arrow::field("f", arrow::float32()),
                             arrow::field("e", arrow::float64())});
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // Rows: 1.0, NaN, -2.5, NULL, +Infinity, -0.0 (f holds the same values as FLOAT).
    const std::vector<std::optional<double>> d = {1.0, nan, -2.5, std::nullopt, inf, -0.0};
    const std::vector<std::optional<double>> e = {nan, nan, 1.0, 1.0, std::nullopt, 0.0};
    arrow::DoubleBuilder db, eb;
    arrow::FloatBuilder fb;
    for (size_t i = 0; i < d.size(); ++i) {
      ASSERT_TRUE((d[i] ? db.Append(*d[i]) : db.AppendNull()).ok());
      ASSERT_TRUE((d[i] ? fb.Append(static_cast<float>(*d[i])) : fb.AppendNull()).ok());
      ASSERT_TRUE((e[i] ? eb.Append(*e[i]) : eb.AppendNull()).ok());
    }
    std::shared_ptr<arrow::Array> da, fa, ea;
    ASSERT_TRUE(db.Finish(&da).ok());
    ASSERT_TRUE(fb.Finish(&fa).ok());
    ASSERT_TRUE(eb.Finish(&ea).ok());
    batch_ = arrow::RecordBatch::Make(schema_, static_cast<int64_t>(d.size()), {da, fa, ea});
  }

  // T, F or N per row; with `as_filter`, 1 or 0 per row.
  std::string Eval(const std::string& sql, bool as_filter = false) {
    auto parsed = ParseExpression(sql);
    if (!parsed.ok()) return parsed.status().ToString();
    auto bound = BindPredicate(*parsed, *schema_);
    if (!bound.ok()) return bound.status().ToString();
    auto expr = as_filter ? ToArrowFilter(*bound) : ToArrowExpression(*bound);
    if (!expr.ok()) return expr.status().ToString();
    auto bound_expr = expr->Bind(*schema_);
    if (!bound_expr.ok()) return bound_expr.status().ToString();
    auto datum = cp::ExecuteScalarExpression(*bound_expr, *schema_, arrow::Datum(batch_));
    if (!datum.ok()) return datum.status().ToString();
    auto array = datum->is_scalar() ? *arrow::MakeArrayFromScalar(*datum->scalar(), 6)
                                    : datum->make_array();
    const auto& values = static_cast<const arrow::BooleanArray&>(*array);
    std::string out;
    for (int64_t i = 0; i < values.length(); ++i) {
      if (as_filter) {
        out += values.IsNull(i) ? '?' : (values.Value(i) ? '1' : '0');
      } else {
        out += values.IsNull(i) ? 'N' : (values.Value(i) ? 'T' : 'F');
      }
    }
    return out;
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::RecordBatch> batch_;
};

TEST_F(NaNComparisonTest, ComparisonsWithLiterals) {
  for (const char* column : {"d", "f"}) {
    SCOPED_TRACE(column);
    auto c = [&](const std::string& rest) { return std::string(column) + rest; };
    EXPECT_EQ(Eval(c(" > 1.0")), "FTFNTF");
    EXPECT_EQ(Eval(c(" > 1.0"), true), "010010");
    EXPECT_EQ(Eval(c(" >= 1.0")), "TTFNTF");
    EXPECT_EQ(Eval(c(" < 1.0")), "FFTNFT");
    EXPECT_EQ(Eval(c(" <= 1.0")), "TFTNFT");
    EXPECT_EQ(Eval(c(" = 1.0")), "TFFNFF");
    EXPECT_EQ(Eval(c(" <> 1.0")), "FTTNTT");
    EXPECT_EQ(Eval(c(" = 'NaN'")), "FTFNFF");
    EXPECT_EQ(Eval(c(" != 'NaN'")), "TFTNTT");
    EXPECT_EQ(Eval(c(" >= 'NaN'")), "FTFNFF");
    EXPECT_EQ(Eval(c(" > 'NaN'")), "FFFNFF");
    EXPECT_EQ(Eval(c(" < 'NaN'")), "TFTNTT");
    EXPECT_EQ(Eval(c(" <= 'NaN'")), "TTTNTT");
    EXPECT_EQ(Eval(c(" > 'Infinity'")), "FTFNFF");
    EXPECT_EQ(Eval(c(" = 0.0D")), "FFFNFT");
    EXPECT_EQ(Eval(c(" <=> 'NaN'")), "FTFFFF");
    EXPECT_EQ(Eval(c(" IN ('NaN', '1.0')")), "TTFNFF");
    EXPECT_EQ(Eval(c(" IN (0.0D)")), "FFFNFT");
    EXPECT_EQ(Eval(c(" NOT IN ('NaN')")), "TFTNTT");
    EXPECT_EQ(Eval(c(" BETWEEN -3 AND 2")), "TFTNFT");
    EXPECT_EQ(Eval(c(" BETWEEN 0 AND 'NaN'")), "TTFNTT");
    EXPECT_EQ(Eval(c(" NOT BETWEEN -3 AND 2")), "FTFNTF");
    EXPECT_EQ(Eval("NOT (" + c(" > 1.0") + ")"), "TFTNFT");
  }
}

TEST_F(NaNComparisonTest, ComparisonsOfTwoColumns) {
  EXPECT_EQ(Eval("d = e"), "FTFNNT");
  EXPECT_EQ(Eval("d != e"), "TFTNNF");
  EXPECT_EQ(Eval("d < e"), "TFTNNF");
  EXPECT_EQ(Eval("d <= e"), "TTTNNT");
  EXPECT_EQ(Eval("d > e"), "FFFNNF");
  EXPECT_EQ(Eval("d >= e"), "FTFNNT");
  EXPECT_EQ(Eval("d <=> e"), "FTFFFT");
  EXPECT_EQ(Eval("e IN (d, 7)"), "FTFNNT");
  EXPECT_EQ(Eval("f = e"), "FTFNNT");
}

TEST_F(ToArrowTest, FilterRejectsNonBoolean) {
  auto parsed = ParseExpression("id + 1");
  ASSERT_TRUE(parsed.ok());
  auto bound = Bind(*parsed, *schema_);
  ASSERT_TRUE(bound.ok());
  EXPECT_FALSE(ToArrowFilter(*bound).ok());
  EXPECT_TRUE(ToArrowExpression(*bound).ok());
}

}  // namespace
}  // namespace deltacpp::internal
