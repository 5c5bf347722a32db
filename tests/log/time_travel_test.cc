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

TEST(TimestampText, IsoFormsParseToUtcMillis) {
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14T22:13:20Z"), kT0);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14 22:13:20"), kT0);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-15T00:13:20+02:00"), kT0);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14T22:13:20.250"), kT0 + 250);
  EXPECT_TRUE(IsDeltaError(ParseTimestampMillis("yesterday").status(), DeltaErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace deltacpp
