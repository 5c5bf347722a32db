// DELETE and UPDATE racing in separate processes: each either commits or fails with a typed
// conflict, the table ends up holding exactly the effects of the committed ones, and no
// losing operation leaves a file behind.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include "deltacpp/api.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/update.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/process_barrier.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AppendIdNamePart;
using testing::CreateIdNamePart;
using testing::DataFiles;
using testing::DescribeStatus;
using testing::ForkChild;
using testing::kChildBarrierBroken;
using testing::kChildOk;
using testing::kChildUnexpected;
using testing::ReadRows;
using testing::ReferencedFiles;
using testing::StartBarrier;
using testing::TempDir;
using testing::WaitStatus;

constexpr int kRacers = 4;

// Child `k` deletes id k (odd k) or sets the name of id k to 'u' (even k); it reports one byte:
// 'S' committed, 'A' / 'R' / 'D' the conflict it lost with, 'X' anything else.
int Racer(StartBarrier& barrier, int report_fd, const std::string& root, int k) {
  if (!barrier.Wait()) return kChildBarrierBroken;
  arrow::Status status;
  if (k % 2 == 1) {
    status = DeleteBuilder(root).Where("id = " + std::to_string(k)).Execute().status();
  } else {
    status = UpdateBuilder(root).Set("name", "'u'").Where("id = " + std::to_string(k))
                 .Execute().status();
  }
  char outcome = 'S';
  if (!status.ok()) {
    auto code = GetDeltaErrorCode(status);
    outcome = !code                                              ? 'X'
              : *code == DeltaErrorCode::kConcurrentAppend       ? 'A'
              : *code == DeltaErrorCode::kConcurrentDeleteRead   ? 'R'
              : *code == DeltaErrorCode::kConcurrentDeleteDelete ? 'D'
                                                                 : 'X';
    if (outcome == 'X') std::fprintf(stderr, "racer %d: %s\n", k, status.ToString().c_str());
  }
  const char report[2] = {static_cast<char>('0' + k), outcome};
  return write(report_fd, report, 2) == 2 ? kChildOk : kChildUnexpected;
}

void RaceOn(const std::map<std::string, std::string>& properties, const TempDir& dir,
            const std::string& name) {
  const std::string root = (dir.path() / name).string();
  CreateIdNamePart(root, properties, /*partitioned=*/false);
  AppendIdNamePart(root, {1, 2, 3, 4}, {"a", "b", "c", "d"}, "p");
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  StartBarrier barrier;
  std::vector<pid_t> children;
  for (int k = 1; k <= kRacers; ++k) {
    pid_t pid = ForkChild([&, k] {
      close(report[0]);
      return Racer(barrier, report[1], root, k);
    });
    if (pid < 0) break;
    children.push_back(pid);
  }
  close(report[1]);
  barrier.Release();
  for (pid_t child : children) {
    int status = WaitStatus(child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kChildOk) << DescribeStatus(status);
  }
  std::map<int, char> outcomes;
  char pair[2];
  while (read(report[0], pair, 2) == 2) outcomes[pair[0] - '0'] = pair[1];
  close(report[0]);
  ASSERT_EQ(outcomes.size(), static_cast<size_t>(kRacers));
  std::multiset<std::string> expected;
  const char* names[] = {"", "a", "b", "c", "d"};
  int committed = 0;
  for (int k = 1; k <= kRacers; ++k) {
    const char o = outcomes[k];
    EXPECT_NE(o, 'X') << "racer " << k;
    const bool won = o == 'S';
    committed += won;
    if (k % 2 == 1) {
      if (!won) expected.insert(std::to_string(k) + "|" + names[k] + "|p");
    } else {
      expected.insert(std::to_string(k) + "|" + (won ? "u" : names[k]) + "|p");
    }
  }
  EXPECT_GE(committed, 1);
  EXPECT_EQ(ReadRows(root), expected) << name;
  // What the log references: the live files of every version and the change-data files of
  // every commit (a winning UPDATE on the change-data table writes some).
  auto referenced = ReferencedFiles(root);
  const auto latest = testing::LatestVersion(root);
  for (int64_t v = 0; latest && v <= *latest; ++v) {
    for (const auto& cdc : testing::ReadCommitFile(root, v).cdc) referenced.insert(cdc.path);
  }
  EXPECT_EQ(DataFiles(root), referenced) << name << ": a losing racer left files";
}

TEST(DmlRace, DeletesAndUpdatesOfOneFileFromSeveralProcesses) {
  TempDir dir;
  RaceOn({}, dir, "copy_on_write");
  RaceOn({{"delta.enableDeletionVectors", "true"}, {"delta.enableChangeDataFeed", "true"}}, dir,
         "deletion_vectors");
}

}  // namespace
}  // namespace deltacpp
