// The live file list replay builds from a checkpoint and the commits after it: exactly the
// files still live, each row's columns belonging to that row, whatever the pattern of removed
// checkpoint rows (none, one block, scattered one in two) and with adds from commits.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "deltacpp/api.h"
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

constexpr int kCheckpointFiles = 2000;

std::string FileName(int i) { return "f-" + std::to_string(i) + ".parquet"; }

// path -> size of every live file of `snapshot`.
std::map<std::string, int64_t> LiveSizes(const Snapshot& snapshot) {
  std::map<std::string, int64_t> out;
  const auto& files = *snapshot.files();
  const auto& paths = static_cast<const arrow::StringArray&>(*files.GetColumnByName("path"));
  const auto& sizes = static_cast<const arrow::Int64Array&>(*files.GetColumnByName("size"));
  for (int64_t i = 0; i < files.num_rows(); ++i) {
    EXPECT_TRUE(out.emplace(std::string(paths.GetView(i)), sizes.Value(i)).second)
        << "listed twice: " << paths.GetView(i);
  }
  return out;
}

class LiveFileList : public ::testing::Test {
 protected:
  // Version 0 adds f-0..f-1999 (size 1000 + i) and is checkpointed; version 1 removes those
  // `removed` selects and adds `added` new files (size 5000 + i).
  std::map<std::string, int64_t> Load(bool (*removed)(int), int added) {
    const std::string root = dir_.str() + "/t" + std::to_string(++tables_);
    FixtureTableWriter w(root);
    std::vector<std::string> lines = {ProtocolLine(), MetadataLine()};
    for (int i = 0; i < kCheckpointFiles; ++i) lines.push_back(AddLine(FileName(i), 1000 + i));
    EXPECT_TRUE(w.CommitRaw(lines).ok());
    EXPECT_TRUE(w.WriteCheckpoint().ok());
    std::vector<std::string> commit;
    for (int i = 0; i < kCheckpointFiles; ++i) {
      if (removed(i)) commit.push_back(RemoveLine(FileName(i)));
    }
    for (int i = 0; i < added; ++i) commit.push_back(AddLine("new-" + std::to_string(i), 5000 + i));
    if (!commit.empty()) {
      EXPECT_TRUE(w.CommitRaw(commit).ok());
    }
    auto snapshot = (*DeltaTable::Open(root))->Latest();
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    EXPECT_EQ((*snapshot)->state().checkpoint_version, std::optional<int64_t>(0));
    EXPECT_TRUE((*snapshot)->files()->ValidateFull().ok());
    return LiveSizes(**snapshot);
  }

  static std::map<std::string, int64_t> Expected(bool (*removed)(int), int added) {
    std::map<std::string, int64_t> out;
    for (int i = 0; i < kCheckpointFiles; ++i) {
      if (!removed(i)) out[FileName(i)] = 1000 + i;
    }
    for (int i = 0; i < added; ++i) out["new-" + std::to_string(i)] = 5000 + i;
    return out;
  }

  void Check(bool (*removed)(int), int added) {
    auto live = Load(removed, added);
    EXPECT_EQ(live.size(), Expected(removed, added).size());
    EXPECT_EQ(live, Expected(removed, added));
  }

  TempDir dir_;
  int tables_ = 0;
};

TEST_F(LiveFileList, CheckpointAlone) {
  Check([](int) { return false; }, 0);
}

TEST_F(LiveFileList, CheckpointPlusCommitAdds) {
  Check([](int) { return false; }, 3);
}

TEST_F(LiveFileList, OneRemovedBlockInTheMiddle) {
  Check([](int i) { return i >= 500 && i < 700; }, 0);
}

TEST_F(LiveFileList, FewScatteredRemovesAndAdds) {
  Check([](int i) { return i % 97 == 5; }, 2);
}

TEST_F(LiveFileList, EveryOtherCheckpointRowRemoved) {
  Check([](int i) { return i % 2 == 0; }, 4);
}

TEST_F(LiveFileList, EverythingRemoved) {
  Check([](int) { return true; }, 0);
}

}  // namespace
}  // namespace deltacpp
