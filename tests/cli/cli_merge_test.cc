// Runs the real `deltacpp` binary for `merge`: clauses in command-line order, conditions and
// assignments in the option values, the metrics it prints and its errors.
#include <gtest/gtest.h>

#include <filesystem>
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

class CliMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    ASSERT_EQ(RunCli("create " + table_ + " --schema 'id BIGINT, nama STRING, nilai BIGINT'", dir_)
                  .exit_code,
              0);
    const std::string rows = dir_.str() + "/rows.csv";
    std::ofstream(rows) << "id,nama,nilai\n1,Ali,85\n2,Budi,90\n3,Citra,78\n";
    auto written = RunCli("write " + table_ + " " + rows, dir_);
    ASSERT_EQ(written.exit_code, 0) << written.err;
    source_ = dir_.str() + "/source.csv";
    std::ofstream(source_) << "id,nama,nilai\n2,Budi,95\n4,Dewi,92\n";
  }

  TempDir dir_;
  std::string table_;
  std::string source_;
};

TEST_F(CliMergeTest, UpsertFromACsvFile) {
  auto r = RunCli("merge " + table_ + " --source " + source_ +
                      " --target-alias t --source-alias s --on 't.id = s.id'"
                      " --when-matched-update 'nilai = s.nilai' --when-not-matched-insert-all",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed version 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numTargetRowsUpdated: 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numTargetRowsInserted: 1\n"), std::string::npos) << r.out;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|Ali|85", "2|Budi|95", "3|Citra|78",
                                                          "4|Dewi|92"}));
}

TEST_F(CliMergeTest, ClausesFollowTheCommandLineOrderAndTakeConditions) {
  auto r = RunCli("merge " + table_ + " --source " + source_ +
                      " --on 'target.id = source.id'"
                      " --when-matched-delete 'source.nilai > 94'"
                      " --when-matched-update 'AND source.nilai > 0 THEN nama = upper(source.nama),"
                      " nilai = CASE WHEN source.nilai > 1 THEN 1 ELSE 2 END'"
                      " --when-not-matched-insert 'AND source.nilai > 0 THEN id = source.id,"
                      " nama = concat(source.nama, \"!\")'",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("numTargetRowsDeleted: 1\n"), std::string::npos) << r.out;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|Ali|85", "3|Citra|78",
                                                          "4|Dewi!|null"}));
}

TEST_F(CliMergeTest, ErrorsNameTheProblemAndCommitNothing) {
  const auto log_before = LogListing(table_);
  auto early = RunCli("merge " + table_ + " --source " + source_ +
                          " --on 'target.id = source.id' --when-matched-delete"
                          " --when-matched-update 'nilai = 1'",
                      dir_);
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_NE(early.err.find("WHEN MATCHED clause 1 (DELETE) has no condition"), std::string::npos)
      << early.err;
  auto no_eq = RunCli("merge " + table_ + " --source " + source_ +
                          " --on 'target.id = source.id' --when-matched-update 'nilai'",
                      dir_);
  EXPECT_EQ(no_eq.exit_code, 1);
  EXPECT_NE(no_eq.err.find("expected 'column = expression'"), std::string::npos) << no_eq.err;
  EXPECT_EQ(LogListing(table_), log_before);
}

TEST_F(CliMergeTest, SourceIsAVersionOfADeltaTable) {
  // The source table: version 1 holds the source rows, version 2 something else.
  const std::string source_table = dir_.str() + "/source_table";
  ASSERT_EQ(RunCli("create " + source_table + " --schema 'id BIGINT, nama STRING, nilai BIGINT'",
                   dir_)
                .exit_code,
            0);
  ASSERT_EQ(RunCli("write " + source_table + " " + source_, dir_).exit_code, 0);
  const std::string other = dir_.str() + "/other.csv";
  std::ofstream(other) << "id,nama,nilai\n3,Citra,1\n";
  ASSERT_EQ(RunCli("write " + source_table + " " + other + " --mode overwrite", dir_).exit_code, 0);
  const std::string clauses =
      " --target-alias t --source-alias s --on 't.id = s.id'"
      " --when-matched-update 'nilai = s.nilai' --when-not-matched-insert-all";
  // A directory with a _delta_log is a Delta table; --source-version picks the version.
  auto r = RunCli("merge " + table_ + " --source " + source_table + " --source-version 1" + clauses,
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("numSourceRows: 2\n"), std::string::npos) << r.out;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|Ali|85", "2|Budi|95", "3|Citra|78",
                                                          "4|Dewi|92"}));
  // Without a version: the latest; --source-format delta says so explicitly.
  r = RunCli("merge " + table_ + " --source " + source_table + " --source-format delta" + clauses,
             dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|Ali|85", "2|Budi|95", "3|Citra|1",
                                                          "4|Dewi|92"}));
  // A version the source does not have, and a version for a source file, are refused.
  const auto log_before = LogListing(table_);
  r = RunCli("merge " + table_ + " --source " + source_table + " --source-version 7" + clauses,
             dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("VersionNotFound"), std::string::npos) << r.err;
  r = RunCli("merge " + table_ + " --source " + source_ + " --source-version 0" + clauses, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--source-version needs a Delta table"), std::string::npos) << r.err;
  EXPECT_EQ(LogListing(table_), log_before);
}

TEST_F(CliMergeTest, MergeSchemaAddsTheSourcesNewColumns) {
  const std::string source = dir_.str() + "/with_class.csv";
  std::ofstream(source) << "id,nama,nilai,kelas\n2,Budi,95,07\n4,Dewi,92,+62\n";
  const std::string merge = "merge " + table_ + " --source " + source +
                            " --on 't.id = s.id' --target-alias t --source-alias s"
                            " --when-matched-update-all --when-not-matched-insert-all";
  // Without --merge-schema the extra column is left out.
  auto r = RunCli(merge, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"1|Ali|85", "2|Budi|95", "3|Citra|78",
                                                          "4|Dewi|92"}));
  r = RunCli(merge + " --merge-schema", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A column new to the table keeps the CSV text as a string (leading zeros and '+' stay).
  EXPECT_EQ(ReadRows(table_),
            (std::multiset<std::string>{"1|Ali|85|null", "2|Budi|95|07", "3|Citra|78|null",
                                        "4|Dewi|92|+62"}));
}

TEST_F(CliMergeTest, LongSourcePathWithClauseOptionsWithoutValues) {
  // The clause options' values must outlive the command's setup: a long source path and
  // options given without a value once crashed the parser (values freed before parsing). The
  // plain build crashed only for some heap layouts; `make test-asan` reports any such use.
  const std::string long_dir = dir_.str() + "/" + std::string(80, 's');
  std::filesystem::create_directories(long_dir);
  const std::string source = long_dir + "/source.csv";
  std::ofstream(source) << "id,nama,nilai\n2,Budi,95\n4,Dewi,92\n";
  auto r = RunCli("merge " + table_ + " --source " + source +
                      " --on 'target.id = source.id' --when-matched-update-all"
                      " --when-not-matched-insert-all --when-not-matched-by-source-delete",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadRows(table_), (std::multiset<std::string>{"2|Budi|95", "4|Dewi|92"}));
}

}  // namespace
}  // namespace deltacpp
