// Real concurrency: forked processes committing blind appends to one table at the same time.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "support/process_barrier.h"
#include "txn/txn_test_util.h"

namespace deltacpp::testing {
namespace {

constexpr int kWriters = 4;
constexpr int kCommitsPerWriter = 10;

constexpr int kExitOk = 0;
constexpr int kExitBarrierBroken = 2;
constexpr int kExitOpenFailed = 3;
constexpr int kExitCommitFailed = 4;

std::string PathOf(int writer, int commit) {
  return fmt::format("writer-{}/commit-{:02d}.parquet", writer, commit);
}

// Runs in a forked child: no gtest assertions here, only an exit code for the parent.
// Reports the commit attempts it needed in total on `report_fd` (one int).
[[noreturn]] void WriterChild(StartBarrier& barrier, int report_fd, const std::string& root,
                              int writer) {
  alarm(300);  // dies instead of hanging the suite
  if (!barrier.Wait()) _exit(kExitBarrierBroken);

  auto store = MakeLocalLogStore();
  auto table = DeltaTable::Open(root, store);
  if (!table.ok()) {
    std::fprintf(stderr, "writer %d: %s\n", writer, table.status().ToString().c_str());
    _exit(kExitOpenFailed);
  }
  int attempts = 0;
  for (int i = 0; i < kCommitsPerWriter; ++i) {
    auto snapshot = (*table)->Latest();
    if (!snapshot.ok()) {
      std::fprintf(stderr, "writer %d: %s\n", writer, snapshot.status().ToString().c_str());
      _exit(kExitCommitFailed);
    }
    auto txn = Transaction::Start(*table, *snapshot);
    if (!txn.ok()) _exit(kExitCommitFailed);
    (*txn)->AddFiles({FakeAdd(PathOf(writer, i))});
    auto committed = (*txn)->Commit("WRITE", {{"mode", "Append"}});
    if (!committed.ok()) {
      std::fprintf(stderr, "writer %d commit %d: %s\n", writer, i,
                   committed.status().ToString().c_str());
      _exit(kExitCommitFailed);
    }
    attempts += committed->attempts;
  }
  if (write(report_fd, &attempts, sizeof(attempts)) != sizeof(attempts)) _exit(kExitCommitFailed);
  _exit(kExitOk);
}

TEST(MultiProcessCommit, ConcurrentBlindAppendsAllLandExactlyOnce) {
  TxnTestTable t;
  auto created = t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema()));
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  StartBarrier barrier;
  ASSERT_TRUE(barrier.ok());
  int report[2];
  ASSERT_EQ(pipe(report), 0) << std::strerror(errno);
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    if (pid == 0) {
      close(report[0]);
      WriterChild(barrier, report[1], t.root(), w);
    }
    if (pid < 0) {
      ADD_FAILURE() << "fork failed: " << std::strerror(errno);
      break;
    }
    children.push_back(pid);
  }
  close(report[1]);
  // Closing the only remaining write end releases every child at once.
  barrier.Release();
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(WaitChild(child, &status), child);
    ASSERT_TRUE(WIFEXITED(status)) << "writer killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), kExitOk);
  }
  ASSERT_EQ(children.size(), static_cast<size_t>(kWriters));
  int total_attempts = 0;
  int attempts = 0;
  while (read(report[0], &attempts, sizeof(attempts)) == sizeof(attempts)) {
    total_attempts += attempts;
  }
  close(report[0]);
  // More attempts than commits means writers really raced and retried.
  RecordProperty("commit_attempts", total_attempts);
  std::printf("%d commits took %d attempts\n", kWriters * kCommitsPerWriter, total_attempts);
  EXPECT_GE(total_attempts, kWriters * kCommitsPerWriter);

  const int64_t total = kWriters * kCommitsPerWriter;
  auto table = t.Open();
  ASSERT_TRUE(table.ok());
  auto latest = (*table)->Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version(), total);

  // Every version is readable and holds one more file than the one before.
  for (int64_t v = 0; v <= total; ++v) {
    auto snap = (*table)->SnapshotAt(v);
    ASSERT_TRUE(snap.ok()) << "version " << v << ": " << snap.status().ToString();
    EXPECT_EQ((*snap)->num_files(), v) << "version " << v;
  }
  // Each commit holds exactly one add, and every path appears once.
  std::map<std::string, int> seen;
  for (const auto& p : LivePaths(**latest)) ++seen[p];
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kCommitsPerWriter; ++i) {
      EXPECT_EQ(seen[PathOf(w, i)], 1) << PathOf(w, i);
    }
  }
  for (int64_t v = 1; v <= total; ++v) {
    auto lines = t.CommitLines(v);
    ASSERT_EQ(lines.size(), 2u) << "version " << v;
    EXPECT_EQ(ActionName(lines[0]), "commitInfo");
    EXPECT_EQ(ActionName(lines[1]), "add");
  }
}

}  // namespace
}  // namespace deltacpp::testing
