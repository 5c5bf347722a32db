// `deltacpp restore` killed with SIGKILL at random moments, again and again, on a table with
// deletion vectors: after every kill the table reads, its latest version holds either the rows
// it had before the restore or exactly the rows of the restored version (never a mixture), and
// every earlier version still reads as it did. Real processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <thread>

#include "deltacpp/ops/delete.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/process_barrier.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::TempDir;

pid_t StartRestore(const std::string& root, int64_t version) {
  const std::string v = std::to_string(version);
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    execl(DELTACPP_CLI_PATH, DELTACPP_CLI_PATH, "restore", root.c_str(), "--version", v.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(RestoreCrash, KilledAtRandomTheLatestVersionIsTheOldRowsOrTheRestoredOnes) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {{"delta.enableDeletionVectors", "true"}},
                            /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2, 3, 4}, {"a", "b", "c", "d"}, "x");      // v1
  testing::AppendIdNamePart(root, {5, 6, 7}, {"e", "f", "g"}, "y");              // v2
  ASSERT_TRUE(DeleteBuilder(root).Where("id % 2 = 0").Execute().ok());          // v3: DVs
  testing::AppendIdNamePart(root, {8, 9}, {"h", "i"}, "z");                      // v4
  std::map<int64_t, std::multiset<std::string>> rows;  // every version's rows, as first read
  for (int64_t v = 0; v <= 4; ++v) rows[v] = testing::ReadRows(root, v);

  // How long a restore takes when left alone (process start included): the kills fall inside.
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(testing::WaitStatus(StartRestore(root, 2)), 0);
  const auto alone = std::chrono::steady_clock::now() - started;
  rows[5] = testing::ReadRows(root, 5);
  ASSERT_EQ(rows[5], rows[2]);
  const int64_t window_us =
      std::max<int64_t>(1000, std::chrono::duration_cast<std::chrono::microseconds>(alone).count());

  std::mt19937 rng(20261207);
  constexpr int kIterations = 40;
  int killed = 0, committed = 0;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t before = *testing::LatestVersion(root);
    const int64_t target = 1 + static_cast<int64_t>(rng() % 4);  // 1..4: each has other rows
    const pid_t pid = StartRestore(root, target);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % window_us));
    kill(pid, SIGKILL);
    const int status = testing::WaitStatus(pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++killed;

    const auto latest = testing::LatestVersion(root);
    ASSERT_TRUE(latest.has_value()) << "iteration " << i << ": the table does not load";
    ASSERT_TRUE(*latest == before || *latest == before + 1) << *latest << " after " << before;
    const auto now = testing::ReadRows(root, *latest);
    if (*latest == before + 1) {
      ++committed;
      EXPECT_EQ(now, rows[target]) << "iteration " << i << ": restore to " << target;
      EXPECT_EQ(testing::ReadCommitFile(root, *latest).operation, "RESTORE");
      rows[*latest] = now;
    } else {
      EXPECT_EQ(now, rows[before]) << "iteration " << i << ": a killed restore changed rows";
    }
  }
  // Every version, old and new, still reads as it first did.
  for (const auto& [v, expected] : rows) EXPECT_EQ(testing::ReadRows(root, v), expected) << v;
  EXPECT_GT(killed, kIterations / 4) << "most runs must die mid-way (" << committed
                                     << " committed)";
}

}  // namespace
}  // namespace deltacpp
