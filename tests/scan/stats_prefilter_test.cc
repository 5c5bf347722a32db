// Skipping a whole batch of files from typed statistics: only conjuncts `column op literal` on
// integer and date columns, only files whose bounds are known, and never a file some row of
// which can match.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include "expr/binder.h"
#include "expr/parser.h"
#include "log/typed_stats.h"
#include "scan/stats_prefilter.h"

namespace deltacpp::internal {
namespace {

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("d", arrow::date32()),
                        arrow::field("x", arrow::float64()), arrow::field("s", arrow::utf8())});
}

// One file per entry: id in [lo, hi], d in [lo days, hi days], x and s bounds too.
std::shared_ptr<arrow::StructArray> Stats(const std::vector<std::optional<std::string>>& json) {
  arrow::StringBuilder b;
  for (const auto& j : json) {
    EXPECT_TRUE((j ? b.Append(*j) : b.AppendNull()).ok());
  }
  auto text = *b.Finish();
  StatsLayout layout(Schema());
  auto parsed = ParseStatsColumn(static_cast<const arrow::StringArray&>(*text), layout);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return *parsed;
}

std::string File(int lo, int hi) {
  return fmt::format(
      R"({{"numRecords":5,"minValues":{{"id":{},"d":"1970-01-{:02d}","x":{},"s":"a"}},"maxValues":{{"id":{},"d":"1970-01-{:02d}","x":{},"s":"z"}},"nullCount":{{"id":0}}}})",
      lo, lo + 1, lo, hi, hi + 1, hi);
}

std::vector<bool> Skipped(const std::string& filter, const arrow::StructArray& stats) {
  auto parsed = ParseExpression(filter);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  auto bound = BindPredicate(*parsed, *Schema());
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  auto skip = SkippedByBounds(*bound, stats);
  EXPECT_TRUE(skip.ok()) << skip.status().ToString();
  return *skip;
}

TEST(StatsPrefilter, ComparisonsSkipExactlyTheFilesOutsideTheBounds) {
  auto stats = Stats({File(0, 9), File(10, 19), File(20, 29)});
  EXPECT_EQ(Skipped("id = 15", *stats), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Skipped("15 = id", *stats), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Skipped("id < 10", *stats), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(Skipped("id <= 10", *stats), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(Skipped("id > 19", *stats), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(Skipped("id >= 19", *stats), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(Skipped("id >= 12 AND id < 20", *stats), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Skipped("d = DATE '1970-01-25'", *stats), (std::vector<bool>{true, true, false}));
}

TEST(StatsPrefilter, OnlyConjunctsItUnderstandsDecide) {
  auto stats = Stats({File(0, 9), File(10, 19)});
  // OR, NOT, != and non-integer columns are left to the file-by-file rules.
  EXPECT_TRUE(Skipped("id = 15 OR id = 3", *stats).empty());
  EXPECT_TRUE(Skipped("NOT (id = 15)", *stats).empty());
  EXPECT_TRUE(Skipped("id != 15", *stats).empty());
  EXPECT_TRUE(Skipped("x > 100", *stats).empty());
  EXPECT_TRUE(Skipped("s = 'zz'", *stats).empty());
  // A conjunct it understands still decides beside one it does not.
  EXPECT_EQ(Skipped("id = 15 AND x > 100", *stats), (std::vector<bool>{true, false}));
}

TEST(StatsPrefilter, FilesWithoutStatisticsOrBoundsAreNeverSkipped) {
  auto stats = Stats({std::nullopt, R"({"numRecords":3,"minValues":{"id":50}})",
                      R"({"numRecords":3})", "not json", File(0, 9)});
  EXPECT_EQ(Skipped("id = 5", *stats), (std::vector<bool>{false, false, false, false, false}));
  EXPECT_EQ(Skipped("id = 100", *stats), (std::vector<bool>{false, false, false, false, true}));
  // The lower bound alone decides `id < 10` for the second file.
  EXPECT_EQ(Skipped("id < 10", *stats), (std::vector<bool>{false, true, false, false, false}));
}

}  // namespace
}  // namespace deltacpp::internal
