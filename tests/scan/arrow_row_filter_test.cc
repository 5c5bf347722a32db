// ScanBuilder::Filter(arrow::compute::Expression): an Arrow expression as a row filter, alone and
// together with a SQL filter, over columns that are not projected.
#include <gtest/gtest.h>

#include <arrow/compute/api.h>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

namespace cp = arrow::compute;

class ArrowRowFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    auto rows = MakeTable({{"id", Int64s({1, 2, 3, 4, 5, 6})},
                           {"name", Strings({"a", "b", std::nullopt, "d", "e", "f"})},
                           {"score", Int32s({10, 20, 30, std::nullopt, 50, 60})}});
    ASSERT_TRUE(w.Create(rows->schema()).ok());
    ASSERT_TRUE(w.Append({FixtureFile(rows->Slice(0, 3))}).ok());
    ASSERT_TRUE(w.Append({FixtureFile(rows->Slice(3, 3))}).ok());
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  arrow::Result<std::shared_ptr<Scan>> Build(std::optional<cp::Expression> expr,
                                             std::string sql = "",
                                             std::vector<std::string> columns = {}) {
    auto builder = snap_->NewScan();
    builder.Columns(std::move(columns)).Filter(std::move(sql));
    if (expr) builder.Filter(std::move(*expr));
    return builder.Build();
  }

  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(ArrowRowFilterTest, KeepsRowsWhereTheExpressionIsTrue) {
  auto scan = Build(cp::greater(cp::field_ref("score"), cp::literal(25)), "", {"id"});
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  auto t = Read(**scan);
  ASSERT_NE(t, nullptr);
  // The filter's column is read but not returned; the NULL score of row 4 drops it.
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"id"}));
  EXPECT_EQ(SortedIds(*t), (std::vector<int64_t>{3, 5, 6}));
}

TEST_F(ArrowRowFilterTest, CombinesWithTheSqlFilter) {
  auto scan = Build(cp::is_valid(cp::field_ref("name")), "score >= 20");
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  auto t = Read(**scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t), (std::vector<int64_t>{2, 5, 6}));
}

TEST_F(ArrowRowFilterTest, UnknownColumnsAndNonBooleanExpressionsAreInvalid) {
  auto missing = Build(cp::greater(cp::field_ref("nope"), cp::literal(1)));
  EXPECT_TRUE(IsDeltaError(missing.status(), DeltaErrorCode::kInvalidExpression))
      << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  auto numeric = Build(cp::call("add", {cp::field_ref("id"), cp::literal(int64_t{1})}));
  EXPECT_TRUE(IsDeltaError(numeric.status(), DeltaErrorCode::kInvalidExpression))
      << numeric.status().ToString();
}

}  // namespace
}  // namespace deltacpp::scantest
