#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "deltacpp/ops/checkpoint.h"
#include "log/checkpoint_writer.h"
#include "protocol/table_properties.h"
#include "log_test_util.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

namespace fs = std::filesystem;
using internal::CleanupExpiredLogs;
using internal::ParseIntervalMs;
using testing::Load;
using testing::NowMs;
using testing::SetFileTimeMs;
using testing::TempDir;

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;

std::string LogFile(const std::string& root, const std::string& name) {
  return root + "/_delta_log/" + name;
}

std::string Versioned(int64_t v, const std::string& suffix) {
  return fmt::format("{:020d}{}", v, suffix);
}

std::set<std::string> LogListing(const std::string& root) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(root + "/_delta_log")) {
    out.insert(e.path().filename().string());
  }
  return out;
}

// Commits 0..14 (one file each after version 0), checkpoints at 5 and 10, `.crc` files at 3
// and 12, plus files cleanup must not touch. Every file gets modification time `old`.
class LogCleanupTest : public ::testing::Test {
 protected:
  void Build(const std::map<std::string, std::string>& configuration = {}) {
    root_ = dir_.str() + "/t";
    testing::FixtureTableWriter w(root_);
    auto schema = arrow::schema({arrow::field("id", arrow::int64())});
    ASSERT_TRUE(w.Create(schema, {}, configuration).ok());
    for (int64_t v = 1; v <= 14; ++v) {
      arrow::Int64Builder ids;
      ASSERT_TRUE(ids.Append(v).ok());
      auto data = arrow::Table::Make(schema, {ids.Finish().ValueOrDie()});
      ASSERT_TRUE(w.Append({testing::FixtureFile(data)}).ok());
    }
    for (int64_t v : {5, 10}) {
      auto snap = Load(root_, v);
      ASSERT_TRUE(snap);
      ASSERT_TRUE(internal::WriteCheckpoint(*snap).ok());
    }
    for (int64_t v : {3, 12}) std::ofstream(LogFile(root_, Versioned(v, ".crc"))) << "{}";
    std::ofstream(LogFile(root_, "notes.txt")) << "keep me";
    std::ofstream(LogFile(root_, "." + Versioned(2, ".json.crc"))) << "x";
    for (const auto& name : LogListing(root_)) SetFileTimeMs(LogFile(root_, name), old_);
  }

  TempDir dir_;
  std::string root_;
  const int64_t now_ = NowMs();
  const int64_t old_ = now_ - 40 * kDayMs;
};

TEST_F(LogCleanupTest, DeletesEverythingBelowTheNewestExpiredCheckpoint) {
  Build();
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());

  auto listing = LogListing(root_);
  for (int64_t v = 0; v < 10; ++v) {
    EXPECT_EQ(listing.count(Versioned(v, ".json")), 0u) << v;
  }
  EXPECT_EQ(listing.count(Versioned(5, ".checkpoint.parquet")), 0u);
  EXPECT_EQ(listing.count(Versioned(3, ".crc")), 0u);
  for (int64_t v = 10; v <= 14; ++v) {
    EXPECT_EQ(listing.count(Versioned(v, ".json")), 1u) << v;
  }
  EXPECT_EQ(listing.count(Versioned(10, ".checkpoint.parquet")), 1u);
  EXPECT_EQ(listing.count(Versioned(12, ".crc")), 1u);
  EXPECT_EQ(listing.count("_last_checkpoint"), 1u);
  EXPECT_EQ(listing.count("notes.txt"), 1u);
  EXPECT_EQ(listing.count("." + Versioned(2, ".json.crc")), 1u);

  for (int64_t v = 10; v <= 14; ++v) {
    auto snap = Load(root_, v);
    ASSERT_TRUE(snap) << v;
    EXPECT_EQ(snap->num_files(), v) << v;
  }
  auto table = DeltaTable::Open(root_);
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(IsDeltaError((*table)->SnapshotAt(9).status(), DeltaErrorCode::kVersionNotFound));
}

// A writer killed mid-put leaves its temporary file (".<name>.<16 hex>.tmp") behind; cleanup
// deletes those older than the retention, in the log and its sidecar folder, and keeps young
// ones, which may belong to a put in flight.
TEST_F(LogCleanupTest, LeftoverTemporaryFilesOlderThanTheRetentionGo) {
  Build();
  fs::create_directories(root_ + "/_delta_log/_sidecars");
  const std::string old_commit =
      LogFile(root_, "." + Versioned(15, ".json") + ".0123456789abcdef.tmp");
  const std::string old_sidecar = LogFile(root_, "_sidecars/.s.parquet.00000000000000aa.tmp");
  const std::string young =
      LogFile(root_, "." + Versioned(15, ".json") + ".fedcba9876543210.tmp");
  for (const auto& path : {old_commit, old_sidecar, young}) std::ofstream(path) << "partial";
  SetFileTimeMs(old_commit, old_);
  SetFileTimeMs(old_sidecar, old_);
  SetFileTimeMs(young, now_ - kHourMs);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());
  EXPECT_FALSE(fs::exists(old_commit));
  EXPECT_FALSE(fs::exists(old_sidecar));
  EXPECT_TRUE(fs::exists(young));
  EXPECT_EQ(LogListing(root_).count("." + Versioned(2, ".json.crc")), 1u);  // not a put's file
}

// An explicit checkpoint cleans up as an automatic one does (delta-spark's too).
TEST_F(LogCleanupTest, AnExplicitCheckpointCleansUpTheExpiredLog) {
  Build();
  auto written = CheckpointTable(root_);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_TRUE(*written);
  auto listing = LogListing(root_);
  EXPECT_EQ(listing.count(Versioned(14, ".checkpoint.parquet")), 1u);
  for (int64_t v = 0; v < 10; ++v) EXPECT_EQ(listing.count(Versioned(v, ".json")), 0u) << v;
  for (int64_t v = 10; v <= 14; ++v) EXPECT_TRUE(Load(root_, v)) << v;
}

TEST_F(LogCleanupTest, NothingIsDeletedWithoutAnExpiredCheckpoint) {
  Build();
  // The checkpoints are recent: neither may anchor the cleanup.
  for (int64_t v : {5, 10}) {
    SetFileTimeMs(LogFile(root_, Versioned(v, ".checkpoint.parquet")), now_ - kHourMs);
  }
  auto before = LogListing(root_);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());
  EXPECT_EQ(LogListing(root_), before);
}

TEST_F(LogCleanupTest, OnlyCheckpointsUpToTheSnapshotVersionAnchor) {
  Build();
  // At version 8 only the checkpoint at 5 may anchor.
  auto v8 = Load(root_, 8);
  ASSERT_TRUE(v8);
  ASSERT_TRUE(CleanupExpiredLogs(*v8, now_).ok());
  auto listing = LogListing(root_);
  for (int64_t v = 0; v < 5; ++v) EXPECT_EQ(listing.count(Versioned(v, ".json")), 0u) << v;
  for (int64_t v = 5; v <= 14; ++v) EXPECT_EQ(listing.count(Versioned(v, ".json")), 1u) << v;
  EXPECT_EQ(listing.count(Versioned(5, ".checkpoint.parquet")), 1u);
  for (int64_t v = 5; v <= 14; ++v) EXPECT_TRUE(Load(root_, v)) << v;
}

TEST_F(LogCleanupTest, StopsAtTheFirstVersionThatIsNotExpired) {
  Build();
  SetFileTimeMs(testing::CommitPath(root_, 4), now_ - kHourMs);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());
  auto listing = LogListing(root_);
  for (int64_t v = 0; v < 4; ++v) EXPECT_EQ(listing.count(Versioned(v, ".json")), 0u) << v;
  for (int64_t v = 4; v <= 14; ++v) EXPECT_EQ(listing.count(Versioned(v, ".json")), 1u) << v;
  EXPECT_EQ(listing.count(Versioned(5, ".checkpoint.parquet")), 1u);
  for (int64_t v = 5; v <= 14; ++v) EXPECT_TRUE(Load(root_, v)) << v;
}

TEST_F(LogCleanupTest, AYoungOldestVersionKeepsEverything) {
  // Cleanup goes oldest first, so a young version 0 stops it before any later, expired file.
  Build();
  SetFileTimeMs(testing::CommitPath(root_, 0), now_ - kHourMs);
  auto before = LogListing(root_);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());
  EXPECT_EQ(LogListing(root_), before);
}

TEST_F(LogCleanupTest, RetentionPropertyIsHonoured) {
  Build({{"delta.logRetentionDuration", "interval 60 days"}});
  auto before = LogListing(root_);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  // 40-day-old files are within a 60-day retention.
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());
  EXPECT_EQ(LogListing(root_), before);
  // ... and expired 30 days later.
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_ + 30 * kDayMs).ok());
  EXPECT_EQ(LogListing(root_).count(Versioned(0, ".json")), 0u);
  EXPECT_EQ(LogListing(root_).count(Versioned(10, ".json")), 1u);
}

TEST_F(LogCleanupTest, DisabledCleanupDeletesNothing) {
  Build({{"delta.enableExpiredLogCleanup", "false"}});
  auto before = LogListing(root_);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  ASSERT_TRUE(CleanupExpiredLogs(*latest, now_).ok());
  EXPECT_EQ(LogListing(root_), before);
}

TEST_F(LogCleanupTest, MalformedRetentionIsAnError) {
  Build({{"delta.logRetentionDuration", "interval 2 years"}});
  auto before = LogListing(root_);
  auto latest = Load(root_);
  ASSERT_TRUE(latest);
  auto st = CleanupExpiredLogs(*latest, now_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument)) << st.ToString();
  EXPECT_NE(st.message().find("delta.logRetentionDuration"), std::string::npos) << st.ToString();
  EXPECT_EQ(LogListing(root_), before);
}

TEST(IntervalParsing, AcceptsDeltaIntervalForms) {
  auto ms = [](std::string_view text) {
    auto r = ParseIntervalMs(text, "delta.test");
    EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
    return r.ok() ? *r : -1;
  };
  EXPECT_EQ(ms("interval 7 days"), 7 * kDayMs);
  EXPECT_EQ(ms("interval 1 week"), 7 * kDayMs);
  EXPECT_EQ(ms("2 weeks"), 14 * kDayMs);
  EXPECT_EQ(ms("interval 1 hour"), kHourMs);
  EXPECT_EQ(ms("INTERVAL 30 DAYS"), 30 * kDayMs);
  EXPECT_EQ(ms("  interval   90 minutes "), 90 * 60'000);
  EXPECT_EQ(ms("interval 45 seconds"), 45'000);
  EXPECT_EQ(ms("interval 1 second"), 1000);
  EXPECT_EQ(ms("interval 1 day 12 hours"), kDayMs + 12 * kHourMs);
  EXPECT_EQ(ms("interval 0 days"), 0);
  EXPECT_EQ(ms("interval 250 milliseconds"), 250);
}

TEST(IntervalParsing, RejectsMonthsYearsAndMalformedText) {
  for (std::string_view bad : {"interval 1 month", "interval 2 months", "1 year",
                               "interval 3 years", "interval", "", "7", "interval 7",
                               "interval seven days", "interval 7 fortnights", "7days",
                               "interval -1 days", "interval 1.5 days",
                               "interval 9999999999999999 weeks"}) {
    auto r = ParseIntervalMs(bad, "delta.deletedFileRetentionDuration");
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kInvalidArgument)) << bad;
    EXPECT_NE(r.status().message().find("delta.deletedFileRetentionDuration"), std::string::npos)
        << r.status().ToString();
  }
  auto months = ParseIntervalMs("interval 1 month", "delta.logRetentionDuration");
  EXPECT_NE(months.status().message().find("months and years"), std::string::npos);
}

TEST(IntervalParsing, PropertyDefaultsApplyWhenUnset) {
  auto config = TableConfig::Parse({{"delta.logRetentionDuration", "interval 2 days"}});
  EXPECT_EQ(config.log_retention_ms, 2 * kDayMs);
  EXPECT_EQ(config.deleted_file_retention_ms, 7 * kDayMs);
}

}  // namespace
}  // namespace deltacpp
