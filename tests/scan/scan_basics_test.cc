// Full scans, time travel, projection, missing data files and parallel reading.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <tuple>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

using Row = std::tuple<int64_t, std::optional<std::string>, std::optional<double>>;

// Rows with ids [first, first + count): name "n<id>" (NULL when id % 4 == 0), score id * 1.5
// (NULL when id % 3 == 0).
std::vector<Row> MakeRows(int64_t first, int64_t count) {
  std::vector<Row> rows;
  for (int64_t id = first; id < first + count; ++id) {
    std::optional<std::string> name;
    if (id % 4 != 0) name = "n" + std::to_string(id);
    std::optional<double> score;
    if (id % 3 != 0) score = static_cast<double>(id) * 1.5;
    rows.emplace_back(id, name, score);
  }
  return rows;
}

std::shared_ptr<arrow::Table> RowsToTable(const std::vector<Row>& rows) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> names;
  std::vector<std::optional<double>> scores;
  for (const auto& [id, name, score] : rows) {
    ids.push_back(id);
    names.push_back(name);
    scores.push_back(score);
  }
  return MakeTable({{"id", Int64s(ids)}, {"name", Strings(names)}, {"score", Doubles(scores)}});
}

std::vector<Row> TableToSortedRows(const arrow::Table& table) {
  auto ids = Int64Values(table, "id");
  auto names = StringValues(table, "name");
  auto scores = Values<arrow::DoubleArray, double>(table, "score", arrow::float64());
  EXPECT_EQ(ids.size(), static_cast<size_t>(table.num_rows()));
  EXPECT_EQ(names.size(), ids.size());
  EXPECT_EQ(scores.size(), ids.size());
  std::vector<Row> rows;
  for (size_t i = 0; i < ids.size() && i < names.size() && i < scores.size(); ++i) {
    EXPECT_TRUE(ids[i].has_value());
    rows.emplace_back(ids[i].value_or(-1), names[i], scores[i]);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<Row> Concat(std::initializer_list<std::vector<Row>> parts) {
  std::vector<Row> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::shared_ptr<arrow::Schema> RowSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                        arrow::field("score", arrow::float64())});
}

class MultiVersionTable : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    ASSERT_TRUE(w.Create(RowSchema()).ok());                        // v0: empty
    a_ = MakeRows(1, 3);
    b_ = MakeRows(4, 2);
    c_ = MakeRows(6, 4);
    d_ = MakeRows(10, 2);
    e_ = MakeRows(12, 4);
    ASSERT_TRUE(w.Append({FixtureFile(RowsToTable(a_)), FixtureFile(RowsToTable(b_))}).ok());  // v1
    ASSERT_EQ(w.active_paths().size(), 2u);
    ASSERT_TRUE(w.Append({FixtureFile(RowsToTable(c_))}).ok());  // v2
    // v3: drop the file holding a_ (the only live file of 3 rows), add d_.
    std::string a_path;
    for (const auto& [key, entry] : w.state().live) {
      if (entry.stats && entry.stats->find("\"numRecords\":3,") != std::string::npos) {
        ASSERT_TRUE(a_path.empty());
        a_path = entry.path;
      }
    }
    ASSERT_FALSE(a_path.empty());
    ASSERT_TRUE(w.Remove({a_path}, {FixtureFile(RowsToTable(d_))}).ok());  // v3
    ASSERT_TRUE(w.WriteCheckpoint().ok());
    ASSERT_TRUE(w.Append({FixtureFile(RowsToTable(e_)).WithMaxRowGroupRows(2)}).ok());  // v4
    auto table = DeltaTable::Open(dir_.str());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = *table;
  }

  std::vector<Row> ReadVersion(std::optional<int64_t> version) {
    auto snap = table_->SnapshotAt(version);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (!snap.ok()) return {};
    auto scan = Plan(**snap);
    if (!scan) return {};
    auto result = Read(*scan);
    if (!result) return {};
    EXPECT_TRUE(result->schema()->Equals(*RowSchema(), /*check_metadata=*/false))
        << result->schema()->ToString();
    return TableToSortedRows(*result);
  }

  TempDir dir_;
  std::shared_ptr<DeltaTable> table_;
  std::vector<Row> a_, b_, c_, d_, e_;
};

TEST_F(MultiVersionTable, FullScanReturnsExactlyTheRowsOfTheLiveFiles) {
  EXPECT_EQ(ReadVersion(std::nullopt), Concat({b_, c_, d_, e_}));
}

TEST_F(MultiVersionTable, TimeTravelReadsExactlyTheRowsOfEachVersion) {
  EXPECT_EQ(ReadVersion(0), std::vector<Row>{});
  EXPECT_EQ(ReadVersion(1), Concat({a_, b_}));
  EXPECT_EQ(ReadVersion(2), Concat({a_, b_, c_}));
  EXPECT_EQ(ReadVersion(3), Concat({b_, c_, d_}));
  EXPECT_EQ(ReadVersion(4), Concat({b_, c_, d_, e_}));
}

TEST_F(MultiVersionTable, EmptyVersionScanHasTheTableSchemaAndNoRows) {
  auto snap = table_->SnapshotAt(0);
  ASSERT_TRUE(snap.ok());
  auto scan = Plan(**snap);
  ASSERT_NE(scan, nullptr);
  EXPECT_TRUE(scan->files().empty());
  EXPECT_EQ(scan->num_skipped_files(), 0);
  EXPECT_TRUE(scan->schema()->Equals(*RowSchema(), false)) << scan->schema()->ToString();
  auto result = scan->ToTable();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ((*result)->num_rows(), 0);
  EXPECT_TRUE((*result)->schema()->Equals(*RowSchema(), false));
}

TEST_F(MultiVersionTable, FilesListsEveryLiveFileWithItsSizeOnDisk) {
  auto snap = table_->Latest();
  ASSERT_TRUE(snap.ok());
  auto scan = Plan(**snap);
  ASSERT_NE(scan, nullptr);
  auto files = scan->files();
  EXPECT_EQ(files.size(), 4u);
  EXPECT_EQ(scan->num_skipped_files(), 0);
  for (const auto& f : files) {
    EXPECT_TRUE(std::filesystem::path(f.path).is_absolute()) << f.path;
    ASSERT_TRUE(std::filesystem::exists(f.path)) << f.path;
    EXPECT_EQ(f.size, static_cast<int64_t>(std::filesystem::file_size(f.path))) << f.path;
    EXPECT_EQ(f.deleted_rows, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Projection

class ProjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    auto schema = arrow::schema({arrow::field("A", arrow::int64()), arrow::field("b", arrow::utf8()),
                                 arrow::field("c", arrow::float64())});
    ASSERT_TRUE(w.Create(schema).ok());
    ASSERT_TRUE(w.Append({FixtureFile(MakeTable({{"A", Int64s({1, 2, 3})},
                                                 {"b", Strings({"x", std::nullopt, "z"})},
                                                 {"c", Doubles({0.5, 1.5, 2.5})}}))})
                    .ok());
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }
  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(ProjectionTest, ColumnsComeBackInTheRequestedOrder) {
  auto scan = Plan(*snap_, {"b", "A"});
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(FieldNames(*scan->schema()), (std::vector<std::string>{"b", "A"}));
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"b", "A"}));
  EXPECT_EQ(StringValues(*t, "b"),
            (std::vector<std::optional<std::string>>{"x", std::nullopt, "z"}));
  EXPECT_EQ(Int64Values(*t, "A"), (std::vector<std::optional<int64_t>>{1, 2, 3}));
}

TEST_F(ProjectionTest, ColumnNamesMatchCaseInsensitivelyAndKeepTheSchemaSpelling) {
  auto scan = Plan(*snap_, {"B", "a"});
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(FieldNames(*scan->schema()), (std::vector<std::string>{"b", "A"}));
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->num_columns(), 2);
  EXPECT_EQ(Int64Values(*t, "A"), (std::vector<std::optional<int64_t>>{1, 2, 3}));
}

TEST_F(ProjectionTest, UnknownColumnIsInvalidArgumentNamingIt) {
  auto builder = snap_->NewScan();
  builder.Columns({"b", "no_such_col"});
  auto scan = builder.Build();
  ASSERT_FALSE(scan.ok());
  EXPECT_TRUE(IsDeltaError(scan.status(), DeltaErrorCode::kInvalidArgument))
      << scan.status().ToString();
  EXPECT_NE(scan.status().message().find("no_such_col"), std::string::npos)
      << scan.status().message();
}

// ---------------------------------------------------------------------------------------------
// Missing data files

TEST(MissingDataFile, ScanFailsWithMissingFileNamingTableVersionAndFile) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  ASSERT_TRUE(w.Create(RowSchema()).ok());
  std::string kept = AppendOne(w, FixtureFile(RowsToTable(MakeRows(1, 3))));
  std::string lost = AppendOne(w, FixtureFile(RowsToTable(MakeRows(4, 3))));
  ASSERT_TRUE(w.Append({FixtureFile(RowsToTable(MakeRows(7, 3)))}).ok());  // v3
  ASSERT_TRUE(std::filesystem::remove(dir.path() / lost));

  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->version(), 3);
  auto scan = Plan(*snap);
  ASSERT_NE(scan, nullptr);

  auto check = [&](const arrow::Status& st) {
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kMissingFile)) << st.ToString();
    const std::string& msg = st.message();
    EXPECT_NE(msg.find(snap->table_root()), std::string::npos) << msg;
    EXPECT_NE(msg.find("version 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find(lost), std::string::npos) << msg;
  };
  check(scan->ToTable().status());

  auto reader = scan->Execute();
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  arrow::Status st;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    st = (*reader)->ReadNext(&batch);
    if (!st.ok() || !batch) break;
  }
  check(st);
}

TEST(MissingDataFile, VersionsWithoutTheMissingFileStillRead) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  ASSERT_TRUE(w.Create(RowSchema()).ok());
  AppendOne(w, FixtureFile(RowsToTable(MakeRows(1, 3))));
  std::string lost = AppendOne(w, FixtureFile(RowsToTable(MakeRows(4, 3))));
  ASSERT_TRUE(std::filesystem::remove(dir.path() / lost));
  auto table = DeltaTable::Open(dir.str());
  ASSERT_TRUE(table.ok());
  auto v1 = (*table)->SnapshotAt(1);
  ASSERT_TRUE(v1.ok());
  auto scan = Plan(**v1);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t), IdsBetween(1, 3));
}

// ---------------------------------------------------------------------------------------------
// Parallel reading

class TwentyFileTable : public ::testing::Test {
 protected:
  static constexpr int kFiles = 20;
  static constexpr int64_t kBlock = 100;

  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64())})).ok());
    for (int k = 0; k < kFiles; ++k) {
      int64_t rows = 5 + k % 4;
      for (int64_t i = 0; i < rows; ++i) expected_ids_.push_back(k * kBlock + i);
      // Alternate one and several row groups per file.
      auto file = FixtureFile(MakeTable({{"id", Range(k * kBlock, rows)}}));
      if (k % 2 == 1) file.WithMaxRowGroupRows(3);
      block_of_file_[BaseName(AppendOne(w, file))] = k;
    }
    std::sort(expected_ids_.begin(), expected_ids_.end());
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  struct Observed {
    std::vector<int64_t> ids;          // every id, in output order
    std::vector<int> block_sequence;   // file block of each batch, consecutive repeats merged
    bool batch_straddles_files = false;
  };

  Observed ReadWith(int parallelism, int64_t batch_size) {
    Observed out;
    ScanOptions options;
    options.parallelism = parallelism;
    options.batch_size = batch_size;
    auto builder = snap_->NewScan();
    builder.Options(options);
    auto scan = builder.Build();
    EXPECT_TRUE(scan.ok()) << scan.status().ToString();
    if (!scan.ok()) return out;
    scan_ = *scan;
    auto reader = (*scan)->Execute();
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return out;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      auto st = (*reader)->ReadNext(&batch);
      EXPECT_TRUE(st.ok()) << st.ToString();
      if (!st.ok() || !batch) break;
      EXPECT_LE(batch->num_rows(), batch_size);
      const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
      std::set<int64_t> blocks;
      for (int64_t i = 0; i < ids.length(); ++i) {
        out.ids.push_back(ids.Value(i));
        blocks.insert(ids.Value(i) / kBlock);
      }
      if (blocks.size() > 1) out.batch_straddles_files = true;
      if (blocks.empty()) continue;
      int block = static_cast<int>(*blocks.begin());
      if (out.block_sequence.empty() || out.block_sequence.back() != block) {
        out.block_sequence.push_back(block);
      }
    }
    return out;
  }

  std::vector<int> PlannedBlockOrder() const {
    std::vector<int> order;
    for (const auto& f : scan_->files()) {
      auto it = block_of_file_.find(BaseName(f.path));
      EXPECT_NE(it, block_of_file_.end()) << f.path;
      if (it != block_of_file_.end()) order.push_back(it->second);
    }
    return order;
  }

  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
  std::shared_ptr<Scan> scan_;
  std::map<std::string, int> block_of_file_;
  std::vector<int64_t> expected_ids_;
};

TEST_F(TwentyFileTable, ParallelScanReturnsEveryRowOnce) {
  auto got = ReadWith(4, 2);
  std::sort(got.ids.begin(), got.ids.end());
  EXPECT_EQ(got.ids, expected_ids_);
}

TEST_F(TwentyFileTable, ParallelScanKeepsFileOrderAndBatchesOfAFileTogether) {
  auto got = ReadWith(4, 2);
  ASSERT_EQ(scan_->files().size(), static_cast<size_t>(kFiles));
  EXPECT_FALSE(got.batch_straddles_files);
  // Each file's batches form one run, and the runs follow files().
  EXPECT_EQ(got.block_sequence, PlannedBlockOrder());
  // Within a file the rows keep their order.
  for (size_t i = 1; i < got.ids.size(); ++i) {
    if (got.ids[i] / kBlock == got.ids[i - 1] / kBlock) {
      EXPECT_LT(got.ids[i - 1], got.ids[i]) << "at output row " << i;
    }
  }
}

// A Snapshot is immutable and may be shared: threads planning and running their own scans on
// one snapshot at the same time each get exactly the rows they asked for.
TEST_F(TwentyFileTable, ThreadsScanOneSharedSnapshotAtTheSameTime) {
  constexpr int kThreads = 6;
  std::vector<std::vector<int64_t>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      // Even threads read everything, odd ones the ids below a bound that differs per thread.
      auto builder = snap_->NewScan();
      if (t % 2 == 1) builder.Filter("id < " + std::to_string(t * kBlock));
      auto scan = builder.Build();
      if (!scan.ok()) {
        errors[t] = scan.status().ToString();
        return;
      }
      auto table = (*scan)->ToTable();
      if (!table.ok()) {
        errors[t] = table.status().ToString();
        return;
      }
      got[t] = SortedIds(**table);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    std::vector<int64_t> want;
    for (int64_t id : expected_ids_) {
      if (t % 2 == 0 || id < t * kBlock) want.push_back(id);
    }
    EXPECT_EQ(got[t], want) << "thread " << t;
  }
}

TEST_F(TwentyFileTable, ScanCanBeExecutedMoreThanOnce) {
  auto scan = Plan(*snap_);
  ASSERT_NE(scan, nullptr);
  auto first = Read(*scan);
  auto second = Read(*scan);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(SortedIds(*first), expected_ids_);
  EXPECT_TRUE(first->Equals(*second));
}

TEST_F(TwentyFileTable, ReaderDroppedAfterOneBatchLeavesTheScanUsable) {
  ScanOptions options;
  options.parallelism = 4;
  options.batch_size = 2;
  auto builder = snap_->NewScan();
  builder.Options(options);
  auto scan = builder.Build();
  ASSERT_TRUE(scan.ok());
  {
    auto reader = (*scan)->Execute();
    ASSERT_TRUE(reader.ok());
    std::shared_ptr<arrow::RecordBatch> batch;
    ASSERT_TRUE((*reader)->ReadNext(&batch).ok());
    ASSERT_NE(batch, nullptr);
  }
  auto t = Read(**scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t), expected_ids_);
}

TEST_F(TwentyFileTable, ParallelismDoesNotChangeTheOutputSequence) {
  auto serial = ReadWith(1, 3);
  auto parallel = ReadWith(4, 3);
  auto wide = ReadWith(32, 3);
  EXPECT_EQ(serial.ids.size(), expected_ids_.size());
  EXPECT_EQ(parallel.ids, serial.ids);
  EXPECT_EQ(wide.ids, serial.ids);
}

}  // namespace
}  // namespace deltacpp::scantest
