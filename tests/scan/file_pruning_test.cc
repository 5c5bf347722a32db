// Planning: partition pruning (typed partition values, NULL partitions, values needing escaping)
// and skipping files by their column statistics.
#include <gtest/gtest.h>

#include <filesystem>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

// ---------------------------------------------------------------------------------------------
// Partition pruning

struct PartitionFile {
  std::optional<std::string> s;  // serialized partition values
  std::optional<std::string> n;
  std::optional<std::string> d;
  std::vector<int64_t> ids;
  // What the partition columns must read as.
  std::optional<std::string> s_value;
  std::optional<int32_t> n_value;
  std::optional<int32_t> d_value;
};

const std::string kSlashes = "a/b=c%d";
const std::string kUnicode = "\xC3\xBCn\xC3\xAF\xC2\xA9 \xE6\x9D\xB1\xE4\xBA\xAC +?#:";

const std::vector<PartitionFile>& PartitionFiles() {
  static const std::vector<PartitionFile> files = {
      {"plain", "1", "2024-01-01", {1, 2}, "plain", 1, Days(2024, 1, 1)},
      {"with space", "2", "2024-01-02", {3}, "with space", 2, Days(2024, 1, 2)},
      {kSlashes, "3", "2024-01-03", {4}, kSlashes, 3, Days(2024, 1, 3)},
      {kUnicode, "4", "2024-01-04", {5}, kUnicode, 4, Days(2024, 1, 4)},
      {std::nullopt, std::nullopt, std::nullopt, {6, 7}, std::nullopt, std::nullopt, std::nullopt},
      {"plain", "5", "2024-02-01", {8}, "plain", 5, Days(2024, 2, 1)},
      // An empty string partition value is NULL.
      {"", "6", "2024-03-01", {9}, std::nullopt, 6, Days(2024, 3, 1)},
  };
  return files;
}

class PartitionedTable : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("s", arrow::utf8()),
                                 arrow::field("n", arrow::int32()), arrow::field("d", arrow::date32())});
    ASSERT_TRUE(w.Create(schema, {"s", "n", "d"}).ok());
    for (const auto& pf : PartitionFiles()) {
      std::vector<std::optional<int64_t>> ids(pf.ids.begin(), pf.ids.end());
      FixtureFile f(MakeTable({{"id", Int64s(ids)}}), {{"s", pf.s}, {"n", pf.n}, {"d", pf.d}});
      names_.push_back(BaseName(AppendOne(w, f)));
    }
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  // Checks that `filter` plans exactly the files with the given indexes (into PartitionFiles())
  // and returns exactly their rows that satisfy `row_ok`.
  void ExpectFiles(const std::string& filter, const std::set<size_t>& indexes,
                   const std::function<bool(int64_t)>& row_ok = [](int64_t) { return true; }) {
    SCOPED_TRACE("filter: " + filter);
    auto scan = Plan(*snap_, {}, filter);
    ASSERT_NE(scan, nullptr);
    std::set<std::string> expected_names;
    std::vector<int64_t> expected_ids;
    for (size_t i : indexes) {
      expected_names.insert(names_[i]);
      for (int64_t id : PartitionFiles()[i].ids) {
        if (row_ok(id)) expected_ids.push_back(id);
      }
    }
    std::sort(expected_ids.begin(), expected_ids.end());
    auto planned = FileBaseNames(*scan);
    EXPECT_EQ(std::set<std::string>(planned.begin(), planned.end()), expected_names);
    EXPECT_EQ(planned.size(), indexes.size());
    EXPECT_EQ(scan->num_skipped_files(),
              static_cast<int64_t>(PartitionFiles().size() - indexes.size()));
    for (const auto& f : scan->files()) EXPECT_TRUE(std::filesystem::exists(f.path)) << f.path;
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), expected_ids);
  }

  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
  std::vector<std::string> names_;  // base name of each file of PartitionFiles()
};

TEST_F(PartitionedTable, PartitionColumnsAreMaterialisedWithTheirDeclaredTypes) {
  auto scan = Plan(*snap_);
  ASSERT_NE(scan, nullptr);
  const auto& schema = *scan->schema();
  EXPECT_EQ(FieldNames(schema), (std::vector<std::string>{"id", "s", "n", "d"}));
  EXPECT_TRUE(schema.field(1)->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(schema.field(2)->type()->Equals(arrow::int32()));
  EXPECT_TRUE(schema.field(3)->type()->Equals(arrow::date32()));
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  auto ids = Int64Values(*t, "id");
  auto s = StringValues(*t, "s");
  auto n = Int32Values(*t, "n");
  auto d = DateValues(*t, "d");
  ASSERT_EQ(ids.size(), 9u);
  ASSERT_EQ(s.size(), ids.size());
  ASSERT_EQ(n.size(), ids.size());
  ASSERT_EQ(d.size(), ids.size());
  std::set<int64_t> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(ids[i].has_value());
    seen.insert(*ids[i]);
    for (const auto& pf : PartitionFiles()) {
      if (std::find(pf.ids.begin(), pf.ids.end(), *ids[i]) == pf.ids.end()) continue;
      SCOPED_TRACE("id " + std::to_string(*ids[i]));
      EXPECT_EQ(s[i], pf.s_value);
      EXPECT_EQ(n[i], pf.n_value);
      EXPECT_EQ(d[i], pf.d_value);
    }
  }
  EXPECT_EQ(seen, (std::set<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST_F(PartitionedTable, EqualityOnStringPartitionReadsOnlyThatFileEvenWithSpecialCharacters) {
  ExpectFiles("s = 'plain'", {0, 5});
  ExpectFiles("s = 'with space'", {1});
  ExpectFiles("s = '" + kSlashes + "'", {2});
  ExpectFiles("s = '" + kUnicode + "'", {3});
  ExpectFiles("s = 'nothing'", {});
}

TEST_F(PartitionedTable, RangeOnIntPartitionPrunesAndSkipsTheNullPartition) {
  ExpectFiles("n >= 4", {3, 5, 6});
  ExpectFiles("n < 3", {0, 1});
  ExpectFiles("n IN (1, 3)", {0, 2});
  ExpectFiles("n BETWEEN 2 AND 5", {1, 2, 3, 5});
}

TEST_F(PartitionedTable, RangeOnDatePartitionPrunes) {
  ExpectFiles("d < DATE '2024-01-03'", {0, 1});
  ExpectFiles("d >= DATE '2024-02-01'", {5, 6});
  ExpectFiles("d = '2024-01-04'", {3});
}

TEST_F(PartitionedTable, IsNullOnPartitionColumnSelectsTheNullPartition) {
  ExpectFiles("s IS NULL", {4, 6});
  ExpectFiles("n IS NULL", {4});
  ExpectFiles("d IS NOT NULL", {0, 1, 2, 3, 5, 6});
  auto scan = Plan(*snap_, {"s", "n", "d", "id"}, "n IS NULL");
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->num_rows(), 2);
  for (int col = 0; col < 3; ++col) EXPECT_EQ(t->column(col)->null_count(), 2) << col;
}

TEST_F(PartitionedTable, NegatedPartitionEqualityExcludesTheNullPartition) {
  ExpectFiles("NOT (s = 'plain')", {1, 2, 3});
  ExpectFiles("s <> 'plain'", {1, 2, 3});
}

TEST_F(PartitionedTable, PartitionAndDataFiltersCombine) {
  ExpectFiles("s = 'plain' AND id > 1", {0, 5}, [](int64_t id) { return id > 1; });
  ExpectFiles("n = 4 OR id = 7", {3, 4}, [](int64_t id) { return id == 5 || id == 7; });
}

TEST_F(PartitionedTable, ProjectionOfPartitionColumnsOnlyKeepsEveryRow) {
  auto scan = Plan(*snap_, {"n", "s"});
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"n", "s"}));
  std::multiset<std::pair<std::optional<int32_t>, std::optional<std::string>>> expected, got;
  for (const auto& pf : PartitionFiles()) {
    for (size_t i = 0; i < pf.ids.size(); ++i) expected.emplace(pf.n_value, pf.s_value);
  }
  auto n = Int32Values(*t, "n");
  auto s = StringValues(*t, "s");
  ASSERT_EQ(n.size(), s.size());
  for (size_t i = 0; i < n.size(); ++i) got.emplace(n[i], s[i]);
  EXPECT_EQ(got, expected);
}

TEST_F(PartitionedTable, PartitionColumnOnlyProjectionWithDataFilter) {
  auto scan = Plan(*snap_, {"d"}, "id = 4");
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(DateValues(*t, "d"), (std::vector<std::optional<int32_t>>{Days(2024, 1, 3)}));
}

// ---------------------------------------------------------------------------------------------
// Statistics skipping

class DisjointRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(writer_.Create(arrow::schema({arrow::field("id", arrow::int64())})).ok());
    for (int k = 0; k < 4; ++k) {
      names_.push_back(BaseName(AppendOne(writer_, FixtureFile(MakeTable({{"id", Range(k * 10, 10)}})))));
    }
  }

  void ExpectPlan(const std::string& filter, const std::vector<std::string>& kept,
                  int64_t skipped, const std::vector<int64_t>& ids) {
    SCOPED_TRACE("filter: " + filter);
    auto snap = OpenLatest(dir_.str());
    ASSERT_NE(snap, nullptr);
    auto scan = Plan(*snap, {}, filter);
    ASSERT_NE(scan, nullptr);
    auto planned = FileBaseNames(*scan);
    EXPECT_EQ(std::set<std::string>(planned.begin(), planned.end()),
              std::set<std::string>(kept.begin(), kept.end()));
    EXPECT_EQ(planned.size(), kept.size());
    EXPECT_EQ(scan->num_skipped_files(), skipped);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), ids);
  }

  TempDir dir_;
  FixtureTableWriter writer_{dir_.str()};
  std::vector<std::string> names_;  // files holding ids [0,9], [10,19], [20,29], [30,39]
};

TEST_F(DisjointRanges, GreaterThanSkipsFilesWhoseMaxIsNotAbove) {
  ExpectPlan("id > 19", {names_[2], names_[3]}, 2, IdsBetween(20, 39));
  ExpectPlan("id > 18", {names_[1], names_[2], names_[3]}, 1, IdsBetween(19, 39));
  ExpectPlan("id > 100", {}, 4, {});
}

TEST_F(DisjointRanges, OtherPredicatesSkipByMinMaxAndNullCount) {
  ExpectPlan("id > 9 AND id < 20", {names_[1]}, 3, IdsBetween(10, 19));
  ExpectPlan("id = 25", {names_[2]}, 3, {25});
  ExpectPlan("id < 0 OR id > 35", {names_[3]}, 3, IdsBetween(36, 39));
  ExpectPlan("NOT (id < 30)", {names_[3]}, 3, IdsBetween(30, 39));
  ExpectPlan("id IN (5, 35)", {names_[0], names_[3]}, 2, {5, 35});
  ExpectPlan("id BETWEEN 12 AND 21", {names_[1], names_[2]}, 2, IdsBetween(12, 21));
  ExpectPlan("id IS NULL", {}, 4, {});
}

TEST_F(DisjointRanges, FileWithoutStatisticsIsNeverSkipped) {
  std::string no_stats =
      BaseName(AppendOne(writer_, FixtureFile(MakeTable({{"id", Range(0, 10)}})).WithStats(false)));
  ExpectPlan("id > 19", {names_[2], names_[3], no_stats}, 2, IdsBetween(20, 39));
  ExpectPlan("id > 100", {no_stats}, 4, {});
  ExpectPlan("id IS NULL", {no_stats}, 4, {});
}

// A partition filter prunes by partition values alone; among the files it keeps, one whose
// stats say it holds no rows is skipped too, and a file without stats is kept.
TEST(EmptyFileSkipping, FilesWithNoRowsAreSkippedUnderAPartitionFilter) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64()),
                                      arrow::field("p", arrow::utf8())}),
                       {"p"})
                  .ok());
  const std::string full = BaseName(AppendOne(w, FixtureFile(MakeTable({{"id", Range(0, 3)}}), {{"p", "a"}})));
  const std::string empty = BaseName(AppendOne(w, FixtureFile(MakeTable({{"id", Range(0, 0)}}), {{"p", "a"}})));
  const std::string unknown = BaseName(AppendOne(
      w, FixtureFile(MakeTable({{"id", Range(0, 0)}}), {{"p", "a"}}).WithStats(false)));
  const std::string other = BaseName(AppendOne(w, FixtureFile(MakeTable({{"id", Range(10, 2)}}), {{"p", "b"}})));
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);
  auto scan = Plan(*snap, {}, "p = 'a'");
  ASSERT_NE(scan, nullptr);
  auto planned = FileBaseNames(*scan);
  EXPECT_EQ(std::set<std::string>(planned.begin(), planned.end()),
            (std::set<std::string>{full, unknown}));
  EXPECT_EQ(scan->num_skipped_files(), 2);  // `empty` by its stats, `other` by its partition
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t), IdsBetween(0, 2));
}

TEST(NullCountSkipping, AllNullAndNoNullFilesAreSkippedByNullTests) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64()),
                                      arrow::field("x", arrow::int64())}))
                  .ok());
  std::string all_null = BaseName(AppendOne(
      w, FixtureFile(MakeTable({{"id", Int64s({1, 2})}, {"x", Int64s({std::nullopt, std::nullopt})}}))));
  std::string no_null =
      BaseName(AppendOne(w, FixtureFile(MakeTable({{"id", Int64s({3, 4})}, {"x", Int64s({7, 8})}}))));
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);
  struct Case {
    std::string filter;
    std::vector<std::string> kept;
    std::vector<int64_t> ids;
  };
  for (const auto& c : std::vector<Case>{{"x IS NULL", {all_null}, {1, 2}},
                                         {"x IS NOT NULL", {no_null}, {3, 4}},
                                         {"x = 7", {no_null}, {3}},
                                         {"NOT (x = 7)", {no_null}, {4}}}) {
    SCOPED_TRACE("filter: " + c.filter);
    auto scan = Plan(*snap, {}, c.filter);
    ASSERT_NE(scan, nullptr);
    EXPECT_EQ(FileBaseNames(*scan), c.kept);
    EXPECT_EQ(scan->num_skipped_files(), 1);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), c.ids);
  }
}

class TruncatedTimestampStats : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64()),
                                        arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))}))
                    .ok());
    late_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"id", Int64s({1, 2})},
                                  {"ts", Timestamps({Micros(2024, 1, 15, 10), Micros(2024, 1, 15, 10, 0, 0, 999)})}}))));
    early_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"id", Int64s({3})}, {"ts", Timestamps({Micros(2024, 1, 15, 9)})}}))));
    // The premise: the recorded maximum of the late file is truncated to the millisecond.
    for (const auto& [key, entry] : w.state().live) {
      if (BaseName(entry.path) != late_) continue;
      ASSERT_TRUE(entry.stats.has_value());
      EXPECT_NE(entry.stats->find("\"maxValues\":{\"id\":2,\"ts\":\"2024-01-15T10:00:00.000Z\"}"),
                std::string::npos)
          << *entry.stats;
    }
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  TempDir dir_;
  std::string late_, early_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(TruncatedTimestampStats, FileWhoseTrueMaxIsWithinTheTruncatedMillisecondIsRead) {
  for (const std::string filter : {"ts > TIMESTAMP '2024-01-15 10:00:00.000500'",
                                   "ts >= TIMESTAMP '2024-01-15 10:00:00.000999'",
                                   "ts = TIMESTAMP '2024-01-15 10:00:00.000999'"}) {
    SCOPED_TRACE("filter: " + filter);
    auto scan = Plan(*snap_, {}, filter);
    ASSERT_NE(scan, nullptr);
    EXPECT_EQ(FileBaseNames(*scan), std::vector<std::string>{late_});
    EXPECT_EQ(scan->num_skipped_files(), 1);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), std::vector<int64_t>{2});
    EXPECT_EQ(TimestampValues(*t, "ts"),
              (std::vector<std::optional<int64_t>>{Micros(2024, 1, 15, 10, 0, 0, 999)}));
  }
}

TEST_F(TruncatedTimestampStats, FileIsSkippedOnceTheFilterPassesTheTruncatedMillisecond) {
  auto scan = Plan(*snap_, {}, "ts > TIMESTAMP '2024-01-15 10:00:00.001'");
  ASSERT_NE(scan, nullptr);
  EXPECT_TRUE(scan->files().empty());
  EXPECT_EQ(scan->num_skipped_files(), 2);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->num_rows(), 0);
}

}  // namespace
}  // namespace deltacpp::scantest
