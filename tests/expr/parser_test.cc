#include <gtest/gtest.h>

#include <arrow/util/decimal.h>

#include "deltacpp/error.h"
#include "expr/parser.h"

namespace deltacpp::internal {
namespace {

ExprPtr Col(std::vector<std::string> path) { return Expr::MakeColumn(std::move(path)); }
ExprPtr Col(const char* name) { return Expr::MakeColumn({name}); }
ExprPtr Int(int32_t v) { return Expr::MakeLiteral(std::make_shared<arrow::Int32Scalar>(v)); }
ExprPtr Str(std::string v) {
  return Expr::MakeLiteral(std::make_shared<arrow::StringScalar>(std::move(v)));
}
ExprPtr Cmp(CompareOp op, ExprPtr l, ExprPtr r) {
  return Expr::MakeComparison(op, std::move(l), std::move(r));
}
ExprPtr Eq(ExprPtr l, ExprPtr r) { return Cmp(CompareOp::kEq, std::move(l), std::move(r)); }
ExprPtr Arith(ArithOp op, ExprPtr l, ExprPtr r) {
  return Expr::MakeArithmetic(op, std::move(l), std::move(r));
}

ExprPtr Parse(const std::string& sql) {
  auto result = ParseExpression(sql);
  EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  return result.ok() ? *result : Expr::MakeLiteral(nullptr);
}

void ExpectTree(const std::string& sql, const ExprPtr& expected) {
  auto actual = Parse(sql);
  EXPECT_TRUE(actual->Equals(*expected))
      << sql << "\n  parsed:   " << actual->ToString() << "\n  expected: " << expected->ToString();
}

// The literal a one-literal expression parses to.
std::shared_ptr<arrow::Scalar> LiteralOf(const std::string& sql) {
  auto e = Parse(sql);
  EXPECT_EQ(e->kind(), ExprKind::kLiteral) << sql;
  return e->literal();
}

void ExpectLiteral(const std::string& sql, const arrow::Scalar& expected) {
  auto actual = LiteralOf(sql);
  EXPECT_TRUE(actual->Equals(expected))
      << sql << ": got " << actual->type->ToString() << " " << actual->ToString() << ", want "
      << expected.type->ToString() << " " << expected.ToString();
}

arrow::Status ParseError(const std::string& sql) {
  auto result = ParseExpression(sql);
  EXPECT_FALSE(result.ok()) << sql << " parsed as " << (*result)->ToString();
  if (result.ok()) return arrow::Status::OK();
  EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kInvalidExpression))
      << result.status().ToString();
  return result.status();
}

void ExpectErrorMentions(const std::string& sql, std::vector<std::string> fragments) {
  auto st = ParseError(sql);
  for (const auto& f : fragments) {
    EXPECT_NE(st.message().find(f), std::string::npos)
        << "error for `" << sql << "` lacks \"" << f << "\": " << st.message();
  }
}

TEST(Parser, AndBindsTighterThanOr) {
  ExpectTree("a OR b AND c", Expr::MakeOr(Col("a"), Expr::MakeAnd(Col("b"), Col("c"))));
  ExpectTree("a AND b OR c", Expr::MakeOr(Expr::MakeAnd(Col("a"), Col("b")), Col("c")));
  ExpectTree("(a OR b) AND c", Expr::MakeAnd(Expr::MakeOr(Col("a"), Col("b")), Col("c")));
}

TEST(Parser, NotBindsLooserThanComparisonTighterThanAnd) {
  ExpectTree("NOT a = 1 AND b",
             Expr::MakeAnd(Expr::MakeNot(Eq(Col("a"), Int(1))), Col("b")));
  ExpectTree("NOT NOT a", Expr::MakeNot(Expr::MakeNot(Col("a"))));
}

TEST(Parser, ArithmeticPrecedenceAndAssociativity) {
  ExpectTree("a + b * c = d - e / f",
             Eq(Arith(ArithOp::kAdd, Col("a"), Arith(ArithOp::kMul, Col("b"), Col("c"))),
                Arith(ArithOp::kSub, Col("d"), Arith(ArithOp::kDiv, Col("e"), Col("f")))));
  ExpectTree("a - b - c",
             Arith(ArithOp::kSub, Arith(ArithOp::kSub, Col("a"), Col("b")), Col("c")));
  ExpectTree("a / (b - c)",
             Arith(ArithOp::kDiv, Col("a"), Arith(ArithOp::kSub, Col("b"), Col("c"))));
  ExpectTree("-a * b", Arith(ArithOp::kMul, Expr::MakeNegate(Col("a")), Col("b")));
  ExpectTree("+a", Col("a"));
  ExpectTree("a - -3", Arith(ArithOp::kSub, Col("a"), Int(-3)));
}

TEST(Parser, EveryComparisonOperator) {
  const std::pair<const char*, CompareOp> cases[] = {
      {"=", CompareOp::kEq},  {"==", CompareOp::kEq}, {"!=", CompareOp::kNe},
      {"<>", CompareOp::kNe}, {"<", CompareOp::kLt},  {"<=", CompareOp::kLe},
      {">", CompareOp::kGt},  {">=", CompareOp::kGe}, {"<=>", CompareOp::kNullSafeEq}};
  for (const auto& [symbol, op] : cases) {
    ExpectTree(std::string("x ") + symbol + " 1", Cmp(op, Col("x"), Int(1)));
    ExpectTree(std::string("x") + symbol + "1", Cmp(op, Col("x"), Int(1)));
  }
}

TEST(Parser, IsNullInBetween) {
  ExpectTree("x IS NULL", Expr::MakeIsNull(Col("x"), false));
  ExpectTree("x is not null OR y IS NULL",
             Expr::MakeOr(Expr::MakeIsNull(Col("x"), true), Expr::MakeIsNull(Col("y"), false)));
  ExpectTree("x IN (1, 2, 3)", Expr::MakeIn(Col("x"), {Int(1), Int(2), Int(3)}, false));
  ExpectTree("x NOT IN ('a')", Expr::MakeIn(Col("x"), {Str("a")}, true));
  ExpectTree("x in (y + 1, NULL)",
             Expr::MakeIn(Col("x"),
                          {Arith(ArithOp::kAdd, Col("y"), Int(1)),
                           Expr::MakeLiteral(std::make_shared<arrow::NullScalar>())},
                          false));
  ExpectTree("x BETWEEN 1 AND 10 AND y",
             Expr::MakeAnd(Expr::MakeBetween(Col("x"), Int(1), Int(10), false), Col("y")));
  ExpectTree("x NOT BETWEEN 1 + 1 AND 5",
             Expr::MakeBetween(Col("x"), Arith(ArithOp::kAdd, Int(1), Int(1)), Int(5), true));
  ExpectTree("a = b IS NULL", Expr::MakeIsNull(Eq(Col("a"), Col("b")), false));
}

TEST(Parser, KeywordsAreCaseInsensitive) {
  ExpectTree("a and B Or not c",
             Expr::MakeOr(Expr::MakeAnd(Col("a"), Col("B")), Expr::MakeNot(Col("c"))));
  ExpectTree("x Is Not NuLL", Expr::MakeIsNull(Col("x"), true));
  ExpectTree("x nOt iN (1)", Expr::MakeIn(Col("x"), {Int(1)}, true));
  ExpectTree("x between 1 and 2", Expr::MakeBetween(Col("x"), Int(1), Int(2), false));
  ExpectLiteral("tRuE", arrow::BooleanScalar(true));
  ExpectLiteral("date '2021-03-04'", arrow::Date32Scalar(18690));
  ExpectLiteral("Timestamp_Ntz '2021-01-01 10:00:00'",
                arrow::TimestampScalar(1609495200000000, arrow::timestamp(arrow::TimeUnit::MICRO)));
}

TEST(Parser, ColumnReferences) {
  ExpectTree("a.b.c = 1", Eq(Col({"a", "b", "c"}), Int(1)));
  ExpectTree("`my col` = 1", Eq(Col("my col"), Int(1)));
  ExpectTree("`a.b`.c", Col({"a.b", "c"}));
  ExpectTree("a.`x y`", Col({"a", "x y"}));
  ExpectTree("`we``ird`", Col("we`ird"));
  ExpectTree("`select`", Col("select"));
  ExpectTree("`and` AND `or`", Expr::MakeAnd(Col("and"), Col("or")));
  ExpectTree("_x1", Col("_x1"));
  // DATE / TIMESTAMP are only literal prefixes when a string follows.
  ExpectTree("date = timestamp", Eq(Col("date"), Col("timestamp")));
}

TEST(Parser, FunctionCalls) {
  ExpectTree("lower(name) = 'x'", Eq(Expr::MakeFunction("lower", {Col("name")}), Str("x")));
  ExpectTree("coalesce(a, b.c, 0)",
             Expr::MakeFunction("coalesce", {Col("a"), Col({"b", "c"}), Int(0)}));
  ExpectTree("now()", Expr::MakeFunction("now", {}));
}

TEST(Parser, NullAndBooleanLiterals) {
  auto null_literal = LiteralOf("NULL");
  EXPECT_FALSE(null_literal->is_valid);
  EXPECT_EQ(null_literal->type->id(), arrow::Type::NA);
  ExpectLiteral("TRUE", arrow::BooleanScalar(true));
  ExpectLiteral("false", arrow::BooleanScalar(false));
}

TEST(Parser, IntegerLiteralsTakeTheSmallestSparkType) {
  ExpectLiteral("5", arrow::Int32Scalar(5));
  ExpectLiteral("2147483647", arrow::Int32Scalar(2147483647));
  ExpectLiteral("2147483648", arrow::Int64Scalar(2147483648LL));
  ExpectLiteral("-2147483648", arrow::Int32Scalar(INT32_MIN));
  ExpectLiteral("-9223372036854775808", arrow::Int64Scalar(INT64_MIN));
  ExpectLiteral("9223372036854775808",
                arrow::Decimal128Scalar(arrow::Decimal128("9223372036854775808"),
                                        arrow::decimal128(19, 0)));
  ExpectLiteral("10L", arrow::Int64Scalar(10));
  ExpectLiteral("10s", arrow::Int16Scalar(10));
  ExpectLiteral("10Y", arrow::Int8Scalar(10));
  ExpectLiteral("-128Y", arrow::Int8Scalar(-128));
}

TEST(Parser, DecimalAndFloatingLiterals) {
  ExpectLiteral("1.50", arrow::Decimal128Scalar(arrow::Decimal128(150), arrow::decimal128(3, 2)));
  ExpectLiteral("0.05", arrow::Decimal128Scalar(arrow::Decimal128(5), arrow::decimal128(2, 2)));
  ExpectLiteral("-1.5", arrow::Decimal128Scalar(arrow::Decimal128(-15), arrow::decimal128(2, 1)));
  ExpectLiteral(".5", arrow::Decimal128Scalar(arrow::Decimal128(5), arrow::decimal128(1, 1)));
  ExpectLiteral("7BD", arrow::Decimal128Scalar(arrow::Decimal128(7), arrow::decimal128(1, 0)));
  ExpectLiteral("1.5e3", arrow::DoubleScalar(1500.0));
  ExpectLiteral("2E-2", arrow::DoubleScalar(0.02));
  ExpectLiteral("1.5D", arrow::DoubleScalar(1.5));
  ExpectLiteral("2.5f", arrow::FloatScalar(2.5f));
}

TEST(Parser, StringLiterals) {
  ExpectLiteral("'it''s'", arrow::StringScalar("it's"));
  ExpectLiteral("\"double \"\"quoted\"\"\"", arrow::StringScalar("double \"quoted\""));
  ExpectLiteral("'a\\'b'", arrow::StringScalar("a'b"));
  ExpectLiteral("'tab\\there'", arrow::StringScalar("tab\there"));
  ExpectLiteral("'\\u00e9'", arrow::StringScalar("\xc3\xa9"));
  ExpectLiteral("'ab' 'cd'", arrow::StringScalar("abcd"));
  ExpectLiteral("''", arrow::StringScalar(""));
  ExpectLiteral("X'0aFF'", arrow::BinaryScalar(std::string("\x0a\xff", 2)));
}

TEST(Parser, DateAndTimestampLiterals) {
  const auto utc = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
  const auto ntz = arrow::timestamp(arrow::TimeUnit::MICRO);
  ExpectLiteral("DATE '2021-03-04'", arrow::Date32Scalar(18690));
  ExpectLiteral("DATE '2000-02-29'", arrow::Date32Scalar(11016));
  ExpectLiteral("DATE '1969-12-31'", arrow::Date32Scalar(-1));
  ExpectLiteral("TIMESTAMP '2021-01-01 10:00:00'", arrow::TimestampScalar(1609495200000000, utc));
  ExpectLiteral("TIMESTAMP '2021-01-01 10:00:00.123456'",
                arrow::TimestampScalar(1609495200123456, utc));
  ExpectLiteral("TIMESTAMP '2021-01-01 10:00:00.123'",
                arrow::TimestampScalar(1609495200123000, utc));
  ExpectLiteral("TIMESTAMP '2021-01-01T10:00:00Z'", arrow::TimestampScalar(1609495200000000, utc));
  ExpectLiteral("TIMESTAMP '2021-01-01 10:00:00+02:00'",
                arrow::TimestampScalar(1609488000000000, utc));
  ExpectLiteral("TIMESTAMP '2021-01-01 00:00:00 -05:30'",
                arrow::TimestampScalar(1609479000000000, utc));
  ExpectLiteral("TIMESTAMP '1969-12-31 23:59:59.999999'", arrow::TimestampScalar(-1, utc));
  ExpectLiteral("TIMESTAMP '2021-01-01'", arrow::TimestampScalar(1609459200000000, utc));
  ExpectLiteral("TIMESTAMP_NTZ '2021-01-01 10:00:00.123456'",
                arrow::TimestampScalar(1609495200123456, ntz));
}

TEST(Parser, ErrorsNameThePositionAndTheToken) {
  ExpectErrorMentions("a = = 1", {"position 5", "'='"});
  ExpectErrorMentions("a AND", {"position 6", "end of input"});
  ExpectErrorMentions("(a = 1", {"position 7", "expected ')'"});
  ExpectErrorMentions("a = 'abc", {"position 5", "unterminated string"});
  ExpectErrorMentions("a # 1", {"position 3", "'#'", "unexpected character"});
  ExpectErrorMentions("a IN ()", {"position 7", "must not be empty"});
  ExpectErrorMentions("a IS 5", {"position 6", "'5'", "expected NULL"});
  ExpectErrorMentions("a BETWEEN 1 OR 2", {"position 13", "'OR'", "expected AND"});
  ExpectErrorMentions("1 2", {"position 3", "'2'", "expected end of expression"});
  ExpectErrorMentions("", {"empty expression"});
  ExpectErrorMentions("   ", {"empty expression"});
  ExpectErrorMentions("and = 1", {"position 1", "'and'", "keyword"});
  ExpectErrorMentions("a.", {"position 3", "field name"});
  ExpectErrorMentions("a.5", {"position 3", "field name"});
  ExpectErrorMentions("`unclosed", {"position 1", "unterminated quoted identifier"});
  ExpectErrorMentions("x = 12abc", {"position 5", "'12abc'", "malformed number"});
  ExpectErrorMentions("x = 99999999999999999999999999999999999999999", {"position 5", "out of range"});
  ExpectErrorMentions("x = 300Y", {"TINYINT"});
  ExpectErrorMentions("x = 1.5L", {"position 5", "integer suffix"});
  ExpectErrorMentions("X'abc'", {"position 1", "even number"});
  ExpectErrorMentions("x = DATE '2021-13-01'", {"position 10", "invalid DATE"});
  ExpectErrorMentions("x = DATE '2021-02-29'", {"invalid DATE"});
  ExpectErrorMentions("x = TIMESTAMP '2021-01-01 25:00:00'", {"position 15", "invalid TIMESTAMP"});
  ExpectErrorMentions("TIMESTAMP_NTZ '2021-01-01 00:00:00Z'", {"time zone"});
  ExpectErrorMentions("f(a,", {"position 5", "end of input"});
  ExpectErrorMentions("a = NOT b", {"position 5", "'NOT'"});
  ExpectErrorMentions("a LIKE 'x' ESCAPE 'xy'", {"position 19", "ESCAPE"});
}

TEST(Parser, ErrorMessagesQuoteTheExpression) {
  auto st = ParseError("a = = 1");
  EXPECT_NE(st.message().find("\"a = = 1\""), std::string::npos) << st.message();
}

TEST(Parser, DeepNestingIsRejectedNotCrashing) {
  std::string deep(5000, '(');
  deep += "a";
  deep += std::string(5000, ')');
  ExpectErrorMentions(deep, {"nested too deeply"});
  std::string nots;
  for (int i = 0; i < 5000; ++i) nots += "NOT ";
  ExpectErrorMentions(nots + "a", {"nested too deeply"});
}

TEST(ExprToString, PrintsMinimalParentheses) {
  EXPECT_EQ(Parse("a OR b AND c")->ToString(), "a OR b AND c");
  EXPECT_EQ(Parse("(a OR b) AND c")->ToString(), "(a OR b) AND c");
  EXPECT_EQ(Parse("a - (b - c)")->ToString(), "a - (b - c)");
  EXPECT_EQ(Parse("(a * b) + c")->ToString(), "a * b + c");
  EXPECT_EQ(Parse("NOT (a = 1)")->ToString(), "NOT a = 1");
  EXPECT_EQ(Parse("`my col` = 'it''s'")->ToString(), "`my col` = 'it''s'");
  EXPECT_EQ(Parse("x not between 1 and 2")->ToString(), "x NOT BETWEEN 1 AND 2");
  EXPECT_EQ(Parse("x <> 1")->ToString(), "x != 1");
  EXPECT_EQ(Parse("d = date '2021-01-01'")->ToString(), "d = DATE '2021-01-01'");
  EXPECT_EQ(Parse("t = TIMESTAMP '2021-01-01 10:00:00+02:00'")->ToString(),
            "t = TIMESTAMP '2021-01-01 08:00:00'");
}

TEST(ExprToString, RoundTripsThroughTheParser) {
  const char* cases[] = {
      "a OR b AND NOT c",
      "(a OR b) AND (c OR d)",
      "a - (b - c) * -d / (e + 1)",
      "x IS NOT NULL AND y IS NULL",
      "x NOT IN (1, 2L, 3S, 4Y, NULL) OR x IN ('a', \"b\")",
      "x BETWEEN 1.5 AND 2.5e1",
      "`we``ird`.`a b`.c <=> X'00ff'",
      "d >= DATE '2021-01-01' AND t < TIMESTAMP '2021-01-01 10:00:00.5' AND "
      "n = TIMESTAMP_NTZ '2021-01-01 00:00:00'",
      "lower(s) = 'it''s \\\\ here' AND coalesce(a, 0) > 5BD",
      "NOT NOT (a = b) = c",
      "(a = 1) IS NULL",
      "x = -2147483648 AND y = 2.5F AND z = 1.25D AND w = -0.001",
      "(a BETWEEN 1 AND 2) = TRUE",
      "- -a",
  };
  for (const char* sql : cases) {
    auto first = Parse(sql);
    auto text = first->ToString();
    auto second = Parse(text);
    EXPECT_TRUE(first->Equals(*second)) << sql << " printed as " << text << " reparsed as "
                                        << second->ToString();
  }
}

TEST(ExprToString, PositionsPointAtTheSource) {
  auto e = Parse("a = 1 AND bb > 2");
  ASSERT_EQ(e->kind(), ExprKind::kAnd);
  EXPECT_EQ(e->position(), 6u);
  EXPECT_EQ(e->children()[1]->children()[0]->position(), 10u);
}

}  // namespace
}  // namespace deltacpp::internal
