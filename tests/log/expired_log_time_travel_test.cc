// Time travel on a table whose oldest commits were cleaned up: only versions from the oldest
// checkpoint on can be reconstructed, by version or by timestamp.
#include <gtest/gtest.h>

#include <filesystem>

#include "deltacpp/api.h"
#include "log_test_util.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

namespace fs = std::filesystem;
using testing::AddLine;
using testing::CommitPath;
using testing::FixtureTableWriter;
using testing::TempDir;

constexpr int64_t kT0 = 1'700'000'000'000;  // 2023-11-14T22:13:20Z

// Commit v is dated kT0 + v * 10 s.
constexpr int64_t CommitTime(int64_t v) { return kT0 + v * 10'000; }

// Versions 0..8, one added file per commit from version 1 on (file-v.parquet), a classic
// checkpoint at 5, then commits 0..4 deleted as log cleanup does (5.json is kept).
class ExpiredLog : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.str() + "/t";
    FixtureTableWriter w(root_);
    ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64())})).ok());
    for (int64_t v = 1; v <= 8; ++v) {
      auto written = w.CommitRaw({AddLine("file-" + std::to_string(v) + ".parquet")});
      ASSERT_TRUE(written.ok()) << written.status().ToString();
      ASSERT_EQ(*written, v);
      if (v == 5) {
        ASSERT_TRUE(w.WriteCheckpoint().ok());
      }
    }
    for (int64_t v = 0; v <= 8; ++v) ASSERT_TRUE(w.SetCommitFileTime(v, CommitTime(v)).ok());
    for (int64_t v = 0; v <= 4; ++v) ASSERT_TRUE(fs::remove(CommitPath(root_, v)));
    auto table = DeltaTable::Open(root_);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = *table;
  }

  TempDir dir_;
  std::string root_;
  std::shared_ptr<DeltaTable> table_;
};

TEST_F(ExpiredLog, VersionsBeforeTheCheckpointCannotBeReconstructed) {
  for (int64_t v : {0, 3, 4}) {
    SCOPED_TRACE(v);
    auto snap = table_->SnapshotAt(v);
    ASSERT_FALSE(snap.ok());
    EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kVersionNotFound))
        << snap.status().ToString();
    const std::string& msg = snap.status().message();
    EXPECT_NE(msg.find(root_), std::string::npos) << msg;
    EXPECT_NE(msg.find("version " + std::to_string(v) + " cannot be reconstructed"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("earliest reconstructable version is 5"), std::string::npos) << msg;
  }
}

TEST_F(ExpiredLog, VersionsFromTheCheckpointOnLoad) {
  for (int64_t v = 5; v <= 8; ++v) {
    SCOPED_TRACE(v);
    auto snap = table_->SnapshotAt(v);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_EQ((*snap)->version(), v);
    EXPECT_EQ((*snap)->state().checkpoint_version, std::optional<int64_t>(5));
    EXPECT_EQ((*snap)->num_files(), v);  // file-1 .. file-v
  }
  auto latest = table_->Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version(), 8);
}

TEST_F(ExpiredLog, TimestampsBeforeTheEarliestReconstructableCommitAreOutOfRange) {
  // Commits 0..4 are gone, so their times no longer count: the earliest commit is 5.
  for (int64_t ts : {CommitTime(0), CommitTime(3), CommitTime(5) - 1}) {
    SCOPED_TRACE(ts);
    auto v = table_->VersionAtTimestamp(ts);
    ASSERT_FALSE(v.ok()) << *v;
    EXPECT_TRUE(IsDeltaError(v.status(), DeltaErrorCode::kTimestampOutOfRange))
        << v.status().ToString();
    EXPECT_NE(v.status().message().find("earliest available version 5"), std::string::npos)
        << v.status().message();
  }
  EXPECT_TRUE(IsDeltaError(table_->SnapshotAtTimestamp(CommitTime(5) - 1).status(),
                           DeltaErrorCode::kTimestampOutOfRange));
}

TEST_F(ExpiredLog, TimestampsFromTheCheckpointCommitOnResolve) {
  EXPECT_EQ(*table_->VersionAtTimestamp(CommitTime(5)), 5);
  EXPECT_EQ(*table_->VersionAtTimestamp(CommitTime(5) + 5'000), 5);
  EXPECT_EQ(*table_->VersionAtTimestamp(CommitTime(6) - 1), 5);
  EXPECT_EQ(*table_->VersionAtTimestamp(CommitTime(6)), 6);
  EXPECT_EQ(*table_->VersionAtTimestamp(CommitTime(8)), 8);
  EXPECT_TRUE(IsDeltaError(table_->VersionAtTimestamp(CommitTime(8) + 1).status(),
                           DeltaErrorCode::kTimestampOutOfRange));
  auto snap = table_->SnapshotAtTimestamp(CommitTime(5) + 5'000);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->version(), 5);
  EXPECT_EQ((*snap)->num_files(), 5);
}

TEST_F(ExpiredLog, HistoryListsTheRemainingCommits) {
  auto history = table_->History();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 4u);
  for (size_t i = 0; i < history->size(); ++i) {
    const int64_t v = 8 - static_cast<int64_t>(i);
    EXPECT_EQ((*history)[i].version, v);
    EXPECT_EQ((*history)[i].timestamp_ms, CommitTime(v));
  }
}

TEST_F(ExpiredLog, CheckpointVersionLoadsWithoutItsCommitFile) {
  ASSERT_TRUE(fs::remove(CommitPath(root_, 5)));
  auto v5 = table_->SnapshotAt(5);
  ASSERT_TRUE(v5.ok()) << v5.status().ToString();
  EXPECT_EQ((*v5)->num_files(), 5);
  auto v7 = table_->SnapshotAt(7);
  ASSERT_TRUE(v7.ok()) << v7.status().ToString();
  EXPECT_EQ((*v7)->num_files(), 7);
  EXPECT_TRUE(IsDeltaError(table_->SnapshotAt(4).status(), DeltaErrorCode::kVersionNotFound));
}

// A cleanup that stopped part-way (as one interrupted after deleting its oldest files): commits
// 3 and 4 are still listed, but without commits 0..2 they cannot be replayed, so the earliest
// reconstructable version is still the checkpoint's, not the oldest commit file's.
TEST_F(ExpiredLog, LeftoverCommitsBeforeTheCheckpointDoNotCount) {
  const std::string kept = dir_.str() + "/kept";
  {
    FixtureTableWriter w(kept);
    ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64())})).ok());
    for (int64_t v = 1; v <= 8; ++v) {
      ASSERT_TRUE(w.CommitRaw({AddLine("file-" + std::to_string(v) + ".parquet")}).ok());
      if (v == 5) {
        ASSERT_TRUE(w.WriteCheckpoint().ok());
      }
    }
    for (int64_t v = 0; v <= 8; ++v) ASSERT_TRUE(w.SetCommitFileTime(v, CommitTime(v)).ok());
    for (int64_t v = 0; v <= 2; ++v) ASSERT_TRUE(fs::remove(CommitPath(kept, v)));
  }
  auto table = DeltaTable::Open(kept);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  for (int64_t v : {3, 4}) {
    SCOPED_TRACE(v);
    ASSERT_TRUE(fs::exists(CommitPath(kept, v)));
    auto snap = (*table)->SnapshotAt(v);
    ASSERT_FALSE(snap.ok());
    EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kVersionNotFound))
        << snap.status().ToString();
    auto at = (*table)->VersionAtTimestamp(CommitTime(v));
    ASSERT_FALSE(at.ok()) << *at;
    EXPECT_TRUE(IsDeltaError(at.status(), DeltaErrorCode::kTimestampOutOfRange))
        << at.status().ToString();
  }
  EXPECT_EQ(*(*table)->VersionAtTimestamp(CommitTime(5)), 5);
  EXPECT_EQ((*(*table)->SnapshotAt(5))->num_files(), 5);
}

// The same with in-commit timestamps from version 0: commit 5's in-commit timestamp is the
// earliest time; file times play no part.
TEST(ExpiredLogWithInCommitTimestamps, EarliestTimeIsTheCheckpointCommitsTimestamp) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  auto ict = [](int64_t v) { return kT0 + 1'000'000 + v * 1'000; };
  ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64())}), {},
                       {{"delta.enableInCommitTimestamps", "true"}}, 1, 7, {},
                       {"inCommitTimestamp"}, ict(0))
                  .ok());
  for (int64_t v = 1; v <= 8; ++v) {
    ASSERT_TRUE(w.Append({}, "WRITE", ict(v), ict(v)).ok());
    if (v == 5) {
      ASSERT_TRUE(w.WriteCheckpoint().ok());
    }
  }
  // File times far from the in-commit timestamps.
  for (int64_t v = 0; v <= 8; ++v) ASSERT_TRUE(w.SetCommitFileTime(v, CommitTime(v)).ok());
  for (int64_t v = 0; v <= 4; ++v) ASSERT_TRUE(fs::remove(CommitPath(root, v)));
  auto table = *DeltaTable::Open(root);
  EXPECT_TRUE(IsDeltaError(table->VersionAtTimestamp(ict(5) - 1).status(),
                           DeltaErrorCode::kTimestampOutOfRange));
  EXPECT_TRUE(IsDeltaError(table->VersionAtTimestamp(ict(2)).status(),
                           DeltaErrorCode::kTimestampOutOfRange));
  EXPECT_EQ(*table->VersionAtTimestamp(ict(5)), 5);
  EXPECT_EQ(*table->VersionAtTimestamp(ict(6) - 1), 5);
  EXPECT_EQ(*table->VersionAtTimestamp(ict(8)), 8);
  auto history = table->History();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 4u);
  EXPECT_EQ(history->back().version, 5);
  EXPECT_EQ(history->back().timestamp_ms, ict(5));
}

}  // namespace
}  // namespace deltacpp
