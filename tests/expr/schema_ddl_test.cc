#include <gtest/gtest.h>

#include "deltacpp/error.h"
#include "expr/schema_ddl.h"

namespace deltacpp::internal {
namespace {

TEST(SchemaDdl, AcceptsDeltaAndSqlTypeNamesCaseInsensitively) {
  auto schema = ParseColumnDefinitions(
      "id long NOT NULL, n INT, b BIGINT, s string, v VARCHAR(10), d DECIMAL(10,2), "
      "x decimal, t TIMESTAMP, tz timestamp_ntz, dt date, f float, db Double, by TINYINT, "
      "sh smallint, bo boolean, bi binary");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const auto& s = **schema;
  ASSERT_EQ(s.num_fields(), 16);
  EXPECT_TRUE(s.field(0)->type()->Equals(arrow::int64()));
  EXPECT_FALSE(s.field(0)->nullable());
  EXPECT_TRUE(s.field(1)->nullable());
  EXPECT_TRUE(s.field(1)->type()->Equals(arrow::int32()));
  EXPECT_TRUE(s.field(2)->type()->Equals(arrow::int64()));
  EXPECT_TRUE(s.field(3)->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(s.field(4)->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(s.field(5)->type()->Equals(arrow::decimal128(10, 2)));
  EXPECT_TRUE(s.field(6)->type()->Equals(arrow::decimal128(10, 0)));
  EXPECT_TRUE(s.field(7)->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  EXPECT_TRUE(s.field(8)->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO)));
  EXPECT_TRUE(s.field(9)->type()->Equals(arrow::date32()));
  EXPECT_TRUE(s.field(10)->type()->Equals(arrow::float32()));
  EXPECT_TRUE(s.field(11)->type()->Equals(arrow::float64()));
  EXPECT_TRUE(s.field(12)->type()->Equals(arrow::int8()));
  EXPECT_TRUE(s.field(13)->type()->Equals(arrow::int16()));
  EXPECT_TRUE(s.field(14)->type()->Equals(arrow::boolean()));
  EXPECT_TRUE(s.field(15)->type()->Equals(arrow::binary()));
}

TEST(SchemaDdl, NestedTypes) {
  auto schema = ParseColumnDefinitions(
      "tags ARRAY<STRING>, m MAP<STRING, INT>, p STRUCT<x: DOUBLE, y DOUBLE NOT NULL>, "
      "deep ARRAY<STRUCT<a ARRAY<INT>>>");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const auto& s = **schema;
  EXPECT_TRUE(s.field(0)->type()->Equals(arrow::list(arrow::field("element", arrow::utf8()))));
  EXPECT_TRUE(s.field(1)->type()->Equals(arrow::map(arrow::utf8(), arrow::int32())));
  auto p = s.field(2)->type();
  ASSERT_EQ(p->num_fields(), 2);
  EXPECT_EQ(p->field(0)->name(), "x");
  EXPECT_TRUE(p->field(0)->nullable());
  EXPECT_FALSE(p->field(1)->nullable());
  EXPECT_EQ(s.field(3)->type()->ToString(),
            "list<element: struct<a: list<element: int32>>>");
}

TEST(SchemaDdl, GeneratedColumnsAndCommentsBecomeFieldMetadata) {
  auto schema = ParseColumnDefinitions(
      "ts TIMESTAMP, day DATE GENERATED ALWAYS AS ( CAST(ts AS DATE) ) COMMENT 'the \"day\"'");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  auto md = (*schema)->field(1)->metadata();
  ASSERT_TRUE(md);
  EXPECT_EQ(*md->Get("delta.generationExpression"), "\"CAST(ts AS DATE)\"");
  EXPECT_EQ(*md->Get("comment"), "\"the \\\"day\\\"\"");
}

TEST(SchemaDdl, ErrorsNameThePositionAndCause) {
  auto bad_type = ParseColumnDefinitions("id lng");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_TRUE(IsDeltaError(bad_type.status(), DeltaErrorCode::kInvalidExpression));
  EXPECT_NE(bad_type.status().message().find("unknown type name"), std::string::npos);
  EXPECT_NE(bad_type.status().message().find("lng"), std::string::npos);
  auto dup = ParseColumnDefinitions("id long, ID int");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("defined twice"), std::string::npos);
  EXPECT_FALSE(ParseColumnDefinitions("d decimal(40, 2)").ok());
  EXPECT_FALSE(ParseColumnDefinitions("a ARRAY<INT").ok());
  EXPECT_FALSE(ParseColumnDefinitions("").ok());
  EXPECT_FALSE(ParseColumnDefinitions("id long NOT").ok());
}

}  // namespace
}  // namespace deltacpp::internal
