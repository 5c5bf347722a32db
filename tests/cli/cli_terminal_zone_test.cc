// The real `deltacpp` binary with stdout on a terminal (a pseudo-terminal), and run in local
// time zones other than UTC: zone-less timestamps on the command line and in CSV input are UTC.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::RunCli;
using testing::RunResult;
using testing::TempDir;

// Runs the CLI with stdin, stdout and stderr on a new pseudo-terminal; `out` gets everything
// written to the terminal.
RunResult RunCliOnTerminal(const std::vector<std::string>& args) {
  RunResult r;
  std::vector<std::string> storage = {DELTACPP_CLI_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return r;
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  char buf[4096];
  while (true) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      r.out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has closed the terminal
    }
  }
  close(master);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<arrow::Table> People() {
  arrow::Int64Builder id;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  (void)id.AppendValues({1, 2, 3});
  // 2024-01-15T00:00:00Z, 2024-01-15T00:00:00.500Z, 2024-01-14T23:00:00Z
  (void)ts.AppendValues({1'705'276'800'000'000LL, 1'705'276'800'500'000LL, 1'705'273'200'000'000LL});
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  return arrow::Table::Make(schema, {id.Finish().ValueOrDie(), ts.Finish().ValueOrDie()});
}

class CliEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/people";
    FixtureTableWriter w(table_);
    ASSERT_TRUE(w.Create(People()->schema()).ok());
    ASSERT_TRUE(w.Append({FixtureFile(People())}).ok());
    ASSERT_TRUE(w.SetCommitFileTime(0, 1'700'000'000'000).ok());  // 2023-11-14T22:13:20Z
    ASSERT_TRUE(w.SetCommitFileTime(1, 1'700'000'100'000).ok());  // 2023-11-14T22:15:00Z
  }
  TempDir dir_;
  std::string table_;
};

TEST_F(CliEnvironmentTest, ParquetToATerminalIsRefused) {
  auto r = RunCliOnTerminal({"read", table_, "--format", "parquet"});
  EXPECT_GT(r.exit_code, 0) << r.out;  // -1: did not exit normally
  EXPECT_NE(r.out.find("InvalidArgument"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--format parquet writes binary data"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PAR1"), std::string::npos) << "Parquet bytes reached the terminal";
}

TEST_F(CliEnvironmentTest, OtherFormatsAndParquetToAFileWorkFromATerminal) {
  auto csv = RunCliOnTerminal({"read", table_, "--format", "csv", "--columns", "id"});
  EXPECT_EQ(csv.exit_code, 0) << csv.out;
  EXPECT_NE(csv.out.find("id\r\n1\r\n2\r\n3\r\n"), std::string::npos) << csv.out;
  const std::string file = dir_.str() + "/out.parquet";
  auto parquet = RunCliOnTerminal({"read", table_, "--format", "parquet", "--output", file});
  EXPECT_EQ(parquet.exit_code, 0) << parquet.out;
  EXPECT_EQ(ReadFile(file).substr(0, 4), "PAR1");
}

// Sets TZ for this process (and so for the CLI processes it starts) and restores it after.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* zone) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ScopedTimeZone() {
    if (old_) {
      setenv("TZ", old_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> old_;
};

// UTC offset in seconds of the process's local zone at `epoch_s`.
long LocalOffsetSeconds(std::time_t epoch_s) {
  std::tm local{};
  localtime_r(&epoch_s, &local);
  return local.tm_gmtoff;
}

class CliInLocalZone : public CliEnvironmentTest,
                       public ::testing::WithParamInterface<std::pair<const char*, long>> {};

TEST_P(CliInLocalZone, ZoneLessTimestampsAreUtc) {
  ScopedTimeZone zone(GetParam().first);
  // The zone is really in force (its data is installed): otherwise this test proves nothing.
  ASSERT_EQ(LocalOffsetSeconds(1'700'000'000), GetParam().second);

  // Time travel: 22:14 UTC is between the commits (version 0, no rows), 22:15 UTC is version 1.
  // Read as local time, both would be outside the table's history.
  for (const char* ts : {"2023-11-14 22:14:00", "2023-11-14T22:14:00"}) {
    SCOPED_TRACE(ts);
    auto v0 = RunCli(std::string("read ") + table_ + " --timestamp '" + ts + "' --format csv", dir_);
    EXPECT_EQ(v0.exit_code, 0) << v0.err;
    EXPECT_EQ(v0.out, "id,ts\n");
  }
  auto v1 = RunCli("read " + table_ + " --timestamp 2023-11-14T22:15:00 --format csv --columns id",
                   dir_);
  EXPECT_EQ(v1.exit_code, 0) << v1.err;
  EXPECT_EQ(v1.out, "id\n1\n2\n3\n");

  // Filters: a zone-less TIMESTAMP literal against a zoned column.
  auto eq = RunCli("read " + table_ +
                       " --format csv --columns id --where \"ts = TIMESTAMP '2024-01-15 00:00:00'\"",
                   dir_);
  EXPECT_EQ(eq.exit_code, 0) << eq.err;
  EXPECT_EQ(eq.out, "id\n1\n");
  auto lt = RunCli("read " + table_ +
                       " --format csv --columns id --where \"ts < TIMESTAMP '2024-01-15 00:00:00.250'\"",
                   dir_);
  EXPECT_EQ(lt.exit_code, 0) << lt.err;
  EXPECT_EQ(lt.out, "id\n1\n3\n");

  // Output stays in UTC too.
  auto all = RunCli("read " + table_ + " --format csv", dir_);
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out,
            "id,ts\n1,2024-01-15T00:00:00Z\n2,2024-01-15T00:00:00.500000Z\n3,2024-01-14T23:00:00Z\n");
  auto history = RunCli("history " + table_ + " --format csv", dir_);
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_NE(history.out.find("\n1,2023-11-14T22:15:00Z,WRITE,"), std::string::npos) << history.out;
}

TEST_P(CliInLocalZone, ZoneLessTimestampsWrittenFromCsvAreUtc) {
  ScopedTimeZone zone(GetParam().first);
  ASSERT_EQ(LocalOffsetSeconds(1'700'000'000), GetParam().second);
  const std::string t = dir_.str() + "/written";
  auto created = RunCli("create " + t +
                            " --schema 'id long, ts timestamp, n timestamp_ntz, p timestamp'"
                            " --partition-by p",
                        dir_);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string csv = dir_.str() + "/in.csv";
  {
    std::ofstream out(csv);
    out << "id,ts,n,p\n"
           "1,2024-01-15 00:00:00,2024-01-15 00:00:00,2024-01-15 00:00:00\n"
           "2,2024-01-15T05:00:00Z,2024-01-15 05:00:00,2024-01-15T05:00:00+05:00\n";
  }
  auto written = RunCli("write " + t + " " + csv, dir_);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  auto back = RunCli("read " + t + " --format csv", dir_);
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out,
            "id,ts,n,p\n"
            "1,2024-01-15T00:00:00Z,2024-01-15T00:00:00,2024-01-15T00:00:00Z\n"
            "2,2024-01-15T05:00:00Z,2024-01-15T05:00:00,2024-01-15T00:00:00Z\n");
  // Both rows are in the one partition of 2024-01-15T00:00:00Z.
  auto files = RunCli("files " + t + " --format csv", dir_);
  EXPECT_EQ(files.exit_code, 0) << files.err;
  EXPECT_EQ(std::count(files.out.begin(), files.out.end(), '\n'), 2) << files.out;
  EXPECT_NE(files.out.find("2024-01-15 00:00:00"), std::string::npos) << files.out;
}

INSTANTIATE_TEST_SUITE_P(Zones, CliInLocalZone,
                         ::testing::Values(std::make_pair("America/New_York", -5L * 3600),
                                           std::make_pair("Asia/Kolkata", 5L * 3600 + 1800)),
                         [](const auto& info) {
                           return std::string(info.param.first).substr(0, 4) == "Asia"
                                      ? std::string("Kolkata")
                                      : std::string("NewYork");
                         });

}  // namespace
}  // namespace deltacpp
