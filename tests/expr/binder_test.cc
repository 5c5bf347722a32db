#include <gtest/gtest.h>

#include <arrow/util/decimal.h>
#include <arrow/util/key_value_metadata.h>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/parser.h"

namespace deltacpp::internal {
namespace {

std::shared_ptr<arrow::Field> Mapped(std::string name, std::shared_ptr<arrow::DataType> type,
                                     std::string physical_json) {
  return arrow::field(std::move(name), std::move(type), true,
                      arrow::key_value_metadata({"delta.columnMapping.physicalName"},
                                                {std::move(physical_json)}));
}

std::shared_ptr<arrow::Schema> TestSchema() {
  auto info = arrow::struct_({Mapped("City", arrow::utf8(), "\"col-city\""),
                              arrow::field("zip", arrow::int32())});
  return arrow::schema({
      arrow::field("id", arrow::int64()),
      arrow::field("Name", arrow::utf8()),
      arrow::field("score", arrow::int32()),
      arrow::field("price", arrow::decimal128(10, 2)),
      arrow::field("ratio", arrow::float64()),
      arrow::field("small", arrow::float32()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("d", arrow::date32()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ts_ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
      Mapped("info", info, "\"col-info\""),
      Mapped("mapped", arrow::int32(), "\"col-5f3a\""),
      Mapped("unquoted", arrow::int32(), "raw-name"),
      arrow::field("tags", arrow::list(arrow::utf8())),
  });
}

arrow::Result<BoundExpr> BindSql(const std::string& sql,
                                 const std::shared_ptr<arrow::Schema>& schema = TestSchema()) {
  ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(sql));
  return BindPredicate(parsed, *schema);
}

BoundExpr MustBind(const std::string& sql) {
  auto result = BindSql(sql);
  EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  return result.ok() ? *result : BoundExpr{};
}

std::string BindError(const std::string& sql,
                      const std::shared_ptr<arrow::Schema>& schema = TestSchema()) {
  auto result = BindSql(sql, schema);
  EXPECT_FALSE(result.ok()) << sql << " bound as " << result->ToString();
  if (result.ok()) return "";
  EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kInvalidExpression))
      << result.status().ToString();
  return result.status().message();
}

void ExpectScalar(const BoundExpr& e, const arrow::Scalar& expected) {
  ASSERT_EQ(e.kind, BoundKind::kLiteral) << e.ToString();
  EXPECT_TRUE(e.literal->Equals(expected))
      << "got " << e.literal->type->ToString() << " " << e.literal->ToString() << ", want "
      << expected.type->ToString() << " " << expected.ToString();
  EXPECT_TRUE(e.type->Equals(*expected.type));
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST(Binder, ResolvesColumnsCaseInsensitively) {
  auto e = MustBind("NAME = 'x'");
  ASSERT_EQ(e.kind, BoundKind::kComparison);
  const auto& col = e.children[0];
  ASSERT_EQ(col.kind, BoundKind::kColumn);
  EXPECT_EQ(col.column.logical_path, std::vector<std::string>{"Name"});
  EXPECT_EQ(col.column.physical_path, std::vector<std::string>{"Name"});
  EXPECT_TRUE(col.type->Equals(*arrow::utf8()));
  EXPECT_TRUE(e.type->Equals(*arrow::boolean()));
}

TEST(Binder, ResolvesNestedFieldsWithPhysicalNames) {
  auto e = MustBind("INFO.city = 'Paris'");
  const auto& col = e.children[0].column;
  EXPECT_EQ(col.logical_path, (std::vector<std::string>{"info", "City"}));
  EXPECT_EQ(col.physical_path, (std::vector<std::string>{"col-info", "col-city"}));
  EXPECT_EQ(col.LogicalName(), "info.City");
  EXPECT_EQ(col.PhysicalName(), "col-info.col-city");
  EXPECT_TRUE(col.type->Equals(*arrow::utf8()));

  auto zip = MustBind("info.ZIP > 5").children[0].column;
  EXPECT_EQ(zip.physical_path, (std::vector<std::string>{"col-info", "zip"}));
  EXPECT_TRUE(zip.type->Equals(*arrow::int32()));
}

TEST(Binder, PhysicalNameComesFromMetadataWithQuotesStripped) {
  EXPECT_EQ(MustBind("mapped > 1").children[0].column.PhysicalName(), "col-5f3a");
  EXPECT_EQ(MustBind("unquoted > 1").children[0].column.PhysicalName(), "raw-name");
  EXPECT_EQ(MustBind("id > 1").children[0].column.PhysicalName(), "id");
}

TEST(Binder, UnknownColumnListsTheAvailableOnes) {
  auto msg = BindError("nope = 1");
  EXPECT_CONTAINS(msg, "column 'nope' not found; available: id, Name, score");
  EXPECT_CONTAINS(msg, "position 1");
  msg = BindError("id = 1 AND info.street = 'x'");
  EXPECT_CONTAINS(msg, "column 'info.street' not found");
  EXPECT_CONTAINS(msg, "has no field 'street'; available: City, zip");
  EXPECT_CONTAINS(msg, "position 12");
  EXPECT_CONTAINS(BindError("id.x = 1"), "'id' is BIGINT, not a struct");
}

TEST(Binder, AmbiguousColumnIsAnError) {
  auto schema = arrow::schema({arrow::field("a", arrow::int32()), arrow::field("A", arrow::int32())});
  EXPECT_CONTAINS(BindError("a = 1", schema), "ambiguous");
  // Exact-case columns are ambiguous too, as in Spark.
  EXPECT_CONTAINS(BindError("A = 1", schema), "ambiguous");
}

TEST(Binder, IntegerLiteralTakesTheColumnType) {
  auto e = MustBind("id = 5");
  EXPECT_EQ(e.children[0].kind, BoundKind::kColumn);
  ExpectScalar(e.children[1], arrow::Int64Scalar(5));
  // Literal on the left is converted too.
  ExpectScalar(MustBind("5 < id").children[0], arrow::Int64Scalar(5));
}

TEST(Binder, LiteralTooWideForTheColumnWidensTheColumn) {
  auto e = MustBind("score = 5000000000");
  ASSERT_EQ(e.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(e.children[0].type->Equals(*arrow::int64()));
  EXPECT_EQ(e.children[0].children[0].kind, BoundKind::kColumn);
  ExpectScalar(e.children[1], arrow::Int64Scalar(5000000000LL));

  auto frac = MustBind("score = 1.5");
  ASSERT_EQ(frac.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(frac.children[0].type->Equals(*arrow::decimal128(11, 1)));
  ExpectScalar(frac.children[1],
               arrow::Decimal128Scalar(arrow::Decimal128(15), arrow::decimal128(11, 1)));

  auto dbl = MustBind("score < 2.5D");
  ASSERT_EQ(dbl.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(dbl.children[0].type->Equals(*arrow::float64()));
}

TEST(Binder, NumericLiteralsAgainstDecimalAndFloatingColumns) {
  ExpectScalar(MustBind("price = 5").children[1],
               arrow::Decimal128Scalar(arrow::Decimal128(500), arrow::decimal128(10, 2)));
  ExpectScalar(MustBind("price > 1.5").children[1],
               arrow::Decimal128Scalar(arrow::Decimal128(150), arrow::decimal128(10, 2)));
  auto wider = MustBind("price > 1.234");
  ASSERT_EQ(wider.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(wider.children[0].type->Equals(*arrow::decimal128(11, 3)));
  ExpectScalar(wider.children[1],
               arrow::Decimal128Scalar(arrow::Decimal128(1234), arrow::decimal128(11, 3)));
  ExpectScalar(MustBind("ratio < 1").children[1], arrow::DoubleScalar(1.0));
  ExpectScalar(MustBind("ratio < 0.25").children[1], arrow::DoubleScalar(0.25));
  ExpectScalar(MustBind("small < 0.5").children[1], arrow::FloatScalar(0.5f));
  // 0.1 is not a FLOAT: Spark compares in DOUBLE, so the column is widened.
  auto inexact = MustBind("small = 0.1");
  ASSERT_EQ(inexact.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(inexact.children[0].type->Equals(*arrow::float64()));
  ExpectScalar(MustBind("score = '7'").children[1], arrow::Int32Scalar(7));
}

TEST(Binder, StringLiteralsAgainstDateAndTimestampColumns) {
  ExpectScalar(MustBind("d = '2021-01-01'").children[1], arrow::Date32Scalar(18628));
  ExpectScalar(MustBind("ts >= '2021-01-01 10:00:00'").children[1],
               arrow::TimestampScalar(1609495200000000,
                                      arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  ExpectScalar(MustBind("ts >= '2021-01-01T10:00:00+02:00'").children[1],
               arrow::TimestampScalar(1609488000000000,
                                      arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  ExpectScalar(MustBind("ts_ntz < '2021-01-01 10:00:00'").children[1],
               arrow::TimestampScalar(1609495200000000, arrow::timestamp(arrow::TimeUnit::MICRO)));
  EXPECT_CONTAINS(BindError("d = 'not a date'"), "DATE");
  EXPECT_CONTAINS(BindError("ts_ntz = '2021-01-01 00:00:00Z'"), "time zone");
}

TEST(Binder, DateAndTimestampLiteralsMix) {
  ExpectScalar(MustBind("ts > DATE '2021-01-01'").children[1],
               arrow::TimestampScalar(1609459200000000,
                                      arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  auto widened = MustBind("d < TIMESTAMP '2021-01-01 12:00:00'");
  ASSERT_EQ(widened.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(widened.children[0].type->Equals(*arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  ExpectScalar(MustBind("d = TIMESTAMP '2021-01-01 00:00:00'").children[1],
               arrow::Date32Scalar(18628));
  auto ntz = MustBind("ts_ntz = TIMESTAMP_NTZ '2021-01-01 10:00:00'");
  EXPECT_EQ(ntz.children[0].kind, BoundKind::kColumn);
}

TEST(Binder, TypeMismatchesAreInvalidExpressions) {
  auto msg = BindError("Name = true");
  EXPECT_CONTAINS(msg, "cannot compare STRING column 'Name' with BOOLEAN literal TRUE");
  EXPECT_CONTAINS(msg, "position 6");
  EXPECT_CONTAINS(BindError("flag = 1"), "BOOLEAN column 'flag'");
  EXPECT_CONTAINS(BindError("Name > 5"), "cannot compare");
  EXPECT_CONTAINS(BindError("flag = 'true'"), "cannot compare");
  EXPECT_CONTAINS(BindError("score = 'abc'"), "'abc' is not a valid INT");
  EXPECT_CONTAINS(BindError("info = 1"), "STRUCT");
  EXPECT_CONTAINS(BindError("tags = 'a'"), "ARRAY<STRING>");
  EXPECT_CONTAINS(BindError("d = 5"), "cannot compare DATE column 'd'");
  EXPECT_CONTAINS(BindError("id AND flag"), "AND needs BOOLEAN operands, got BIGINT column 'id'");
  EXPECT_CONTAINS(BindError("flag OR 1"), "OR needs BOOLEAN operands");
  EXPECT_CONTAINS(BindError("NOT score"), "NOT needs a BOOLEAN operand");
  EXPECT_CONTAINS(BindError("Name + 1 > 2"), "arithmetic needs numeric operands");
  EXPECT_CONTAINS(BindError("id IN (1, 'x')"), "cannot");
  EXPECT_CONTAINS(BindError("score BETWEEN 1 AND 'z'"), "cannot");
}

TEST(Binder, PredicatesMustBeBoolean) {
  EXPECT_CONTAINS(BindError("id + 1"), "must be BOOLEAN");
  EXPECT_EQ(MustBind("flag").kind, BoundKind::kColumn);
  auto null_pred = MustBind("NULL");
  ExpectScalar(null_pred, *arrow::MakeNullScalar(arrow::boolean()));
  // Bind() itself accepts any type.
  auto parsed = ParseExpression("id + 1");
  ASSERT_TRUE(parsed.ok());
  auto bound = Bind(*parsed, *TestSchema());
  ASSERT_TRUE(bound.ok());
  EXPECT_TRUE(bound->type->Equals(*arrow::int64()));
}

TEST(Binder, BetweenAndNotInAreRewritten) {
  auto between = MustBind("score BETWEEN 1 AND 10");
  ASSERT_EQ(between.kind, BoundKind::kAnd);
  EXPECT_EQ(between.children[0].compare_op, CompareOp::kGe);
  EXPECT_EQ(between.children[1].compare_op, CompareOp::kLe);
  ExpectScalar(between.children[1].children[1], arrow::Int32Scalar(10));

  auto not_between = MustBind("score NOT BETWEEN 1 AND 10");
  ASSERT_EQ(not_between.kind, BoundKind::kNot);
  EXPECT_EQ(not_between.children[0].kind, BoundKind::kAnd);

  auto not_in = MustBind("id NOT IN (1, 2, NULL)");
  ASSERT_EQ(not_in.kind, BoundKind::kNot);
  const auto& in = not_in.children[0];
  ASSERT_EQ(in.kind, BoundKind::kIn);
  ASSERT_EQ(in.children.size(), 4u);
  ExpectScalar(in.children[1], arrow::Int64Scalar(1));
  ExpectScalar(in.children[3], *arrow::MakeNullScalar(arrow::int64()));

  auto mixed = MustBind("score IN (1, 5000000000)");
  EXPECT_EQ(mixed.children[0].kind, BoundKind::kCast);
  ExpectScalar(mixed.children[1], arrow::Int64Scalar(1));

  auto is_not_null = MustBind("Name IS NOT NULL");
  EXPECT_EQ(is_not_null.kind, BoundKind::kIsNotNull);
}

TEST(Binder, ArithmeticResultTypes) {
  EXPECT_TRUE(MustBind("score + 1 > 0").children[0].type->Equals(*arrow::int32()));
  auto mixed = MustBind("score + id > 0").children[0];
  EXPECT_TRUE(mixed.type->Equals(*arrow::int64()));
  EXPECT_EQ(mixed.children[0].kind, BoundKind::kCast);
  EXPECT_TRUE(MustBind("score / 2 > 0").children[0].type->Equals(*arrow::float64()));
  EXPECT_TRUE(MustBind("price * 2 > 0").children[0].type->Equals(*arrow::decimal128(12, 2)));
  EXPECT_TRUE(MustBind("price + 1 > 0").children[0].type->Equals(*arrow::decimal128(11, 2)));
  EXPECT_TRUE(MustBind("ratio - score > 0").children[0].type->Equals(*arrow::float64()));
  EXPECT_TRUE(MustBind("-score < 0").children[0].type->Equals(*arrow::int32()));
}

TEST(Binder, Functions) {
  EXPECT_TRUE(MustBind("lower(name) = 'x'").children[0].type->Equals(*arrow::utf8()));
  EXPECT_TRUE(MustBind("LENGTH(name) > 3").children[0].type->Equals(*arrow::int32()));
  EXPECT_TRUE(MustBind("abs(score) > 3").children[0].type->Equals(*arrow::int32()));
  auto c = MustBind("coalesce(score, id, 0) > 3").children[0];
  EXPECT_TRUE(c.type->Equals(*arrow::int64()));
  EXPECT_EQ(c.function, "coalesce");
  EXPECT_CONTAINS(BindError("frobnicate(id) = 1"), "unknown function 'frobnicate'");
  EXPECT_CONTAINS(BindError("lower(id) = 'x'"), "needs a STRING argument");
  EXPECT_CONTAINS(BindError("lower(name, name) = 'x'"), "takes 1 argument");
}

TEST(Binder, ReferencedColumnsAreDistinctInFirstUseOrder) {
  auto cols = ReferencedColumns(MustBind("score > 1 AND info.city = 'x' OR SCORE < 0 AND id = 2"));
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(cols[0].LogicalName(), "score");
  EXPECT_EQ(cols[1].LogicalName(), "info.City");
  EXPECT_EQ(cols[2].LogicalName(), "id");
}

TEST(Binder, ToStringShowsImplicitCasts) {
  EXPECT_EQ(MustBind("score = 5000000000").ToString(), "(CAST(score AS BIGINT) = 5000000000)");
  EXPECT_EQ(MustBind("id = 5").ToString(), "(id = 5L)");
}

}  // namespace
}  // namespace deltacpp::internal
