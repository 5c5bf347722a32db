// Runs the real `deltacpp` binary for `delete` and `update`: the rows they leave, the metrics
// they print (one `name: value` per line), the report when nothing matched, and errors.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "deltacpp/api.h"
#include "ops/ops_test_util.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::LogListing;
using testing::ReadRows;
using testing::RunCli;
using testing::TempDir;

class CliDmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    ASSERT_EQ(RunCli("create " + table_ +
                         " --schema 'id BIGINT, name STRING' "
                         "--property delta.enableDeletionVectors=true",
                     dir_)
                  .exit_code,
              0);
    const std::string rows = dir_.str() + "/rows.json";
    std::ofstream(rows) << "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n"
                           "{\"id\":3,\"name\":\"c\"}\n";
    auto written = RunCli("write " + table_ + " --mode append " + rows, dir_);
    ASSERT_EQ(written.exit_code, 0) << written.err;
  }

  TempDir dir_;
  std::string table_;
};

TEST_F(CliDmlTest, DeletePrintsTheCommittedVersionAndEachMetric) {
  auto r = RunCli("delete " + table_ + " --where 'id = 2'", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed version 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numDeletedRows: 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numDeletionVectorsAdded: 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("executionTimeMs: "), std::string::npos) << r.out;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|a", "3|c"}));
}

TEST_F(CliDmlTest, DeleteWithoutWhereEmptiesTheTable) {
  auto r = RunCli("delete " + table_, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("numRemovedFiles: 1\n"), std::string::npos) << r.out;
  EXPECT_TRUE(ReadRows(table_).empty());
}

TEST_F(CliDmlTest, DeleteMatchingNothingSaysSoAndCommitsNothing) {
  const auto log_before = LogListing(table_);
  auto r = RunCli("delete " + table_ + " --where 'id > 100'", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no row matched; nothing committed\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numDeletedRows: 0\n"), std::string::npos) << r.out;
  EXPECT_EQ(LogListing(table_), log_before);
}

TEST_F(CliDmlTest, UpdateTakesSeveralAssignments) {
  auto r = RunCli("update " + table_ + " --set 'name = upper(name)' --set 'id = id * 10' "
                      "--where 'id >= 2'",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed version 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numUpdatedRows: 2\n"), std::string::npos) << r.out;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|a", "20|B", "30|C"}));
}

TEST_F(CliDmlTest, UpdateErrorsNameTheProblem) {
  const auto log_before = LogListing(table_);
  auto no_eq = RunCli("update " + table_ + " --set 'name'", dir_);
  EXPECT_NE(no_eq.exit_code, 0);
  EXPECT_NE(no_eq.err.find("column = expression"), std::string::npos) << no_eq.err;
  auto unknown = RunCli("update " + table_ + " --set 'nope = 1'", dir_);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("nope"), std::string::npos) << unknown.err;
  auto missing = RunCli("update " + table_ + " --where 'id = 1'", dir_);
  EXPECT_NE(missing.exit_code, 0);
  auto bad_where = RunCli("delete " + table_ + " --where 'id ='", dir_);
  EXPECT_NE(bad_where.exit_code, 0);
  EXPECT_NE(bad_where.err.find("error"), std::string::npos) << bad_where.err;
  EXPECT_EQ(LogListing(table_), log_before);
}

}  // namespace
}  // namespace deltacpp
