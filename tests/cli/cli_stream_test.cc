// `deltacpp stream`: a line per batch, a clean stop on SIGTERM after the batch in progress, a
// second process on the same checkpoint refused, bad options refused before anything runs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "stream/stream_test_util.h"
#include "support/cli_runner.h"
#include "support/process_barrier.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::LandJson;
using testing::RunCli;
using testing::TempDir;

// A running `deltacpp stream` whose stdout is read line by line.
struct Running {
  pid_t pid = -1;
  FILE* out = nullptr;

  explicit Running(const std::vector<std::string>& args) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      const int devnull = ::open("/dev/null", O_WRONLY);
      dup2(devnull, STDERR_FILENO);
      close(fds[0]);
      std::vector<char*> argv{const_cast<char*>(DELTACPP_CLI_PATH)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(DELTACPP_CLI_PATH, argv.data());
      _exit(127);
    }
    close(fds[1]);
    out = fdopen(fds[0], "r");
  }
  ~Running() {
    if (out) fclose(out);
    if (pid > 0) {
      kill(pid, SIGKILL);
      testing::WaitStatus(pid);
    }
  }
  std::string ReadLine() {
    char buf[4096];
    if (!out || !fgets(buf, sizeof(buf), out)) return "";
    return buf;
  }
  int Wait() {
    const int status = testing::WaitStatus(pid);
    pid = -1;
    return status;
  }
};

std::string Quote(const std::string& s) { return "'" + s + "'"; }

TEST(CliStream, PrintsALinePerBatchAndNothingWhenThereIsNothingNew) {
  TempDir dir;
  const auto landing = dir.path() / "in";
  LandJson(landing, "a.json", 0, 3);
  LandJson(landing, "b.json", 3, 2);
  const std::string args = "stream --source json:" + Quote(landing.string()) +
                           " --schema 'id long' --sink " + Quote(dir.str() + "/t") +
                           " --checkpoint " + Quote(dir.str() + "/ck") + " --max-files 1";
  auto first = RunCli(args, dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("batch 0: 3 rows -> version 0, 1 file waiting"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("batch 1: 2 rows -> version 1, 0 files waiting"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find(": 2 batches, 5 rows"), std::string::npos) << first.out;
  auto again = RunCli(args, dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find(": 0 batches, 0 rows"), std::string::npos) << again.out;
  auto read = RunCli("read " + Quote(dir.str() + "/t") + " --format csv --order-by id", dir);
  EXPECT_EQ(read.out, "id\n0\n1\n2\n3\n4\n");
}

TEST(CliStream, SigtermStopsAfterTheBatchInProgressAndASecondQueryIsRefused) {
  TempDir dir;
  const auto landing = dir.path() / "in";
  LandJson(landing, "a.json", 0, 3);
  const std::vector<std::string> args = {
      "stream", "--source", "json:" + landing.string(), "--schema", "id long",
      "--sink", dir.str() + "/t", "--checkpoint", dir.str() + "/ck", "--trigger",
      "interval=50ms"};
  Running running(args);
  ASSERT_GT(running.pid, 0);
  EXPECT_NE(running.ReadLine().find("batch 0: 3 rows"), std::string::npos);

  auto second = RunCli("stream --source json:" + Quote(landing.string()) +
                           " --schema 'id long' --sink " + Quote(dir.str() + "/t") +
                           " --checkpoint " + Quote(dir.str() + "/ck"),
                       dir);
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.err.find("InvalidArgument"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("in use by another running query"), std::string::npos) << second.err;

  LandJson(landing, "b.json", 3, 1);
  EXPECT_NE(running.ReadLine().find("batch 1: 1 row"), std::string::npos);
  ASSERT_EQ(kill(running.pid, SIGTERM), 0);
  const std::string summary = running.ReadLine();
  const int status = running.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(summary.find("2 batches, 4 rows (stopped)"), std::string::npos) << summary;
}

TEST(CliStream, BadOptionsAreRefusedBeforeAnythingRuns) {
  TempDir dir;
  fs::create_directories(dir.path() / "in");
  const std::string base = " --sink " + Quote(dir.str() + "/t") + " --checkpoint " +
                           Quote(dir.str() + "/ck");
  struct Case {
    std::string args, expected;
  };
  for (const auto& c : std::vector<Case>{
           {"--source ftp:" + Quote(dir.str() + "/in") + " --schema 'id long'", "--source"},
           {"--source json:" + Quote(dir.str() + "/in"), "needs --schema"},
           {"--source json:" + Quote(dir.str() + "/in") + " --schema 'id long' --trigger soon",
            "--trigger 'soon'"},
           {"--source json:" + Quote(dir.str() + "/in") + " --schema 'id long' --bad-records x",
            "--bad-records 'x'"},
           {"--source delta:" + Quote(dir.str() + "/in") + " --starting-version first",
            "--starting-version 'first'"},
       }) {
    auto r = RunCli("stream " + c.args + base, dir);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "t")) << c.args;
    EXPECT_FALSE(fs::exists(dir.path() / "ck")) << c.args;
  }
}

}  // namespace
}  // namespace deltacpp
