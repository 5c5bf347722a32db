// `deltacpp stream` killed with SIGKILL at random moments and restarted, while files keep
// landing: at the end every record is in the table exactly once. Real processes.
#include <fcntl.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <random>
#include <thread>

#include "deltacpp/ops/write.h"
#include "stream/stream_test_util.h"
#include "support/process_barrier.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

pid_t StartStream(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(DELTACPP_CLI_PATH));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(DELTACPP_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

// `iterations` times: `add_input()`, start `deltacpp stream args`, SIGKILL it after a random
// delay of up to 60 ms (a run takes 20-100 ms here); then one run that is left to finish (its
// wait status in `final_status`). Returns the runs the signal ended (not those that had
// finished first).
int KillLoop(const std::vector<std::string>& args, int iterations, std::mt19937& rng,
             const std::function<void()>& add_input, int* final_status) {
  int killed = 0;
  for (int i = 0; i < iterations; ++i) {
    add_input();
    const pid_t pid = StartStream(args);
    EXPECT_GT(pid, 0);
    if (pid <= 0) return killed;
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 60000));
    kill(pid, SIGKILL);
    // A run that had already finished was not killed: only a death by the signal counts.
    const int status = testing::WaitStatus(pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++killed;
  }
  *final_status = testing::WaitStatus(StartStream(args));
  return killed;
}

TEST(StreamCrash, KilledAtRandomAndRestartedEveryRecordLandsExactlyOnce) {
  testing::TempDir dir;
  const auto landing = dir.path() / "landing";
  const std::string sink = (dir.path() / "sink").string();
  const std::string checkpoint = (dir.path() / "checkpoint").string();
  fs::create_directories(landing);
  const std::vector<std::string> args = {
      "stream", "--source", "json:" + landing.string(), "--schema", "id long, name string",
      "--sink", sink, "--checkpoint", checkpoint, "--max-files", "2"};
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937 rng(seed);
  constexpr int kIterations = 150;
  constexpr int64_t kPerFile = 20;
  int64_t next_id = 0;
  int files = 0;
  int status = 0;
  const int killed = KillLoop(args, kIterations, rng, [&] {
    for (int k = static_cast<int>(rng() % 3); k > 0; --k) {
      testing::LandJson(landing, fmt::format("f{:05}.json", files++), next_id, kPerFile);
      next_id += kPerFile;
    }
  }, &status);
  // The last run, not killed, drains the folder.
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_GT(killed, kIterations / 4) << "a good share of the runs must die mid-way";
  EXPECT_EQ(testing::IdCounts(sink), testing::EachOnce(0, next_id))
      << files << " files, " << killed << " kills";
}

TEST(StreamCrash, DeltaToDeltaKilledAtRandomCopiesEveryRowExactlyOnce) {
  testing::TempDir dir;
  const std::string source = (dir.path() / "source").string();
  const std::string sink = (dir.path() / "sink").string();
  const std::string checkpoint = (dir.path() / "checkpoint").string();
  const std::vector<std::string> args = {"stream", "--source", "delta:" + source, "--sink", sink,
                                         "--checkpoint", checkpoint, "--max-files", "2"};
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937 rng(seed);
  int64_t next_id = 0;
  auto append = [&](int64_t n) {
    arrow::Int64Builder ids;
    arrow::StringBuilder names;
    for (int64_t i = next_id; i < next_id + n; ++i) {
      ASSERT_TRUE(ids.Append(i).ok());
      ASSERT_TRUE(names.Append("n").ok());
    }
    next_id += n;
    auto t = arrow::Table::Make(testing::IdNameSchema(), {*ids.Finish(), *names.Finish()});
    ASSERT_TRUE(WriteTable(source, t, {}).ok());
  };
  append(10);
  constexpr int kIterations = 100;
  int status = 0;
  const int killed = KillLoop(args, kIterations, rng, [&] {
    for (int k = static_cast<int>(rng() % 3); k > 0; --k) append(1 + rng() % 20);
  }, &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_GT(killed, kIterations / 4) << "a good share of the runs must die mid-way";
  EXPECT_EQ(testing::IdCounts(sink), testing::EachOnce(0, next_id)) << killed << " kills";
}

}  // namespace
}  // namespace deltacpp
