// Metadata columns (`_metadata.file_path`, `_metadata.row_index`) and what ScanFile tells about
// each file (partition values, stats, deletion vector, position in the snapshot). Row indexes
// are checked against positions the test knows from the data it wrote: each file's `id` column
// encodes the row's position in the file.
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <fstream>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

// File A (p = 'a'): ids 0..29 in row groups of 10, rows 2, 5, 23, 27 deleted by its DV.
// File B (p = 'x y'): ids 100..104. File C (p = NULL): ids 200..201. Row index = id - base.
const std::set<int64_t> kDeleted = {2, 5, 23, 27};

int64_t BaseOf(int64_t id) { return id >= 200 ? 200 : id >= 100 ? 100 : 0; }

class MetadataColumnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                                 arrow::field("v", arrow::utf8()),
                                 arrow::field("p", arrow::utf8())});
    ASSERT_TRUE(w.Create(schema, {"p"}, {}, 3, 7, {"deletionVectors"}, {"deletionVectors"}).ok());
    auto file = [](int64_t first, int64_t count) {
      std::vector<std::optional<std::string>> v;
      for (int64_t i = 0; i < count; ++i) v.push_back("v" + std::to_string(first + i));
      return MakeTable({{"id", Range(first, count)}, {"v", Strings(v)}});
    };
    std::vector<uint64_t> deleted(kDeleted.begin(), kDeleted.end());
    a_ = AppendOne(w, FixtureFile(file(0, 30), {{"p", "a"}})
                          .WithMaxRowGroupRows(10)
                          .WithDeletedRows(deleted));
    b_ = AppendOne(w, FixtureFile(file(100, 5), {{"p", "x y"}}));
    c_ = AppendOne(w, FixtureFile(file(200, 2), {{"p", std::nullopt}}));
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  arrow::Result<std::shared_ptr<Scan>> Build(ScanOptions options) {
    auto builder = snap_->NewScan();
    builder.Options(std::move(options));
    return builder.Build();
  }

  const ScanFile* FileWithLogPath(const Scan& scan, const std::string& log_path,
                                  std::vector<ScanFile>* files) {
    *files = scan.files();
    for (const auto& f : *files) {
      if (f.log_path == log_path) return &f;
    }
    return nullptr;
  }

  // add.path of the file holding `id`.
  std::string LogPathOf(int64_t id) const {
    return BaseOf(id) == 0 ? a_ : BaseOf(id) == 100 ? b_ : c_;
  }

  // Overwrites every column chunk of the given row groups of a data file with garbage.
  static void CorruptRowGroups(const std::filesystem::path& file, const std::vector<int>& groups) {
    auto metadata = parquet::ParquetFileReader::OpenFile(file.string())->metadata();
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(out.good());
    for (int rg : groups) {
      auto group = metadata->RowGroup(rg);
      for (int c = 0; c < group->num_columns(); ++c) {
        auto chunk = group->ColumnChunk(c);
        int64_t start = chunk->has_dictionary_page() ? chunk->dictionary_page_offset()
                                                     : chunk->data_page_offset();
        std::string garbage(static_cast<size_t>(chunk->total_compressed_size()), '\xFF');
        out.seekp(start);
        out.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
      }
    }
    ASSERT_TRUE(out.good());
  }

  TempDir dir_;
  std::string a_, b_, c_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(MetadataColumnsTest, RowIndexIsThePositionInTheFileBeforeDeletes) {
  for (int64_t batch_size : {int64_t{64 * 1024}, int64_t{7}, int64_t{1}}) {
    SCOPED_TRACE("batch_size " + std::to_string(batch_size));
    ScanOptions options;
    options.batch_size = batch_size;
    options.metadata_columns = {"row_index", "_METADATA.FILE_PATH"};
    auto scan = Build(options);
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    auto t = Read(**scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(FieldNames(*t->schema()),
              (std::vector<std::string>{"id", "v", "p", kMetadataRowIndex, kMetadataFilePath}));
    std::map<std::string, std::string> uri_of;  // log path -> uri
    for (const auto& f : (*scan)->files()) uri_of[f.log_path] = f.uri;
    auto ids = Int64Values(*t, "id");
    auto rows = Int64Values(*t, kMetadataRowIndex);
    auto paths = StringValues(*t, kMetadataFilePath);
    ASSERT_EQ(ids.size(), rows.size());
    ASSERT_EQ(ids.size(), paths.size());
    std::vector<int64_t> seen;
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE(ids[i] && rows[i] && paths[i]);
      EXPECT_EQ(*rows[i], *ids[i] - BaseOf(*ids[i])) << "id " << *ids[i];
      EXPECT_EQ(*paths[i], uri_of[LogPathOf(*ids[i])]) << "id " << *ids[i];
      seen.push_back(*ids[i]);
    }
    std::sort(seen.begin(), seen.end());
    std::vector<int64_t> want = IdsBetween(0, 29, kDeleted);
    for (int64_t id : {100, 101, 102, 103, 104, 200, 201}) want.push_back(id);
    EXPECT_EQ(seen, want);
  }
}

TEST_F(MetadataColumnsTest, RowIndexWithSkippedRowGroupsDeletesAndFilter) {
  // `(id >= 20 AND id < 100) OR id = 101` rules out A's first two row groups by their
  // statistics (they are made unreadable to prove it); the filter column is not in the output,
  // so the row is recognised by `v`.
  CorruptRowGroups(dir_.path() / a_, {0, 1});
  auto everything = Build(ScanOptions{});
  ASSERT_TRUE(everything.ok());
  EXPECT_FALSE((*everything)->ToTable().ok());  // reading those row groups fails
  for (int64_t batch_size : {int64_t{64 * 1024}, int64_t{3}}) {
    SCOPED_TRACE("batch_size " + std::to_string(batch_size));
    ScanOptions options;
    options.batch_size = batch_size;
    options.filter = "(id >= 20 AND id < 100) OR id = 101";
    options.columns = {kMetadataRowIndex, "v"};
    auto scan = Build(options);
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    auto t = Read(**scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{kMetadataRowIndex, "v"}));
    auto rows = Int64Values(*t, kMetadataRowIndex);
    auto v = StringValues(*t, "v");
    std::multiset<std::pair<int64_t, std::string>> got, want;
    for (size_t i = 0; i < rows.size(); ++i) got.emplace(rows[i].value_or(-1), v[i].value_or(""));
    for (int64_t id : IdsBetween(20, 29, kDeleted)) want.emplace(id, "v" + std::to_string(id));
    want.emplace(1, "v101");
    EXPECT_EQ(got, want);
  }
}

TEST_F(MetadataColumnsTest, MetadataColumnsAloneStillCountRows) {
  ScanOptions options;
  options.columns = {kMetadataRowIndex};
  auto scan = Build(options);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  auto t = Read(**scan);
  ASSERT_NE(t, nullptr);
  auto rows = SortedIds(*t, kMetadataRowIndex);
  // A's surviving positions, B's 0..4 and C's 0..1.
  std::vector<int64_t> want = IdsBetween(0, 29, kDeleted);
  for (int64_t r : {0, 0, 1, 1, 2, 3, 4}) want.push_back(r);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(rows, want);
}

TEST_F(MetadataColumnsTest, ColumnsPlaceMetadataWhereAsked) {
  ScanOptions options;
  options.columns = {"_metadata.file_path", "id", "_Metadata.Row_Index"};
  options.filter = "p = 'x y'";
  auto scan = Build(options);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  const auto& schema = *(*scan)->schema();
  ASSERT_EQ(schema.num_fields(), 3);
  EXPECT_EQ(schema.field(0)->name(), kMetadataFilePath);
  EXPECT_TRUE(schema.field(0)->type()->Equals(*arrow::utf8()));
  EXPECT_FALSE(schema.field(0)->nullable());
  EXPECT_EQ(schema.field(1)->name(), "id");
  EXPECT_EQ(schema.field(2)->name(), kMetadataRowIndex);
  EXPECT_TRUE(schema.field(2)->type()->Equals(*arrow::int64()));
  EXPECT_FALSE(schema.field(2)->nullable());
  auto t = Read(**scan);
  ASSERT_NE(t, nullptr);
  // b_ is encoded in the log (p=x%20y/...); the file on disk has the space. Spark's spelling of
  // its URI: `file:` and the absolute path, the space as %20.
  std::string decoded;
  const std::string local = (dir_.path() / b_).lexically_normal().string();
  for (size_t i = 0; i < local.size(); ++i) {
    if (local.compare(i, 3, "%20") == 0) {
      decoded += ' ';
      i += 2;
    } else {
      decoded += local[i];
    }
  }
  ASSERT_NE(decoded.find(' '), std::string::npos);
  std::string uri = "file:";
  for (char ch : decoded) uri += ch == ' ' ? std::string("%20") : std::string(1, ch);
  EXPECT_EQ(StringValues(*t, kMetadataFilePath),
            (std::vector<std::optional<std::string>>(5, uri)));
  EXPECT_EQ(Int64Values(*t, kMetadataRowIndex),
            (std::vector<std::optional<int64_t>>{0, 1, 2, 3, 4}));
  ASSERT_EQ((*scan)->files().size(), 1u);
  EXPECT_EQ((*scan)->files()[0].uri, uri);
  EXPECT_EQ((*scan)->files()[0].path, decoded);
}

TEST_F(MetadataColumnsTest, UnknownMetadataColumnsAreInvalidArguments) {
  ScanOptions unknown;
  unknown.metadata_columns = {"file_size"};
  auto a = Build(unknown);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(IsDeltaError(a.status(), DeltaErrorCode::kInvalidArgument)) << a.status();
  EXPECT_NE(a.status().message().find("file_size"), std::string::npos);
  ScanOptions by_column;
  by_column.columns = {"id", "_metadata.nope"};
  EXPECT_TRUE(IsDeltaError(Build(by_column).status(), DeltaErrorCode::kInvalidArgument));
  // The prefix-less short names are for metadata_columns only; among columns they are columns.
  ScanOptions short_name;
  short_name.columns = {"row_index"};
  EXPECT_TRUE(IsDeltaError(Build(short_name).status(), DeltaErrorCode::kInvalidArgument));
}

TEST_F(MetadataColumnsTest, ScanFilesDescribeTheirFiles) {
  auto scan = Build(ScanOptions{});
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  std::vector<ScanFile> files;
  const ScanFile* a = FileWithLogPath(**scan, a_, &files);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->partition_values, (std::map<std::string, std::optional<std::string>>{{"p", "a"}}));
  ASSERT_EQ(a->typed_partition_values.count("p"), 1u);
  EXPECT_EQ(a->typed_partition_values.at("p")->ToString(), "a");
  EXPECT_EQ(a->num_records, 30);
  EXPECT_EQ(a->tight_bounds, false);  // the fixture writer marks files with a DV so
  ASSERT_TRUE(a->deletion_vector.has_value());
  EXPECT_EQ(a->deletion_vector->storage_type, "i");
  EXPECT_EQ(a->deletion_vector->cardinality, 4);
  EXPECT_EQ(a->deleted_rows, 4);
  EXPECT_TRUE(a->column_stats.empty());  // no filter: no column statistics were parsed

  const ScanFile* c = FileWithLogPath(**scan, c_, &files);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->partition_values,
            (std::map<std::string, std::optional<std::string>>{{"p", std::nullopt}}));
  EXPECT_FALSE(c->typed_partition_values.at("p")->is_valid);
  EXPECT_EQ(c->num_records, 2);
  EXPECT_FALSE(c->deletion_vector.has_value());

  // file_ref names the file's add action in snapshot->live_files().
  const LiveFiles& live = snap_->live_files();
  for (const auto& f : (*scan)->files()) {
    ASSERT_GE(f.file_ref.chunk, 0);
    ASSERT_LT(f.file_ref.chunk, static_cast<int32_t>(live.chunks().size()));
    ASSERT_TRUE(live.chunks()[f.file_ref.chunk].IsLive(f.file_ref.row));
    EXPECT_EQ(live.path(f.file_ref), f.log_path);
  }
}

TEST_F(MetadataColumnsTest, ColumnStatsOfTheFilterColumns) {
  ScanOptions options;
  options.filter = "id > 5";
  auto scan = Build(options);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  std::vector<ScanFile> files;
  const ScanFile* a = FileWithLogPath(**scan, a_, &files);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->column_stats.count("id"), 1u);
  const auto& id = a->column_stats.at("id");
  ASSERT_NE(id.min, nullptr);
  ASSERT_NE(id.max, nullptr);
  EXPECT_EQ(id.min->ToString(), "0");
  EXPECT_EQ(id.max->ToString(), "29");
  EXPECT_EQ(id.null_count, 0);
  EXPECT_EQ(a->column_stats.count("v"), 0u);  // not read by the filter
  EXPECT_EQ(a->num_records, 30);
}

}  // namespace
}  // namespace deltacpp::scantest
