// Which checkpoint a snapshot starts from when several exist at one version (UUID-named, then
// complete multi-part, then classic; incomplete and empty ones ignored), and `_last_checkpoint`
// as a hint only.
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "deltacpp/api.h"
#include "log_test_util.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

namespace fs = std::filesystem;
using testing::AddLine;
using testing::FixtureTableWriter;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::TempDir;
using testing::WriteCommit;

constexpr int64_t kVersion = 2;

std::set<std::string> LivePaths(const Snapshot& s) {
  std::set<std::string> out;
  const auto& paths = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("path"));
  for (int64_t i = 0; i < paths.length(); ++i) out.insert(std::string(paths.GetView(i)));
  return out;
}

std::string LogPath(const std::string& root, const std::string& name) {
  return root + "/_delta_log/" + name;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The rows of a classic checkpoint holding protocol, metaData and one add per path (in that
// row order), written by the fixture writer into a scratch table.
std::shared_ptr<arrow::Table> CheckpointRows(const std::string& scratch_root,
                                             const std::vector<std::string>& paths) {
  FixtureTableWriter w(scratch_root);
  std::vector<std::string> lines = {ProtocolLine(), MetadataLine()};
  for (const auto& p : paths) lines.push_back(AddLine(p));
  EXPECT_TRUE(w.CommitRaw(lines).ok());
  EXPECT_TRUE(w.WriteCheckpoint().ok());
  auto file =
      arrow::io::ReadableFile::Open(LogPath(scratch_root, "00000000000000000000.checkpoint.parquet"))
          .ValueOrDie();
  auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  auto table = reader->ReadTable().ValueOrDie();
  EXPECT_EQ(table->num_rows(), static_cast<int64_t>(2 + paths.size()));
  return table;
}

void WriteParquet(const arrow::Table& table, const std::string& path) {
  auto sink = arrow::io::FileOutputStream::Open(path).ValueOrDie();
  ASSERT_TRUE(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink, 1024).ok());
  ASSERT_TRUE(sink->Close().ok());
}

// A table with commits 0..2 (commit-<v>.parquet added by each), where tests lay checkpoints
// at version 2 whose file lists differ from the commits' and from each other, so the files of
// the snapshot show which checkpoint was read.
class CheckpointChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.str() + "/t";
    WriteCommit(root_, 0, {ProtocolLine(), MetadataLine(), AddLine("commit-0.parquet")});
    WriteCommit(root_, 1, {AddLine("commit-1.parquet")});
    WriteCommit(root_, 2, {AddLine("commit-2.parquet")});
  }

  std::string Name(const std::string& suffix) const {
    return fmt::format("{:020d}.{}", kVersion, suffix);
  }

  void Classic(const std::vector<std::string>& paths) {
    WriteParquet(*CheckpointRows(scratch_.str() + "/classic", paths),
                 LogPath(root_, Name("checkpoint.parquet")));
  }

  // Parts `write` (1-based) of a `num_parts`-part checkpoint holding `paths`: part 1 gets
  // protocol and metaData, the adds are spread over all the parts.
  void MultiPart(const std::vector<std::string>& paths, int num_parts,
                 const std::set<int>& write, const std::string& scratch_name = "multi") {
    ASSERT_GE(static_cast<int>(paths.size()), num_parts);
    auto rows = CheckpointRows(scratch_.str() + "/" + scratch_name, paths);
    int64_t offset = 0;
    for (int part = 1; part <= num_parts; ++part) {
      const int64_t len = part == 1 ? 3 : (part == num_parts ? rows->num_rows() - offset : 1);
      if (write.count(part)) {
        WriteParquet(*rows->Slice(offset, len),
                     LogPath(root_, Name(fmt::format("checkpoint.{:010d}.{:010d}.parquet", part,
                                                     num_parts))));
      }
      offset += len;
    }
    ASSERT_EQ(offset, rows->num_rows());
  }

  void UuidJson(const std::string& uuid, const std::vector<std::string>& paths) {
    std::string text =
        fmt::format(R"({{"checkpointMetadata":{{"version":{}}}}})", kVersion) + "\n" +
        ProtocolLine() + "\n" + MetadataLine() + "\n";
    for (const auto& p : paths) text += AddLine(p) + "\n";
    WriteText(LogPath(root_, Name("checkpoint." + uuid + ".json")), text);
  }

  std::shared_ptr<Snapshot> LoadAt2() {
    auto table = DeltaTable::Open(root_);
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    if (!table.ok()) return nullptr;
    auto snap = (*table)->SnapshotAt(kVersion);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? *snap : nullptr;
  }

  static constexpr const char* kUuid = "3a0d65cd-4f9c-4b0a-8b5e-5f6a1e2c9d11";

  TempDir dir_, scratch_;
  std::string root_;
};

TEST_F(CheckpointChoice, CommitsAloneWhenNoCheckpointExists) {
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_FALSE(snap->state().checkpoint_version.has_value());
  EXPECT_EQ(LivePaths(*snap),
            (std::set<std::string>{"commit-0.parquet", "commit-1.parquet", "commit-2.parquet"}));
}

TEST_F(CheckpointChoice, UuidNamedBeatsMultiPartAndClassic) {
  Classic({"classic.parquet"});
  MultiPart({"multi-a.parquet", "multi-b.parquet"}, 2, {1, 2});
  UuidJson(kUuid, {"v2.parquet"});
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->state().checkpoint_version, std::optional<int64_t>(kVersion));
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"v2.parquet"}));
}

TEST_F(CheckpointChoice, UuidNamedParquetBeatsClassicAndTheGreatestNameWins) {
  Classic({"classic.parquet"});
  WriteParquet(*CheckpointRows(scratch_.str() + "/uuid-a", {"v2-a.parquet"}),
               LogPath(root_, Name("checkpoint.0b3c5f7e-0000-4000-8000-000000000001.parquet")));
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"v2-a.parquet"}));
  WriteParquet(*CheckpointRows(scratch_.str() + "/uuid-b", {"v2-b.parquet"}),
               LogPath(root_, Name("checkpoint.f0000000-0000-4000-8000-000000000002.parquet")));
  snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"v2-b.parquet"}));
}

TEST_F(CheckpointChoice, CompleteMultiPartBeatsClassic) {
  Classic({"classic.parquet"});
  MultiPart({"multi-a.parquet", "multi-b.parquet"}, 2, {1, 2});
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->state().checkpoint_version, std::optional<int64_t>(kVersion));
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"multi-a.parquet", "multi-b.parquet"}));
}

TEST_F(CheckpointChoice, IncompleteMultiPartIsIgnored) {
  Classic({"classic.parquet"});
  // Parts 1 and 2 of 3: the third is missing.
  MultiPart({"multi-a.parquet", "multi-b.parquet", "multi-c.parquet"}, 3, {1, 2});
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->state().checkpoint_version, std::optional<int64_t>(kVersion));
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"classic.parquet"}));
}

TEST_F(CheckpointChoice, CompleteMultiPartSetBeatsAnIncompleteOneWithMoreParts) {
  MultiPart({"two-a.parquet", "two-b.parquet"}, 2, {1, 2}, "two");
  MultiPart({"three-a.parquet", "three-b.parquet", "three-c.parquet"}, 3, {1, 3}, "three");
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->state().checkpoint_version, std::optional<int64_t>(kVersion));
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"two-a.parquet", "two-b.parquet"}));
}

TEST_F(CheckpointChoice, IncompleteMultiPartAloneLeavesTheCommits) {
  MultiPart({"multi-a.parquet", "multi-b.parquet"}, 2, {2});
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_FALSE(snap->state().checkpoint_version.has_value());
  EXPECT_EQ(LivePaths(*snap),
            (std::set<std::string>{"commit-0.parquet", "commit-1.parquet", "commit-2.parquet"}));
}

TEST_F(CheckpointChoice, EmptyCheckpointFilesAreIgnored) {
  Classic({"classic.parquet"});
  // An empty UUID-named checkpoint would otherwise win.
  WriteText(LogPath(root_, Name(std::string("checkpoint.") + kUuid + ".json")), "");
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"classic.parquet"}));

  // A multi-part checkpoint with an empty part is incomplete.
  MultiPart({"multi-a.parquet", "multi-b.parquet"}, 2, {1, 2});
  WriteText(LogPath(root_, Name("checkpoint.0000000002.0000000002.parquet")), "");
  snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_EQ(LivePaths(*snap), (std::set<std::string>{"classic.parquet"}));
}

TEST_F(CheckpointChoice, EmptyClassicCheckpointAloneLeavesTheCommits) {
  WriteText(LogPath(root_, Name("checkpoint.parquet")), "");
  // Even when `_last_checkpoint` points at it.
  WriteText(LogPath(root_, "_last_checkpoint"), R"({"version":2,"size":3})");
  auto snap = LoadAt2();
  ASSERT_TRUE(snap);
  EXPECT_FALSE(snap->state().checkpoint_version.has_value());
  EXPECT_EQ(LivePaths(*snap),
            (std::set<std::string>{"commit-0.parquet", "commit-1.parquet", "commit-2.parquet"}));
}

// `_last_checkpoint` that cannot be used while the only way to the state is a checkpoint found
// by listing: commits 0..2 are gone, a classic checkpoint at 2 holds their state.
class UnusableLastCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.str() + "/t";
    FixtureTableWriter w(root_);
    ASSERT_TRUE(w.CommitRaw({ProtocolLine(), MetadataLine(), AddLine("a.parquet")}).ok());
    ASSERT_TRUE(w.CommitRaw({AddLine("b.parquet")}).ok());
    ASSERT_TRUE(w.CommitRaw({AddLine("c.parquet")}).ok());
    ASSERT_TRUE(w.WriteCheckpoint().ok());
    ASSERT_TRUE(w.CommitRaw({AddLine("d.parquet")}).ok());
    ASSERT_TRUE(w.CommitRaw({AddLine("e.parquet")}).ok());
    for (int64_t v = 0; v <= 2; ++v) ASSERT_TRUE(fs::remove(testing::CommitPath(root_, v)));
  }

  void ExpectLatestFromTheListedCheckpoint() {
    auto table = DeltaTable::Open(root_);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto snap = (*table)->Latest();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_EQ((*snap)->version(), 4);
    EXPECT_EQ((*snap)->state().checkpoint_version, std::optional<int64_t>(2));
    EXPECT_EQ(LivePaths(**snap), (std::set<std::string>{"a.parquet", "b.parquet", "c.parquet",
                                                        "d.parquet", "e.parquet"}));
  }

  TempDir dir_;
  std::string root_;
};

TEST_F(UnusableLastCheckpoint, PointingAtAMissingCheckpointFallsBackToListing) {
  WriteText(LogPath(root_, "_last_checkpoint"), R"({"version":4,"size":7})");
  ExpectLatestFromTheListedCheckpoint();
}

TEST_F(UnusableLastCheckpoint, TornOrCorruptFallsBackToListing) {
  for (const std::string& text :
       {std::string(R"({"version":2,"si)"), std::string("\x00\x01garbage", 9), std::string(""),
        std::string(R"({"version":"two"})"), std::string(R"({"version":-3})")}) {
    SCOPED_TRACE(text);
    WriteText(LogPath(root_, "_last_checkpoint"), text);
    ExpectLatestFromTheListedCheckpoint();
  }
}

}  // namespace
}  // namespace deltacpp
