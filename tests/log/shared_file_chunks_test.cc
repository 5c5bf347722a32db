// A snapshot's file list as data: a handle brought forward by new commits shares the batches of
// add actions its earlier snapshot decoded, changes only the selections of the batches the new
// removes touch, keeps the number of batches small over long runs of commits, and parses each
// batch's statistics once for every snapshot that shares it — while listing exactly the files a
// fresh load lists.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "deltacpp/api.h"
#include "log/live_file_list.h"
#include "log/typed_stats.h"
#include "log_test_util.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AddLine;
using testing::FixtureTableWriter;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::RemoveLine;
using testing::TempDir;

std::string Stats(int i) {
  return fmt::format(R"(,"stats":"{{\"numRecords\":10,\"minValues\":{{\"id\":{}}},\"maxValues\":{{\"id\":{}}},\"nullCount\":{{\"id\":0}}}}")",
                     i * 10, i * 10 + 9);
}

std::string File(int i) { return "f-" + std::to_string(i) + ".parquet"; }

// path -> size of every live file, read through the chunks and selections.
std::map<std::string, int64_t> Live(const Snapshot& s) {
  std::map<std::string, int64_t> out;
  const LiveFiles& files = s.live_files();
  files.ForEach([&](FileRef ref) {
    const auto& sizes = static_cast<const arrow::Int64Array&>(*files.actions(ref).column(2));
    EXPECT_TRUE(out.emplace(std::string(files.path(ref)), sizes.Value(ref.row)).second)
        << "listed twice: " << files.path(ref);
  });
  EXPECT_EQ(static_cast<int64_t>(out.size()), files.size());
  return out;
}

std::shared_ptr<Snapshot> FreshLatest(const std::string& root) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return *snap;
}

class SharedFileChunks : public ::testing::Test {
 protected:
  // Version 0 adds f-0..f-(n-1) (size 1000 + i, stats on id) and is checkpointed.
  void CreateCheckpointed(int n) {
    FixtureTableWriter w(root_);
    std::vector<std::string> lines = {
        ProtocolLine(), MetadataLine(R"({"name":"id","type":"long","nullable":true,"metadata":{}})")};
    for (int i = 0; i < n; ++i) lines.push_back(AddLine(File(i), 1000 + i, Stats(i)));
    ASSERT_TRUE(w.CommitRaw(lines).ok());
    ASSERT_TRUE(w.WriteCheckpoint().ok());
    auto table = DeltaTable::Open(root_);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = *table;
  }

  std::shared_ptr<Snapshot> Latest() {
    auto snap = table_->Latest();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return *snap;
  }

  TempDir dir_;
  std::string root_ = dir_.str() + "/t";
  std::shared_ptr<DeltaTable> table_;
};

TEST_F(SharedFileChunks, ANewCommitSharesTheCheckpointBatchAndReselectsOnlyIt) {
  CreateCheckpointed(1000);
  auto before = Latest();
  ASSERT_EQ(before->num_files(), 1000);
  ASSERT_EQ(before->live_files().chunks().size(), 1u);
  const auto checkpoint_batch = before->live_files().chunks()[0].actions();

  testing::WriteCommit(root_, 1, {RemoveLine(File(7)), AddLine("new.parquet", 5)});
  auto after = Latest();
  ASSERT_EQ(after->version(), 1);
  // The checkpoint's batch is the same object, with a selection that drops f-7.
  ASSERT_GE(after->live_files().chunks().size(), 1u);
  const FileChunk& first = after->live_files().chunks()[0];
  EXPECT_EQ(first.actions().get(), checkpoint_batch.get());
  EXPECT_EQ(first.num_live(), 999);
  EXPECT_NE(first.selection(), nullptr);
  // The earlier snapshot is untouched.
  EXPECT_EQ(before->num_files(), 1000);
  EXPECT_EQ(before->live_files().chunks()[0].num_live(), 1000);

  auto live = Live(*after);
  EXPECT_EQ(live.size(), 1000u);
  EXPECT_EQ(live.count(File(7)), 0u);
  EXPECT_EQ(live.at("new.parquet"), 5);
  EXPECT_EQ(live, Live(*FreshLatest(root_)));
}

TEST_F(SharedFileChunks, ALongRunOfCommitsKeepsFewChunksAndTheRightFiles) {
  CreateCheckpointed(100);
  (void)Latest();
  constexpr int kCommits = 300;
  size_t most_chunks = 0;
  for (int v = 1; v <= kCommits; ++v) {
    // Each commit replaces one file: a checkpointed one for the first 100, then one added by
    // an earlier commit.
    const std::string gone = v <= 100 ? File(v - 1) : "n-" + std::to_string(v - 100) + ".parquet";
    testing::WriteCommit(root_, v, {RemoveLine(gone), AddLine("n-" + std::to_string(v) + ".parquet", v)});
    auto snap = Latest();
    ASSERT_EQ(snap->version(), v);
    ASSERT_EQ(snap->num_files(), 100);
    most_chunks = std::max(most_chunks, snap->live_files().chunks().size());
  }
  // Chunks grow geometrically from the newest back: about two per doubling.
  EXPECT_LE(most_chunks, static_cast<size_t>(2 * std::ceil(std::log2(kCommits)) + 2));
  EXPECT_EQ(Live(*Latest()), Live(*FreshLatest(root_)));
}

TEST_F(SharedFileChunks, RemovingEveryFileOfABatchDropsIt) {
  CreateCheckpointed(3);
  (void)Latest();
  testing::WriteCommit(root_, 1, {RemoveLine(File(0)), RemoveLine(File(1)), RemoveLine(File(2))});
  auto snap = Latest();
  EXPECT_EQ(snap->num_files(), 0);
  EXPECT_TRUE(snap->live_files().chunks().empty());
  auto all = snap->NewScan().Build();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE((*all)->files().empty());
}

TEST_F(SharedFileChunks, StatisticsAreParsedOnceForEverySnapshotSharingABatch) {
  CreateCheckpointed(200);
  auto before = Latest();
  auto scan = before->NewScan().Filter("id >= 500 AND id < 520").Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  // Files 50 and 51 hold ids 500..519; stats skip the rest.
  ASSERT_EQ((*scan)->files().size(), 2u);
  const auto& shared = *before->live_files().chunks()[0].shared();
  std::shared_ptr<arrow::StructArray> typed;
  {
    std::lock_guard lock(const_cast<FileChunk::Shared&>(shared).stats_mutex);
    typed = shared.stats;
  }
  ASSERT_NE(typed, nullptr) << "planning with a data filter keeps the typed statistics";
  EXPECT_EQ(typed->length(), before->live_files().chunks()[0].num_rows());

  testing::WriteCommit(root_, 1, {RemoveLine(File(3)), AddLine("new.parquet", 5, Stats(51))});
  auto after = Latest();
  auto again = after->NewScan().Filter("id >= 500 AND id < 520").Build();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->files().size(), 3u);
  // The checkpoint's batch kept the very array parsed for the earlier snapshot.
  const FileChunk& first = after->live_files().chunks()[0];
  ASSERT_EQ(first.shared().get(), &shared);
  std::lock_guard lock(first.shared()->stats_mutex);
  EXPECT_EQ(first.shared()->stats.get(), typed.get());
}

TEST_F(SharedFileChunks, TypedStatisticsReadBackAsTheJsonSays) {
  CreateCheckpointed(5);
  auto snap = Latest();
  internal::StatsLayout layout(snap->schema());
  auto stats = internal::ChunkStats(snap->live_files().chunks()[0], layout);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  internal::TypedStatsReader reader(*stats, {"id"});
  const LiveFiles& files = snap->live_files();
  int seen = 0;
  files.ForEach([&](FileRef ref) {
    ++seen;
    const std::string path(files.path(ref));
    const int i = std::stoi(path.substr(2));
    auto file = reader.At(ref.row);
    ASSERT_TRUE(file.has_value()) << path;
    EXPECT_EQ(file->num_records, 10);
    const auto& id = file->columns.at("id");
    EXPECT_EQ(std::static_pointer_cast<arrow::Int64Scalar>(id.min)->value, i * 10);
    EXPECT_EQ(std::static_pointer_cast<arrow::Int64Scalar>(id.max)->value, i * 10 + 9);
    EXPECT_EQ(id.null_count, 0);
  });
  EXPECT_EQ(seen, 5);
}

}  // namespace
}  // namespace deltacpp
