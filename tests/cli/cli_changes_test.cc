// `deltacpp changes`: bounds given as versions or timestamps, output formats, column and row
// selection, and the errors of ranges the feed cannot serve. Tables are made by the fixture
// writer with known commit times; expected rows come from what the test wrote.
#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "support/cli_runner.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::RunCli;
using testing::TempDir;

std::shared_ptr<arrow::Table> Ids(std::vector<int64_t> ids) {
  arrow::Int64Builder b;
  (void)b.AppendValues(ids);
  return arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}),
                            {b.Finish().ValueOrDie()});
}

// Version 0 creates the table with the feed on; 1 appends id 1, 2 appends ids 2 and 3, 3
// removes the file of version 1. Commit times: 2024-01-01T00:00:00Z plus v minutes.
class CliChanges : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    FixtureTableWriter w(table_);
    ASSERT_TRUE(
        w.Create(Ids({})->schema(), {}, {{"delta.enableChangeDataFeed", "true"}}, 1, 4).ok());
    ASSERT_TRUE(w.Append({FixtureFile(Ids({1}))}).ok());
    const auto first = w.active_paths();
    ASSERT_TRUE(w.Append({FixtureFile(Ids({2, 3}))}).ok());
    ASSERT_TRUE(w.Remove(first).ok());
    for (int64_t v = 0; v <= 3; ++v) {
      ASSERT_TRUE(w.SetCommitFileTime(v, kBaseMs + v * 60'000).ok());
    }
  }
  static constexpr int64_t kBaseMs = 1'704'067'200'000;  // 2024-01-01T00:00:00Z
  TempDir dir_;
  std::string table_;
};

TEST_F(CliChanges, VersionRangeAsCsv) {
  auto r = RunCli("changes " + table_ + " --from 1 --to 2 --format csv", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "id,_change_type,_commit_version,_commit_timestamp\n"
            "1,insert,1,2024-01-01T00:01:00Z\n"
            "2,insert,2,2024-01-01T00:02:00Z\n"
            "3,insert,2,2024-01-01T00:02:00Z\n");
}

TEST_F(CliChanges, TimestampBoundsResolveToCommits) {
  // From just after version 1 (-> 2) to just before version 3 (-> 2).
  auto r = RunCli("changes " + table_ +
                      " --from 2024-01-01T00:01:00.001Z --to '2024-01-01 00:02:59' "
                      "--columns id,_commit_version --format csv",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "id,_commit_version\n2,2\n3,2\n");
}

TEST_F(CliChanges, OpenEndedRangeWithFilterAsJson) {
  auto r = RunCli("changes " + table_ +
                      " --from 0 --where \"_change_type = 'delete'\" --columns id,_change_type "
                      "--format json",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"id\":1,\"_change_type\":\"delete\"}\n");
}

TEST_F(CliChanges, RangesTheFeedCannotServeFail) {
  auto r = RunCli("changes " + table_ + " --from 4", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("VersionNotFound"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("start version 4"), std::string::npos) << r.err;
  r = RunCli("changes " + table_ + " --from 3 --to 1", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("InvalidArgument"), std::string::npos) << r.err;
  r = RunCli("changes " + table_ + " --from 2024-01-01T00:03:00.001Z", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("TimestampOutOfRange"), std::string::npos) << r.err;
  r = RunCli("changes " + table_ + " --from yesterday", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--from yesterday"), std::string::npos) << r.err;
  r = RunCli("changes " + table_, dir_);
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
}  // namespace deltacpp
