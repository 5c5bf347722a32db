// MERGE racing in separate processes. Upserts that read the same file: each commits or fails
// with a typed conflict, and the table holds exactly the effects of those that committed.
// Insert-only merges whose ON condition confines them to their own partition read disjoint
// parts of the table, so every one of them commits (after retries), as delta-spark's do; and
// under the default WriteSerializable level a blind append never conflicts with an insert-only
// merge. No losing merge leaves a file behind.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>

#include "deltacpp/api.h"
#include "deltacpp/ops/merge.h"
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

std::shared_ptr<arrow::RecordBatchReader> Source(int64_t id, const std::string& name,
                                                 const std::string& part = "p") {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8()),
                               arrow::field("part", arrow::utf8())});
  return testing::Rows(schema, {testing::Longs({id}), testing::Strings({name}),
                                testing::Strings({part})});
}

enum class Race {
  // Racer k upserts (k, "m<k>"): id k exists, so the merge rewrites the one file.
  kUpsertsOfOneFile,
  // Racer k inserts (100 + k, "n<k>", "p<k>") with an insert-only merge whose ON condition
  // names partition p<k>.
  kInsertOnlyIntoOwnPartition,
  // Racer 1 inserts (101, "n1", "p") with an insert-only merge, the others append
  // (200 + k, "w<k>", "p") blindly. (Two insert-only merges of one unpartitioned table read
  // all of it and may conflict, as in delta-spark.)
  kInsertOnlyBesideBlindAppends,
};

// One byte per racer: 'S' committed, 'A' / 'R' / 'D' the conflict it lost with, 'X' anything
// else (printed).
int Racer(StartBarrier& barrier, int report_fd, const std::string& root, int k, Race race) {
  if (!barrier.Wait()) return kChildBarrierBroken;
  arrow::Status status;
  if (race == Race::kUpsertsOfOneFile) {
    status = MergeBuilder(root, Source(k, "m" + std::to_string(k)))
                 .TargetAlias("t")
                 .SourceAlias("s")
                 .On("t.id = s.id")
                 .WhenMatchedUpdate(std::nullopt, {{"name", "s.name"}})
                 .WhenNotMatchedInsertAll()
                 .Execute()
                 .status();
  } else if (race == Race::kInsertOnlyIntoOwnPartition) {
    const std::string part = "p" + std::to_string(k);
    status = MergeBuilder(root, Source(100 + k, "n" + std::to_string(k), part))
                 .TargetAlias("t")
                 .SourceAlias("s")
                 .On("t.id = s.id AND t.part = '" + part + "'")
                 .WhenNotMatchedInsertAll()
                 .Execute()
                 .status();
  } else if (k == 1) {
    status = MergeBuilder(root, Source(100 + k, "n" + std::to_string(k)))
                 .TargetAlias("t")
                 .SourceAlias("s")
                 .On("t.id = s.id")
                 .WhenNotMatchedInsertAll()
                 .Execute()
                 .status();
  } else {
    status = WriteTable(root, Source(200 + k, "w" + std::to_string(k)), WriteOptions{}).status();
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

// Runs the racers and returns each one's outcome.
std::map<int, char> RunRacers(const std::string& root, Race race) {
  int report[2];
  EXPECT_EQ(pipe(report), 0);
  StartBarrier barrier;
  std::vector<pid_t> children;
  for (int k = 1; k <= kRacers; ++k) {
    pid_t pid = ForkChild([&, k] {
      close(report[0]);
      return Racer(barrier, report[1], root, k, race);
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
  return outcomes;
}

// Every file in the table directory is one the log references (live files of every version,
// change-data files of every commit).
void ExpectNoStrayFiles(const std::string& root, const std::string& name) {
  auto referenced = ReferencedFiles(root);
  const auto latest = testing::LatestVersion(root);
  for (int64_t v = 0; latest && v <= *latest; ++v) {
    for (const auto& cdc : testing::ReadCommitFile(root, v).cdc) referenced.insert(cdc.path);
  }
  EXPECT_EQ(DataFiles(root), referenced) << name << ": a losing merge left files";
}

void UpsertRace(const std::map<std::string, std::string>& properties, const TempDir& dir,
                const std::string& name) {
  const std::string root = (dir.path() / name).string();
  CreateIdNamePart(root, properties, /*partitioned=*/false);
  AppendIdNamePart(root, {1, 2, 3, 4}, {"a", "b", "c", "d"}, "p");
  auto outcomes = RunRacers(root, Race::kUpsertsOfOneFile);
  ASSERT_EQ(outcomes.size(), static_cast<size_t>(kRacers));
  std::multiset<std::string> expected;
  const char* names[] = {"", "a", "b", "c", "d"};
  int committed = 0;
  for (int k = 1; k <= kRacers; ++k) {
    const char o = outcomes[k];
    EXPECT_NE(o, 'X') << name << " racer " << k;
    const bool won = o == 'S';
    committed += won;
    expected.insert(std::to_string(k) + "|" + (won ? "m" + std::to_string(k) : names[k]) + "|p");
  }
  EXPECT_GE(committed, 1) << name;
  EXPECT_EQ(ReadRows(root), expected) << name;
  ExpectNoStrayFiles(root, name);
}

TEST(MergeRace, UpsertsOfOneFileFromSeveralProcesses) {
  TempDir dir;
  UpsertRace({}, dir, "copy_on_write");
  UpsertRace({{"delta.enableDeletionVectors", "true"}, {"delta.enableChangeDataFeed", "true"}},
             dir, "deletion_vectors");
}

// Every racer must commit: `expected` gets each one's row.
void AllCommit(const std::string& root, Race race, std::multiset<std::string> expected,
               const std::function<std::string(int)>& row_of) {
  auto outcomes = RunRacers(root, race);
  ASSERT_EQ(outcomes.size(), static_cast<size_t>(kRacers));
  for (int k = 1; k <= kRacers; ++k) {
    EXPECT_EQ(outcomes[k], 'S') << "racer " << k;
    expected.insert(row_of(k));
  }
  EXPECT_EQ(ReadRows(root), expected);
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(1 + kRacers));
  ExpectNoStrayFiles(root, root);
}

TEST(MergeRace, InsertOnlyMergesIntoTheirOwnPartitionsAllCommit) {
  TempDir dir;
  const std::string root = (dir.path() / "t").string();
  CreateIdNamePart(root, {}, /*partitioned=*/true);
  AppendIdNamePart(root, {1, 2}, {"a", "b"}, "p1");
  AllCommit(root, Race::kInsertOnlyIntoOwnPartition, {"1|a|p1", "2|b|p1"}, [](int k) {
    return std::to_string(100 + k) + "|n" + std::to_string(k) + "|p" + std::to_string(k);
  });
}

TEST(MergeRace, BlindAppendsNeverConflictWithInsertOnlyMerges) {
  TempDir dir;
  const std::string root = (dir.path() / "t").string();
  CreateIdNamePart(root, {}, /*partitioned=*/false);
  AppendIdNamePart(root, {1, 2}, {"a", "b"}, "p");
  AllCommit(root, Race::kInsertOnlyBesideBlindAppends, {"1|a|p", "2|b|p"}, [](int k) {
    return k == 1 ? std::to_string(100 + k) + "|n" + std::to_string(k) + "|p"
                      : std::to_string(200 + k) + "|w" + std::to_string(k) + "|p";
  });
}

}  // namespace
}  // namespace deltacpp
