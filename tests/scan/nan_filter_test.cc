// Filters over floating-point columns holding NaN keep Spark's answers: NaN equals NaN and is
// greater than every other value, -0.0 equals 0.0. File statistics and Parquet row-group
// statistics (which leave NaN out of min/max) must not skip a file or row group whose NaN rows
// satisfy the filter.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::shared_ptr<arrow::Array> Floats(const std::vector<std::optional<double>>& values) {
  arrow::FloatBuilder b;
  for (const auto& v : values) {
    EXPECT_TRUE((v ? b.Append(static_cast<float>(*v)) : b.AppendNull()).ok());
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(b.Finish(&out).ok());
  return out;
}

std::shared_ptr<arrow::Table> Rows(std::vector<std::optional<int64_t>> ids,
                                   const std::vector<std::optional<double>>& values) {
  return MakeTable({{"id", Int64s(ids)}, {"d", Doubles(values)}, {"f", Floats(values)}});
}

class NaNFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    ASSERT_TRUE(w.Create(Rows({}, {})->schema()).ok());
    // Row groups of two rows: [1.0, NaN] and [NaN, 0.5] have Parquet maximums below NaN.
    ASSERT_TRUE(w.Append({FixtureFile(Rows({1, 2, 3, 4, 5, 6},
                                           {1.0, kNaN, -2.5, std::nullopt, kNaN, 0.5}))
                              .WithMaxRowGroupRows(2)})
                    .ok());
    // No NaN here: its statistics bound it to [-0.0, 3.0].
    ASSERT_TRUE(w.Append({FixtureFile(Rows({7, 8, 9}, {3.0, -0.0, 2.0}))}).ok());
    // Only NaN.
    ASSERT_TRUE(w.Append({FixtureFile(Rows({10, 11}, {kNaN, kNaN}))}).ok());
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  std::vector<int64_t> Ids(const std::string& filter) {
    auto scan = Plan(*snap_, {}, filter);
    if (!scan) return {-1};
    auto t = Read(*scan);
    if (!t) return {-1};
    return SortedIds(*t);
  }

  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
};

using IdList = std::vector<int64_t>;

TEST_F(NaNFilterTest, FiltersMatchSparkOnDoubleAndFloatColumns) {
  for (const std::string column : {"d", "f"}) {
    SCOPED_TRACE(column);
    EXPECT_EQ(Ids(column + " > 1.0"), (IdList{2, 5, 7, 9, 10, 11}));
    EXPECT_EQ(Ids(column + " > 2.5"), (IdList{2, 5, 7, 10, 11}));
    EXPECT_EQ(Ids(column + " >= 'NaN'"), (IdList{2, 5, 10, 11}));
    EXPECT_EQ(Ids(column + " > 'NaN'"), (IdList{}));
    EXPECT_EQ(Ids(column + " = 'NaN'"), (IdList{2, 5, 10, 11}));
    EXPECT_EQ(Ids(column + " <=> 'NaN'"), (IdList{2, 5, 10, 11}));
    EXPECT_EQ(Ids(column + " < 1.0"), (IdList{3, 6, 8}));
    EXPECT_EQ(Ids(column + " < 'NaN'"), (IdList{1, 3, 6, 7, 8, 9}));
    EXPECT_EQ(Ids(column + " <= 'NaN'"), (IdList{1, 2, 3, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(Ids(column + " <> 1.0"), (IdList{2, 3, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(Ids(column + " != 'NaN'"), (IdList{1, 3, 6, 7, 8, 9}));
    EXPECT_EQ(Ids(column + " IN ('NaN', '3')"), (IdList{2, 5, 7, 10, 11}));
    EXPECT_EQ(Ids(column + " NOT IN ('NaN', '3')"), (IdList{1, 3, 6, 8, 9}));
    EXPECT_EQ(Ids(column + " BETWEEN 2 AND 'NaN'"), (IdList{2, 5, 7, 9, 10, 11}));
    EXPECT_EQ(Ids(column + " = 0"), (IdList{8}));
    EXPECT_EQ(Ids("NOT (" + column + " <= 1.0)"), (IdList{2, 5, 7, 9, 10, 11}));
  }
}

TEST_F(NaNFilterTest, FilesWithoutNaNAreStillSkippedByTheirBounds) {
  auto scan = Plan(*snap_, {}, "d < -1");
  ASSERT_NE(scan, nullptr);
  // [-0.0, 3.0] cannot hold a value below -1; the other files' bounds are unknown (NaN).
  EXPECT_EQ(scan->num_skipped_files(), 1);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t), (IdList{3}));
}

}  // namespace
}  // namespace deltacpp::scantest
