#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "log_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AddLine;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::SetCommitTime;
using testing::TempDir;
using testing::WriteCommit;

constexpr int64_t kT0 = 1'700'000'000'000;  // 2023-11-14T22:13:20Z

class FileTimeTravel : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteCommit(dir_.str(), 0, {ProtocolLine(), MetadataLine(), AddLine("a.parquet")});
    WriteCommit(dir_.str(), 1, {AddLine("b.parquet")});
    WriteCommit(dir_.str(), 2, {AddLine("c.parquet")});
    WriteCommit(dir_.str(), 3, {AddLine("d.parquet")});
    SetCommitTime(dir_.str(), 0, kT0);
    SetCommitTime(dir_.str(), 1, kT0 + 10'000);
    // Clock went backwards: version 2 is dated 1 ms after version 1.
    SetCommitTime(dir_.str(), 2, kT0 + 5'000);
    SetCommitTime(dir_.str(), 3, kT0 + 20'000);
    table_ = *DeltaTable::Open(dir_.str());
  }
  TempDir dir_;
  std::shared_ptr<DeltaTable> table_;
};

TEST_F(FileTimeTravel, PicksLastCommitAtOrBeforeTheTimestamp) {
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0), 0);
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 9'999), 0);
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 10'000), 1);
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 10'001), 2);  // monotonised: t1 + 1 ms
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 19'999), 2);
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 20'000), 3);
  auto snap = table_->SnapshotAtTimestamp(kT0 + 15'000);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->version(), 2);
  EXPECT_EQ((*snap)->num_files(), 3);
}

TEST_F(FileTimeTravel, OutOfRangeTimestampsAreErrors) {
  auto before = table_->VersionAtTimestamp(kT0 - 1);
  EXPECT_TRUE(IsDeltaError(before.status(), DeltaErrorCode::kTimestampOutOfRange));
  auto after = table_->VersionAtTimestamp(kT0 + 20'001);
  EXPECT_TRUE(IsDeltaError(after.status(), DeltaErrorCode::kTimestampOutOfRange));
}

TEST_F(FileTimeTravel, HistoryIsNewestFirstWithMonotonicTimestamps) {
  auto history = table_->History();
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 4u);
  EXPECT_EQ((*history)[0].version, 3);
  EXPECT_EQ((*history)[3].version, 0);
  EXPECT_EQ((*history)[1].timestamp_ms, kT0 + 10'001);
  auto limited = table_->History(2);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 2u);
}

TEST(InCommitTimestampTravel, UsesInCommitTimestampsNotFileTimes) {
  TempDir dir;
  const std::string conf = R"({"delta.enableInCommitTimestamps":"true"})";
  auto ci = [](int64_t ts) {
    return fmt::format(R"({{"commitInfo":{{"inCommitTimestamp":{},"timestamp":{},"operation":"WRITE"}}}})", ts, ts);
  };
  WriteCommit(dir.str(), 0, {ci(kT0), ProtocolLine(1, 7).replace(ProtocolLine(1, 7).find("7}"), 2, R"(7,"writerFeatures":["inCommitTimestamp"]})"),
                             MetadataLine(R"({"name":"id","type":"long","nullable":true,"metadata":{}})", "[]", conf),
                             AddLine("a.parquet")});
  WriteCommit(dir.str(), 1, {ci(kT0 + 1'000), AddLine("b.parquet")});
  WriteCommit(dir.str(), 2, {ci(kT0 + 2'000), AddLine("c.parquet")});
  // File times disagree with the in-commit timestamps and must be ignored.
  SetCommitTime(dir.str(), 0, kT0 + 50'000);
  SetCommitTime(dir.str(), 1, kT0 + 40'000);
  SetCommitTime(dir.str(), 2, kT0 + 30'000);
  auto table = *DeltaTable::Open(dir.str());
  EXPECT_EQ(*table->VersionAtTimestamp(kT0 + 1'500), 1);
  EXPECT_EQ(*table->VersionAtTimestamp(kT0 + 2'000), 2);
  EXPECT_TRUE(IsDeltaError(table->VersionAtTimestamp(kT0 - 1).status(),
                           DeltaErrorCode::kTimestampOutOfRange));
  auto snap = *table->SnapshotAt(1);
  EXPECT_EQ(snap->timestamp_ms(), kT0 + 1'000);
}

// In-commit timestamps enabled at version 3 of a table that existed without them: versions
// 0..2 are dated by their file times, 3..5 by commitInfo.inCommitTimestamp.
class InCommitTimestampsEnabledLater : public ::testing::Test {
 protected:
  static constexpr int64_t kIct3 = kT0 + 30'000;
  static constexpr int64_t kIct4 = kT0 + 40'000;
  static constexpr int64_t kIct5 = kT0 + 50'000;

  // `late_file_times`: the commit files of 3..5 are dated after every in-commit timestamp
  // (kT0 + 100..120 s); otherwise between version 2's file time and kIct3 (kT0 + 21..23 s).
  void Write(bool late_file_times) {
    const std::string& root = dir_.str();
    WriteCommit(root, 0, {ProtocolLine(), MetadataLine(), AddLine("a.parquet")});
    WriteCommit(root, 1, {AddLine("b.parquet")});
    WriteCommit(root, 2, {AddLine("c.parquet")});
    auto ci = [](int64_t ict, int64_t ts) {
      return fmt::format(
          R"({{"commitInfo":{{"inCommitTimestamp":{},"timestamp":{},"operation":"WRITE"}}}})", ict,
          ts);
    };
    const std::string conf = fmt::format(
        R"({{"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"3","delta.inCommitTimestampEnablementTimestamp":"{}"}})",
        kIct3);
    WriteCommit(root, 3,
                {ci(kIct3, kIct3),
                 R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","invariants","inCommitTimestamp"]}})",
                 MetadataLine(R"({"name":"id","type":"long","nullable":true,"metadata":{}})", "[]",
                              conf),
                 AddLine("d.parquet")});
    WriteCommit(root, 4, {ci(kIct4, kIct4), AddLine("e.parquet")});
    WriteCommit(root, 5, {ci(kIct5, kIct5), AddLine("f.parquet")});
    SetCommitTime(root, 0, kT0);
    SetCommitTime(root, 1, kT0 + 10'000);
    SetCommitTime(root, 2, kT0 + 20'000);
    const int64_t base = late_file_times ? kT0 + 100'000 : kT0 + 21'000;
    const int64_t step = late_file_times ? 10'000 : 1'000;
    for (int64_t v = 3; v <= 5; ++v) SetCommitTime(root, v, base + (v - 3) * step);
    table_ = *DeltaTable::Open(root);
  }

  TempDir dir_;
  std::shared_ptr<DeltaTable> table_;
};

TEST_F(InCommitTimestampsEnabledLater, FileTimesBeforeEnablementInCommitTimestampsAfter) {
  Write(/*late_file_times=*/true);
  EXPECT_TRUE(IsDeltaError(table_->VersionAtTimestamp(kT0 - 1).status(),
                           DeltaErrorCode::kTimestampOutOfRange));
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0), 0);
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 10'000), 1);
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 25'000), 2);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct3 - 1), 2);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct3), 3);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct4 + 5'000), 4);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct5), 5);
  // Version 5's file is dated kT0 + 120 s, but its commit time is kIct5: later is after the
  // latest commit.
  for (int64_t ts : {kIct5 + 1, kT0 + 105'000, kT0 + 120'000}) {
    SCOPED_TRACE(ts);
    EXPECT_TRUE(IsDeltaError(table_->VersionAtTimestamp(ts).status(),
                             DeltaErrorCode::kTimestampOutOfRange));
  }
  auto snap = table_->SnapshotAtTimestamp(kIct4 + 1);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->version(), 4);
  EXPECT_EQ((*snap)->num_files(), 5);
  EXPECT_EQ((*snap)->timestamp_ms(), kIct4);
  auto v2 = table_->SnapshotAt(2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ((*v2)->timestamp_ms(), kT0 + 20'000);
}

TEST_F(InCommitTimestampsEnabledLater, EnabledCommitsAreNotDatedByEarlierFileTimes) {
  Write(/*late_file_times=*/false);
  // Versions 3..5 have files dated kT0 + 21..23 s, before their in-commit timestamps.
  EXPECT_EQ(*table_->VersionAtTimestamp(kT0 + 22'500), 2);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct3 - 1), 2);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct3 + 1), 3);
  EXPECT_EQ(*table_->VersionAtTimestamp(kIct5 + 0), 5);
}

TEST_F(InCommitTimestampsEnabledLater, HistoryDatesEachCommitTheSameWay) {
  Write(/*late_file_times=*/true);
  auto history = table_->History();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 6u);
  const std::vector<int64_t> expected = {kIct5, kIct4, kIct3, kT0 + 20'000, kT0 + 10'000, kT0};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ((*history)[i].version, 5 - static_cast<int64_t>(i));
    EXPECT_EQ((*history)[i].timestamp_ms, expected[i]) << "version " << (*history)[i].version;
  }
}

TEST(InCommitTimestampTravel, MalformedEnablementVersionIsCorruptLog) {
  TempDir dir;
  const std::string conf =
      R"({"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"three"})";
  WriteCommit(dir.str(), 0,
              {R"({"commitInfo":{"inCommitTimestamp":1700000000000,"timestamp":1700000000000}})",
               R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}})",
               MetadataLine(R"({"name":"id","type":"long","nullable":true,"metadata":{}})", "[]",
                            conf)});
  auto table = *DeltaTable::Open(dir.str());
  auto v = table->VersionAtTimestamp(kT0);
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(IsDeltaError(v.status(), DeltaErrorCode::kCorruptLog)) << v.status().ToString();
  EXPECT_NE(v.status().message().find("delta.inCommitTimestampEnablementVersion"),
            std::string::npos)
      << v.status().message();
  EXPECT_NE(v.status().message().find(dir.str()), std::string::npos) << v.status().message();
  EXPECT_TRUE(IsDeltaError(table->History().status(), DeltaErrorCode::kCorruptLog));
}

TEST(TimestampText, IsoFormsParseToUtcMillis) {
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14T22:13:20Z"), kT0);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14 22:13:20"), kT0);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-15T00:13:20+02:00"), kT0);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14T22:13:20.250"), kT0 + 250);
  EXPECT_TRUE(IsDeltaError(ParseTimestampMillis("yesterday").status(), DeltaErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace deltacpp
