// Deletion vectors produced by the DV writer, committed onto a table's files, hide exactly their
// rows from scans: file DVs, inline DVs, unions with an existing DV and whole-file deletes.
#include <gtest/gtest.h>

#include <chrono>

#include "protocol/action_json_writer.h"
#include "scan_test_util.h"
#include "write/deletion_vector_writer.h"

namespace deltacpp::scantest {
namespace {

using internal::DeletionVectorOutcome;
using internal::DeletionVectorRequest;
using internal::DeletionVectorUpdate;
using internal::DeletionVectorWriter;
using internal::DeletionVectorWriterOptions;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class WrittenDeletionVectors : public ::testing::Test {
 protected:
  void SetUp() override {
    auto schema = arrow::schema({arrow::field("id", arrow::int64())});
    ASSERT_TRUE(writer_
                    .Create(schema, {}, {{"delta.enableDeletionVectors", "true"}}, 3, 7,
                            {"deletionVectors"}, {"deletionVectors"})
                    .ok());
    // Ids 0-9, 10-19 (rows 0 and 1, ids 10 and 11, already deleted inline) and 20-24.
    auto version = writer_.Append({FixtureFile(MakeTable({{"id", Range(0, 10)}})),
                                   FixtureFile(MakeTable({{"id", Range(10, 10)}}))
                                       .WithDeletedRows({0, 1}),
                                   FixtureFile(MakeTable({{"id", Range(20, 5)}}))});
    ASSERT_TRUE(version.ok()) << version.status().ToString();
  }

  // The tracked live entry of `path`.
  const FixtureTableWriter::FileEntry& Live(const std::string& path) {
    for (const auto& [key, entry] : writer_.state().live) {
      if (entry.path == path) return entry;
    }
    ADD_FAILURE() << path << " is not live";
    static const FixtureTableWriter::FileEntry kNone;
    return kNone;
  }

  static std::optional<DeletionVectorDescriptor> DvOf(const FixtureTableWriter::FileEntry& e) {
    if (!e.dv_storage_type) return std::nullopt;
    DeletionVectorDescriptor dv;
    dv.storage_type = *e.dv_storage_type;
    dv.path_or_inline_dv = e.dv_path_or_inline;
    dv.offset = e.dv_offset;
    dv.size_in_bytes = e.dv_size_in_bytes;
    dv.cardinality = e.dv_cardinality;
    return dv;
  }

  // Commits the writer's outcome the way a DELETE does: remove(path, old DV) and, unless every
  // row is gone, add(path, new DV) with loose bounds.
  void Commit(const std::vector<DeletionVectorUpdate>& updates,
              const std::map<std::string, int64_t>& num_records) {
    std::vector<std::string> lines;
    const int64_t now = NowMs();
    for (const DeletionVectorUpdate& u : updates) {
      if (u.outcome == DeletionVectorOutcome::kUnchanged) continue;
      const FixtureTableWriter::FileEntry& entry = Live(u.path);
      RemoveFile remove;
      remove.path = entry.path;
      remove.deletion_timestamp = now;
      remove.partition_values = entry.partition_values;
      remove.size = entry.size;
      remove.deletion_vector = DvOf(entry);
      auto remove_line = internal::RemoveFileToJson(remove);
      ASSERT_TRUE(remove_line.ok());
      lines.push_back(*remove_line);
      if (u.outcome == DeletionVectorOutcome::kRemoveFile) continue;
      AddFile add;
      add.path = entry.path;
      add.partition_values = entry.partition_values;
      add.size = entry.size;
      add.modification_time = entry.modification_time;
      add.stats = "{\"numRecords\":" + std::to_string(num_records.at(u.path)) +
                  ",\"tightBounds\":false}";
      add.deletion_vector = u.descriptor;
      auto add_line = internal::AddFileToJson(add);
      ASSERT_TRUE(add_line.ok());
      lines.push_back(*add_line);
    }
    auto version = writer_.CommitRaw(lines);
    ASSERT_TRUE(version.ok()) << version.status().ToString();
  }

  std::vector<int64_t> ScannedIds() {
    auto snap = OpenLatest(dir_.str());
    if (snap == nullptr) return {};
    auto scan = Plan(*snap);
    if (scan == nullptr) return {};
    auto table = Read(*scan);
    return table ? SortedIds(*table) : std::vector<int64_t>{};
  }

  std::unique_ptr<DeletionVectorWriter> DvWriter(int32_t max_inline_bytes) {
    DeletionVectorWriterOptions options;
    options.table_root = dir_.str();
    options.max_inline_bytes = max_inline_bytes;
    auto w = DeletionVectorWriter::Make(options);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(*w) : nullptr;
  }

  std::vector<std::string> Paths() { return writer_.active_paths(); }

  TempDir dir_;
  FixtureTableWriter writer_{dir_.str()};
};

TEST_F(WrittenDeletionVectors, ScanDropsTheRowsOfFileAndInlineDeletionVectors) {
  ASSERT_EQ(ScannedIds(), IdsBetween(0, 24, {10, 11}));
  // The fixture names files in order: the first holds ids 0-9, the second 10-19, the third 20-24.
  const std::vector<std::string> paths = Paths();
  ASSERT_EQ(paths.size(), 3u);
  const std::map<std::string, int64_t> records = {
      {paths[0], 10}, {paths[1], 10}, {paths[2], 5}};

  // One operation: two file DVs (one a union with the inline DV the file had) sharing one DV
  // file, and a file losing every row.
  auto first = DvWriter(-1);
  auto updates = first->Write({{paths[0], std::nullopt, 10, {3, 5}},
                               {paths[1], DvOf(Live(paths[1])), 10, {5}},
                               {paths[2], std::nullopt, 5, {0, 1, 2, 3, 4}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  ASSERT_EQ((*updates)[0].descriptor->storage_type, "u");
  ASSERT_EQ((*updates)[1].descriptor->storage_type, "u");
  ASSERT_EQ((*updates)[2].outcome, DeletionVectorOutcome::kRemoveFile);
  EXPECT_EQ(first->written_files().size(), 1u);
  ASSERT_NO_FATAL_FAILURE(Commit(*updates, records));
  EXPECT_EQ(ScannedIds(), IdsBetween(0, 19, {3, 5, 10, 11, 15}));

  // A second operation on top: the union with the file DV is small enough to be inline.
  auto second = DvWriter(internal::kDefaultMaxInlineDeletionVectorBytes);
  auto more = second->Write({{paths[0], DvOf(Live(paths[0])), 10, {7}}});
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  ASSERT_EQ((*more)[0].descriptor->storage_type, "i");
  EXPECT_EQ((*more)[0].descriptor->cardinality, 3);
  ASSERT_NO_FATAL_FAILURE(Commit(*more, records));
  EXPECT_EQ(ScannedIds(), IdsBetween(0, 19, {3, 5, 7, 10, 11, 15}));
}

// The DELETE flow: a filtered scan's `_metadata.file_path` / `_metadata.row_index` and its
// ScanFile (numRecords, current DV) are all the DV writer needs; the rows it deletes are the
// rows the filter matched.
TEST_F(WrittenDeletionVectors, RowIndexesFromAScanDeleteExactlyTheMatchedRows) {
  auto snap = OpenLatest(dir_.str());
  ASSERT_NE(snap, nullptr);
  auto builder = snap->NewScan();
  builder.Columns({kMetadataFilePath, kMetadataRowIndex}).Filter("id % 3 = 0");
  auto scan = builder.Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  auto table = Read(**scan);
  ASSERT_NE(table, nullptr);
  std::map<std::string, ScanFile> by_uri;
  for (const auto& f : (*scan)->files()) by_uri[f.uri] = f;
  std::map<std::string, std::vector<uint64_t>> rows_by_uri;
  auto uris = StringValues(*table, kMetadataFilePath);
  auto rows = Int64Values(*table, kMetadataRowIndex);
  ASSERT_EQ(uris.size(), rows.size());
  for (size_t i = 0; i < uris.size(); ++i) {
    rows_by_uri[*uris[i]].push_back(static_cast<uint64_t>(*rows[i]));
  }
  std::vector<DeletionVectorRequest> requests;
  std::map<std::string, int64_t> records;
  for (const auto& [uri, file_rows] : rows_by_uri) {
    ASSERT_EQ(by_uri.count(uri), 1u) << uri;
    const ScanFile& f = by_uri.at(uri);
    ASSERT_TRUE(f.num_records.has_value());
    requests.push_back({f.log_path, f.deletion_vector, *f.num_records, file_rows});
    records[f.log_path] = *f.num_records;
  }
  ASSERT_EQ(requests.size(), 3u);
  auto updates = DvWriter(-1)->Write(requests);
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  ASSERT_NO_FATAL_FAILURE(Commit(*updates, records));
  std::set<int64_t> gone = {10, 11};
  for (int64_t id = 0; id <= 24; ++id) {
    if (id % 3 == 0) gone.insert(id);
  }
  EXPECT_EQ(ScannedIds(), IdsBetween(0, 24, gone));
}

}  // namespace
}  // namespace deltacpp::scantest
