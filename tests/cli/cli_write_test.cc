// Runs the real `deltacpp` binary for `create` and `write`: SQL type spellings, the modes for an
// existing table, stdin rules, idempotent-write reporting and the progress line, which appears
// on a terminal (a pseudo-terminal made by script(1)) and never when stderr is piped.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>

#include "deltacpp/api.h"
#include "ops/ops_test_util.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"
#include "write_progress.h"

namespace deltacpp {
namespace {

using testing::Latest;
using testing::LogListing;
using testing::RunCli;
using testing::TempDir;

class CliWriteTest : public ::testing::Test {
 protected:
  void SetUp() override { table_ = dir_.str() + "/t"; }

  std::string WriteJson(const std::string& name, const std::string& lines) {
    const std::string path = dir_.str() + "/" + name;
    std::ofstream(path) << lines;
    return path;
  }

  TempDir dir_;
  std::string table_;
};

TEST_F(CliWriteTest, CreateAcceptsSqlTypeSpellingsInAnyCase) {
  auto r = RunCli("create " + table_ +
                      " --schema 'id BIGINT NOT NULL, amount decimal(10,2), at Timestamp_Ntz, "
                      "n INT, name STRING, score long'",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto schema = Latest(table_)->schema();
  ASSERT_EQ(schema->num_fields(), 6);
  EXPECT_TRUE(schema->field(0)->type()->Equals(arrow::int64()));
  EXPECT_FALSE(schema->field(0)->nullable());
  EXPECT_TRUE(schema->field(1)->type()->Equals(arrow::decimal128(10, 2)));
  EXPECT_TRUE(schema->field(2)->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO)));
  EXPECT_TRUE(schema->field(3)->type()->Equals(arrow::int32()));
  EXPECT_TRUE(schema->field(4)->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(schema->field(5)->type()->Equals(arrow::int64()));
}

TEST_F(CliWriteTest, CreateOnAnExistingTableFailsUnlessIfNotExistsOrOrReplace) {
  ASSERT_EQ(RunCli("create " + table_ + " --schema 'id long'", dir_).exit_code, 0);
  const auto one_version = LogListing(table_);

  auto again = RunCli("create " + table_ + " --schema 'id long'", dir_);
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find(table_), std::string::npos) << again.err;
  EXPECT_EQ(LogListing(table_), one_version);

  auto skip = RunCli("create " + table_ + " --schema 'other string' --if-not-exists", dir_);
  EXPECT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(LogListing(table_), one_version);
  EXPECT_EQ(Latest(table_)->schema()->field(0)->name(), "id");

  auto replace = RunCli("create " + table_ + " --schema 'other string' --or-replace", dir_);
  ASSERT_EQ(replace.exit_code, 0) << replace.err;
  auto snapshot = Latest(table_);
  EXPECT_EQ(snapshot->version(), 1);
  EXPECT_EQ(snapshot->schema()->field(0)->name(), "other");
  auto history = RunCli("history " + table_, dir_);
  EXPECT_NE(history.out.find("CREATE OR REPLACE TABLE"), std::string::npos) << history.out;

  auto both = RunCli("create " + table_ + " --schema 'id long' --or-replace --if-not-exists", dir_);
  EXPECT_NE(both.exit_code, 0);
}

TEST_F(CliWriteTest, StdinNeedsAnInputFormat) {
  auto r = RunCli("write " + table_ + " --mode append - < /dev/null", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--input-format"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(table_ + "/_delta_log"));
}

TEST_F(CliWriteTest, JsonWithoutGeneratedOrIdentityColumnsLetsThemBeComputed) {
  ASSERT_EQ(RunCli("create " + table_ +
                       " --schema 'id BIGINT GENERATED ALWAYS AS IDENTITY, d DATE, "
                       "y INT GENERATED ALWAYS AS (YEAR(d)), note STRING'",
                   dir_)
                .exit_code,
            0);
  // The keys the lines use decide the input's columns; `note` is missing too and reads null.
  const std::string rows =
      WriteJson("rows.json", "{\"d\": \"2024-02-03\"}\n{\"d\": \"1999-12-31\"}\n");
  auto r = RunCli("write " + table_ + " --mode append " + rows, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto read = RunCli("read " + table_ + " --format csv --columns id,d,y,note", dir_);
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_NE(read.out.find("1,2024-02-03,2024,\n"), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("2,1999-12-31,1999,\n"), std::string::npos) << read.out;
}

// Arrow's JSON reader needs every line inside one block (1 MiB by default): a table with a
// text column longer than that must still take the line, from a file and from stdin.
TEST_F(CliWriteTest, JsonLinesLongerThanAReadBlock) {
  ASSERT_EQ(RunCli("create " + table_ + " --schema 'id long, body string'", dir_).exit_code, 0);
  const std::string body(3 * 1024 * 1024 + 17, 'x');
  const std::string rows = WriteJson(
      "long.json", "{\"id\": 1, \"body\": \"" + body + "\"}\n{\"id\": 2, \"body\": \"short\"}\n");
  auto r = RunCli("write " + table_ + " --mode append " + rows, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto piped = RunCli("write " + table_ + " --mode append --input-format json - < " + rows, dir_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  auto read = RunCli("read " + table_ + " --format csv --where 'id = 1' --columns body", dir_);
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out, "body\n" + body + "\n" + body + "\n");
  auto count = RunCli("read " + table_ + " --format csv --columns id", dir_);
  std::multiset<std::string> ids;
  std::istringstream lines(count.out);
  for (std::string line; std::getline(lines, line);) ids.insert(line);
  EXPECT_EQ(ids, (std::multiset<std::string>{"id", "1", "1", "2", "2"}));
}

TEST_F(CliWriteTest, IdempotentWriteReportsTheSkip) {
  const std::string rows = WriteJson("rows.json", "{\"id\": 1}\n{\"id\": 2}\n");
  const std::string txn = " --txn-app-id loader --txn-version 3 ";
  auto first = RunCli("write " + table_ + " --mode append" + txn + rows, dir_);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("committed version 0: 2 rows"), std::string::npos) << first.out;
  for (const char* version : {"3", "2"}) {
    auto repeat = RunCli("write " + table_ + " --mode append --txn-app-id loader --txn-version " +
                             version + " " + rows,
                         dir_);
    ASSERT_EQ(repeat.exit_code, 0) << repeat.err;
    EXPECT_EQ(repeat.out,
              std::string("skipped: version ") + version +
                  " of app 'loader' is already in the table\n");
  }
  EXPECT_EQ(Latest(table_)->version(), 0);
}

TEST_F(CliWriteTest, ProgressOnlyOnATerminal) {
  const std::string rows = WriteJson("rows.json", "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3}\n");
  auto piped = RunCli("write " + table_ + " --mode append " + rows, dir_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err.find("wrote"), std::string::npos) << piped.err;

  // script(1) gives the command a pseudo-terminal and copies what it prints to our pipe.
  const std::string command = std::string(DELTACPP_CLI_PATH) + " write " + table_ +
                              " --mode append " + rows;
  FILE* pipe = popen(("script -qec '" + command + "' /dev/null").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("wrote 3 rows"), std::string::npos) << out;
  EXPECT_NE(out.find("in 1 file; committing"), std::string::npos) << out;
  EXPECT_NE(out.find("committed version 1: 3 rows in 1 files"), std::string::npos) << out;
}

TEST(WriteProgressLine, NamesRowsBytesAndFiles) {
  EXPECT_EQ(cli::FormatWriteProgress(WriteProgress{1500, 2, 3 * 1048576 + 104858, false}),
            "wrote 1500 rows, 3.1 MiB in 2 files");
  EXPECT_EQ(cli::FormatWriteProgress(WriteProgress{7, 1, 0, true}),
            "wrote 7 rows, 0.0 MiB in 1 file; committing");
}

}  // namespace
}  // namespace deltacpp
