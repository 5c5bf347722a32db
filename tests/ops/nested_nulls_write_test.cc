// Nested columns with NOT NULL fields: a null struct (at the top, in an array or as a map value)
// holds nulls in its NOT NULL fields, which is valid data; writes take it and reads (the scan
// and the CLI's Parquet output) return it.
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>

#include <filesystem>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::TempDir;

std::shared_ptr<arrow::DataType> Element(bool k_nullable) {
  return arrow::struct_({arrow::field("k", arrow::utf8(), k_nullable),
                         arrow::field("v", arrow::int64())});
}

std::shared_ptr<arrow::Schema> TableSchema(bool inner_nullable) {
  return arrow::schema({
      arrow::field("id", arrow::int64(), false),
      arrow::field("s", arrow::struct_({arrow::field("a", arrow::int32(), inner_nullable),
                                        arrow::field("b", arrow::utf8())})),
      arrow::field("tags", arrow::list(arrow::field("element", Element(inner_nullable)))),
      arrow::field("m", arrow::map(arrow::utf8(), arrow::field("value", Element(inner_nullable)))),
  });
}

// Row 1: s null, tags [{k:x, v:1}, null], m {p: null}; row 2: s {a:1, b:y}, tags null, m null.
std::shared_ptr<arrow::RecordBatch> Input() {
  auto schema = TableSchema(true);  // as JSON or Parquet input arrives: every field nullable
  std::vector<std::shared_ptr<arrow::Array>> columns = {
      *arrow::json::ArrayFromJSONString(arrow::int64(), "[1, 2]"),
      *arrow::json::ArrayFromJSONString(schema->field(1)->type(), R"([null, {"a": 1, "b": "y"}])"),
      *arrow::json::ArrayFromJSONString(schema->field(2)->type(),
                                        R"([[{"k": "x", "v": 1}, null], null])"),
      *arrow::json::ArrayFromJSONString(schema->field(3)->type(), R"([[["p", null]], null])"),
  };
  return arrow::RecordBatch::Make(schema, 2, columns);
}

class NestedNulls : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.str() + "/t";
    CreateTableOptions create;
    create.schema = TableSchema(false);
    ASSERT_TRUE(CreateTable(root_, create).ok());
    auto written = WriteTable(root_, testing::Reader(Input()->schema(), {Input()}), {});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  TempDir dir_;
  std::string root_;
};

TEST_F(NestedNulls, NullStructsWithNotNullFieldsAreWrittenAndReadBack) {
  auto table = testing::ReadTable(root_);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto sorted = *arrow::compute::SortIndices(*(*table)->GetColumnByName("id"));
  auto rows = *arrow::compute::Take(arrow::Datum(*table), arrow::Datum(sorted));
  const auto& t = *rows.table();
  ASSERT_EQ(t.num_rows(), 2);
  EXPECT_FALSE((*t.GetColumnByName("s")->GetScalar(0))->is_valid);
  EXPECT_EQ((*t.GetColumnByName("s")->GetScalar(1))->ToString(), "{a:int32 = 1, b:string = y}");
  auto tags = *t.GetColumnByName("tags")->GetScalar(0);
  const auto& list = static_cast<const arrow::ListScalar&>(*tags).value;
  ASSERT_EQ(list->length(), 2);
  EXPECT_TRUE(list->IsValid(0));
  EXPECT_TRUE(list->IsNull(1));
  EXPECT_FALSE((*t.GetColumnByName("tags")->GetScalar(1))->is_valid);
  auto m = *t.GetColumnByName("m")->GetScalar(0);
  const auto& entries = static_cast<const arrow::MapScalar&>(*m).value;
  ASSERT_EQ(entries->length(), 1);
  EXPECT_TRUE(static_cast<const arrow::StructArray&>(*entries).field(1)->IsNull(0));
}

TEST_F(NestedNulls, TopLevelNotNullIsStillEnforced) {
  auto batch = Input();
  auto ids = *arrow::json::ArrayFromJSONString(arrow::int64(), "[3, null]");
  auto bad = *batch->SetColumn(0, batch->schema()->field(0), ids);
  auto r = WriteTable(root_, testing::Reader(bad->schema(), {bad}), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(testing::Code(r.status()), "ConstraintViolation") << r.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root_), 1);
}

TEST_F(NestedNulls, NullInANotNullFieldOfAPresentElementIsRefused) {
  auto batch = Input();
  auto tags = *arrow::json::ArrayFromJSONString(batch->schema()->field(2)->type(),
                                                R"([[{"k": null, "v": 1}], null])");
  auto bad = *batch->SetColumn(2, batch->schema()->field(2), tags);
  auto r = WriteTable(root_, testing::Reader(bad->schema(), {bad}), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(testing::Code(r.status()), "SchemaMismatch") << r.status().ToString();
  EXPECT_NE(r.status().message().find("column 'tags'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("field 'k'"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root_), 1);
}

}  // namespace
}  // namespace deltacpp
