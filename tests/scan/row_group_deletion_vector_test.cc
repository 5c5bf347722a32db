// Deletion vectors together with row-group skipping: deleted row indexes count from the start
// of the file, whichever row groups are read.
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <fstream>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

constexpr int64_t kRows = 30;
constexpr int64_t kRowGroupRows = 10;
const std::set<int64_t> kDeleted = {2, 5, 23, 27};  // rows of the 1st and 3rd row groups

class RowGroupsWithDeletionVector : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::utf8())});
    ASSERT_TRUE(w.Create(schema, {}, {}, 3, 7, {"deletionVectors"}, {"deletionVectors"}).ok());
    std::vector<std::optional<std::string>> v;
    for (int64_t i = 0; i < kRows; ++i) v.push_back("v" + std::to_string(i));
    std::vector<uint64_t> deleted(kDeleted.begin(), kDeleted.end());
    auto file = FixtureFile(MakeTable({{"id", Range(0, kRows)}, {"v", Strings(v)}}))
                    .WithMaxRowGroupRows(kRowGroupRows)
                    .WithDeletedRows(deleted);
    path_ = (dir_.path() / AppendOne(w, file)).string();
    auto metadata = parquet::ParquetFileReader::OpenFile(path_)->metadata();
    ASSERT_EQ(metadata->num_row_groups(), 3);
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  std::shared_ptr<arrow::Table> Scan(const std::string& filter, int64_t batch_size,
                                     std::vector<std::string> columns = {}) {
    ScanOptions options;
    options.filter = filter;
    options.batch_size = batch_size;
    options.columns = std::move(columns);
    auto builder = snap_->NewScan();
    builder.Options(options);
    auto scan = builder.Build();
    EXPECT_TRUE(scan.ok()) << scan.status().ToString();
    if (!scan.ok()) return nullptr;
    return Read(**scan);
  }

  // Overwrites every column chunk of row group `rg` with garbage.
  void CorruptRowGroup(int rg) {
    auto metadata = parquet::ParquetFileReader::OpenFile(path_)->metadata();
    auto group = metadata->RowGroup(rg);
    std::fstream out(path_, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(out.good());
    for (int c = 0; c < group->num_columns(); ++c) {
      auto chunk = group->ColumnChunk(c);
      int64_t start = chunk->has_dictionary_page() ? chunk->dictionary_page_offset()
                                                   : chunk->data_page_offset();
      std::string garbage(static_cast<size_t>(chunk->total_compressed_size()), '\xFF');
      out.seekp(start);
      out.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    ASSERT_TRUE(out.good());
  }

  TempDir dir_;
  std::string path_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(RowGroupsWithDeletionVector, FullScanDropsExactlyTheDeletedRows) {
  auto builder = snap_->NewScan();
  auto scan = builder.Build();
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ((*scan)->files().size(), 1u);
  EXPECT_EQ((*scan)->files()[0].deleted_rows, static_cast<int64_t>(kDeleted.size()));
  for (int64_t batch_size : {int64_t{64 * 1024}, int64_t{4}, int64_t{1}}) {
    SCOPED_TRACE("batch_size " + std::to_string(batch_size));
    auto t = Scan("", batch_size);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), IdsBetween(0, kRows - 1, kDeleted));
    auto ids = Int64Values(*t, "id");
    auto v = StringValues(*t, "v");
    ASSERT_EQ(ids.size(), v.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(v[i], "v" + std::to_string(ids[i].value_or(-1)));
    }
  }
}

TEST_F(RowGroupsWithDeletionVector, SkippingARowGroupKeepsDeletedRowIndexesFileGlobal) {
  struct Case {
    std::string filter;
    int64_t first, last;  // expected: ids in [first, last] matching, minus deleted
    std::function<bool(int64_t)> matches;
  };
  const std::vector<Case> cases = {
      {"id < 10 OR id >= 20", 0, 29, [](int64_t id) { return id < 10 || id >= 20; }},
      {"id >= 20", 20, 29, [](int64_t) { return true; }},
      {"id >= 15", 15, 29, [](int64_t) { return true; }},
      {"id BETWEEN 5 AND 24", 5, 24, [](int64_t) { return true; }},
      {"id < 3 OR id > 26", 0, 29, [](int64_t id) { return id < 3 || id > 26; }},
  };
  for (const auto& c : cases) {
    for (int64_t batch_size : {int64_t{64 * 1024}, int64_t{4}}) {
      SCOPED_TRACE("filter: " + c.filter + ", batch_size " + std::to_string(batch_size));
      std::vector<int64_t> expected;
      for (int64_t id = c.first; id <= c.last; ++id) {
        if (c.matches(id) && !kDeleted.count(id)) expected.push_back(id);
      }
      auto t = Scan(c.filter, batch_size);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(SortedIds(*t), expected);
    }
  }
}

TEST_F(RowGroupsWithDeletionVector, HiddenFilterColumnWithSkippedRowGroupsAndDeletes) {
  auto t = Scan("id >= 20", 3, {"v"});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), std::vector<std::string>{"v"});
  std::vector<std::optional<std::string>> expected;
  for (int64_t id : IdsBetween(20, 29, kDeleted)) expected.push_back("v" + std::to_string(id));
  auto got = StringValues(*t, "v");
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
}

TEST_F(RowGroupsWithDeletionVector, RowGroupRuledOutByStatisticsIsNotRead) {
  CorruptRowGroup(1);
  // Reading the damaged row group fails...
  auto builder = snap_->NewScan();
  auto full = builder.Build();
  ASSERT_TRUE(full.ok());
  EXPECT_FALSE((*full)->ToTable().ok());
  // ...so a scan that succeeds never touched it, and its deletes still land on the right rows.
  auto t = Scan("id < 10 OR id >= 20", 4);
  ASSERT_NE(t, nullptr);
  std::vector<int64_t> expected;
  for (int64_t id : IdsBetween(0, 29, kDeleted)) {
    if (id < 10 || id >= 20) expected.push_back(id);
  }
  EXPECT_EQ(SortedIds(*t), expected);
}

}  // namespace
}  // namespace deltacpp::scantest
