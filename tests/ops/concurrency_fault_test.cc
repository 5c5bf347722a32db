// Writers under stress: real processes appending and overwriting at the same time, conflicts
// between operations, storage failures at every commit step, writers killed half-way, and bad
// input. Each case checks that the table stays readable, holds exactly the committed versions
// and that failed writes leave neither log entries nor data files behind.
#include <dlfcn.h>
#include <fmt/core.h>
#include <arrow/io/memory.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/transaction.h"
#include "ops/op_util.h"
#include "ops/ops_test_util.h"
#include "storage/fault_injecting_log_store.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"
#include "write/data_writer.h"

// When set (only ever in a forked child), fsync(2) of a `_delta_log` directory fails with EIO:
// the local store has then already published the file it was asked to put. Every other fsync,
// and every fsync while it is unset, goes to the C library.
static std::atomic<bool> fail_log_dir_sync{false};
// How many `_delta_log` syncs were failed (so a test can tell the fault was injected).
static std::atomic<int> failed_log_dir_syncs{0};

extern "C" int fsync(int fd) {
  using Fsync = int (*)(int);
  static const Fsync real = reinterpret_cast<Fsync>(dlsym(RTLD_NEXT, "fsync"));
  if (fail_log_dir_sync.load()) {
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      char link[64];
      std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
      char target[4096];
      ssize_t n = readlink(link, target, sizeof(target) - 1);
      if (n > 0) {
        target[n] = '\0';
        if (std::string_view(target).ends_with("/_delta_log")) {
          failed_log_dir_syncs.fetch_add(1);
          errno = EIO;
          return -1;
        }
      }
    }
  }
  return real(fd);
}

namespace deltacpp::testing {
namespace {

using internal::FaultInjectingLogStore;

std::shared_ptr<arrow::Schema> IdName() {
  return arrow::schema(
      {arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8())});
}

std::shared_ptr<arrow::Schema> IdNamePart() {
  return arrow::schema({arrow::field("id", arrow::int64(), false),
                        arrow::field("name", arrow::utf8()), arrow::field("part", arrow::utf8())});
}

// Rows {id, "n<id>"}.
std::shared_ptr<arrow::RecordBatch> Named(const std::vector<int64_t>& ids) {
  std::vector<std::optional<int64_t>> id;
  std::vector<std::optional<std::string>> name;
  for (int64_t i : ids) {
    id.emplace_back(i);
    name.emplace_back("n" + std::to_string(i));
  }
  return Batch(IdName(), {Longs(id), Strings(name)});
}

std::multiset<std::string> NamedRows(const std::vector<int64_t>& ids) {
  std::multiset<std::string> out;
  for (int64_t i : ids) out.insert(std::to_string(i) + "|n" + std::to_string(i));
  return out;
}

// Rows {id, "n<id>", part}.
std::shared_ptr<arrow::RecordBatch> InPart(const std::vector<int64_t>& ids,
                                           const std::string& part) {
  std::vector<std::optional<int64_t>> id;
  std::vector<std::optional<std::string>> name, parts;
  for (int64_t i : ids) {
    id.emplace_back(i);
    name.emplace_back("n" + std::to_string(i));
    parts.emplace_back(part);
  }
  return Batch(IdNamePart(), {Longs(id), Strings(name), Strings(parts)});
}

std::multiset<std::string> InPartRows(const std::vector<int64_t>& ids, const std::string& part) {
  std::multiset<std::string> out;
  for (int64_t i : ids) out.insert(std::to_string(i) + "|n" + std::to_string(i) + "|" + part);
  return out;
}

std::shared_ptr<arrow::RecordBatchReader> One(const std::shared_ptr<arrow::RecordBatch>& batch) {
  return Reader(batch->schema(), {batch});
}

// Asserts a write worked, showing why not.
#define ASSERT_WRITES(...)                                                      \
  do {                                                                          \
    auto written_ = (__VA_ARGS__);                                              \
    ASSERT_TRUE(written_.ok()) << #__VA_ARGS__ << ": " << written_.status().ToString(); \
  } while (false)

WriteOptions Append() {
  WriteOptions o;
  o.transaction.initial_backoff = std::chrono::milliseconds(1);
  o.transaction.max_backoff = std::chrono::milliseconds(20);
  o.transaction.max_attempts = 10'000;
  return o;
}

WriteOptions Overwrite() {
  WriteOptions o = Append();
  o.mode = WriteMode::kOverwrite;
  return o;
}

WriteOptions ReplaceWhere(std::string predicate) {
  WriteOptions o = Overwrite();
  o.replace_where = std::move(predicate);
  return o;
}

// Writes `batch` as data files of the table `snapshot` belongs to (not committed).
arrow::Result<std::vector<AddFile>> WriteDataFiles(const Snapshot& snapshot,
                                                   const std::shared_ptr<arrow::RecordBatch>& batch) {
  internal::DataWriterOptions o;
  o.table_root = snapshot.table_root();
  o.table_schema = snapshot.schema();
  o.partition_columns = snapshot.partition_columns();
  o.column_mapping_mode = snapshot.column_mapping_mode();
  ARROW_ASSIGN_OR_RAISE(auto writer, internal::DataWriter::Make(o));
  ARROW_RETURN_NOT_OK(writer->Write(batch));
  return writer->Finish();
}

// The version `_last_checkpoint` names, if there is one.
std::optional<int64_t> LastCheckpointHint(const std::string& root) {
  std::ifstream in(root + "/_delta_log/_last_checkpoint");
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  auto pos = text.find("\"version\":");
  if (pos == std::string::npos) return std::nullopt;
  return std::stoll(text.substr(pos + 10));
}

std::string CheckpointName(int64_t version) {
  std::string commit = CommitName(version);
  return commit.substr(0, commit.size() - 5) + ".checkpoint.parquet";
}

bool IsHiddenTemp(const std::string& name) {
  return name.size() > 5 && name.front() == '.' && name.ends_with(".tmp");
}

// Every version 0..latest opens and holds the expected rows; the latest version is `latest`.
void ExpectVersions(const std::string& root, int64_t latest,
                    const std::map<int64_t, std::multiset<std::string>>& rows_at) {
  EXPECT_EQ(LatestVersion(root), latest);
  for (int64_t v = 0; v <= latest; ++v) {
    auto it = rows_at.find(v);
    if (it == rows_at.end()) {
      ADD_FAILURE() << "no expectation for version " << v;
      continue;
    }
    EXPECT_EQ(ReadRows(root, v), it->second) << "version " << v;
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Real processes appending at the same time

constexpr int kAppendWriters = 8;
constexpr int kAppendsPerWriter = 25;

std::shared_ptr<arrow::Schema> IdWriter() {
  return arrow::schema(
      {arrow::field("id", arrow::int64(), false), arrow::field("writer", arrow::int64())});
}

int64_t AppendId(int writer, int append, int row) { return writer * 1000 + append * 2 + row; }

int AppendingChild(StartBarrier& barrier, const std::string& root, int writer) {
  if (!barrier.Wait()) return kChildBarrierBroken;
  for (int i = 0; i < kAppendsPerWriter; ++i) {
    auto batch = Batch(IdWriter(), {Longs({AppendId(writer, i, 0), AppendId(writer, i, 1)}),
                                    Longs({writer, writer})});
    auto written = WriteTable(root, One(batch), Append());
    if (!written.ok() || !written->version) {
      std::fprintf(stderr, "writer %d append %d: %s\n", writer, i,
                   written.status().ToString().c_str());
      return kChildWriteFailed;
    }
  }
  return kChildOk;
}

TEST(ConcurrentWriters, EightProcessesAppendingTogetherEachLandExactlyOnce) {
  TempDir dir;
  const std::string root = (dir.path() / "table").string();
  CreateTableOptions create;
  create.schema = IdWriter();
  ASSERT_TRUE(CreateTable(root, create).ok());

  StartBarrier barrier;
  std::vector<pid_t> children;
  for (int w = 0; w < kAppendWriters; ++w) {
    pid_t pid = ForkChild([&barrier, &root, w] { return AppendingChild(barrier, root, w); });
    if (pid < 0) break;
    children.push_back(pid);
  }
  barrier.Release();
  for (pid_t child : children) {
    int status = WaitStatus(child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kChildOk)
        << "writer process " << child << ": " << DescribeStatus(status);
  }
  ASSERT_EQ(children.size(), static_cast<size_t>(kAppendWriters));

  constexpr int64_t kTotal = kAppendWriters * kAppendsPerWriter;
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto latest = (*table)->Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_EQ((*latest)->version(), kTotal);

  // Version v holds the rows of exactly v appends, and each writer's appends show up in the
  // order it made them (what it has in a version is a prefix of its appends).
  std::multiset<int64_t> previous;
  int last_writer = -1;
  int writer_switches = 0;  // consecutive versions committed by different writers
  for (int64_t v = 0; v <= kTotal; ++v) {
    auto snapshot = (*table)->SnapshotAt(v);
    ASSERT_TRUE(snapshot.ok()) << "version " << v << ": " << snapshot.status().ToString();
    auto scan = (*snapshot)->NewScan().Build();
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    auto rows = (*scan)->ToTable();
    ASSERT_TRUE(rows.ok()) << "version " << v << ": " << rows.status().ToString();
    ASSERT_EQ((*rows)->num_rows(), 2 * v) << "version " << v;
    std::multiset<int64_t> current;
    for (const auto& chunk : (*rows)->GetColumnByName("id")->chunks()) {
      const auto& a = static_cast<const arrow::Int64Array&>(*chunk);
      for (int64_t i = 0; i < a.length(); ++i) current.insert(a.Value(i));
    }
    std::map<int, int> appends_of;
    for (int64_t id : current) ++appends_of[static_cast<int>(id / 1000)];
    for (const auto& [w, n] : appends_of) {
      for (int i = 0; i < n / 2; ++i) {
        EXPECT_EQ(current.count(AppendId(w, i, 0)), 1u) << "version " << v << " writer " << w;
      }
    }
    for (int64_t id : previous) {
      EXPECT_EQ(current.count(id), previous.count(id)) << "version " << v << " lost id " << id;
    }
    for (int64_t id : current) {
      if (previous.count(id)) continue;
      const int writer = static_cast<int>(id / 1000);
      if (last_writer >= 0 && writer != last_writer) ++writer_switches;
      last_writer = writer;
      break;
    }
    previous = std::move(current);
  }
  // Every id of every append exactly once in the latest version.
  ASSERT_EQ(previous.size(), static_cast<size_t>(2 * kTotal));
  for (int w = 0; w < kAppendWriters; ++w) {
    for (int i = 0; i < kAppendsPerWriter; ++i) {
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(previous.count(AppendId(w, i, r)), 1u) << "writer " << w << " append " << i;
      }
    }
  }
  // One commit per version, nothing half-written left in the log, no stray data files.
  int commits = 0;
  for (const auto& name : LogListing(root)) {
    EXPECT_FALSE(IsHiddenTemp(name)) << name;
    if (name.ends_with(".json")) ++commits;
  }
  EXPECT_EQ(commits, kTotal + 1);
  EXPECT_EQ(DataFiles(root), LiveFiles(root, kTotal));
  // How often writers actually lost a race (commits whose read version is not the previous one).
  auto history = (*table)->History();
  ASSERT_TRUE(history.ok());
  int retried = 0;
  for (const auto& h : *history) {
    auto pos = h.commit_info_json.find("\"readVersion\":");
    if (pos != std::string::npos && std::stoll(h.commit_info_json.substr(pos + 14)) != h.version - 1) {
      ++retried;
    }
  }
  RecordProperty("commits_after_a_lost_race", retried);
  // The writers really ran at the same time: had they taken turns, one after the other, the
  // committing writer would change only kAppendWriters - 1 times.
  RecordProperty("writer_switches", writer_switches);
  EXPECT_GT(writer_switches, kAppendWriters - 1);
}

// Idempotent writes (txnAppId/txnVersion) from racing processes land exactly once each.
constexpr int kIdempotentWriters = 4;
constexpr int kIdempotentVersions = 6;

int IdempotentChild(StartBarrier& barrier, const std::string& root) {
  if (!barrier.Wait()) return kChildBarrierBroken;
  for (int k = 1; k <= kIdempotentVersions; ++k) {
    WriteOptions o = Append();
    o.txn_app_id = "ingest";
    o.txn_version = k;
    // A concurrent commit of the same application's txn is a conflict; re-running then skips.
    for (int attempt = 0;; ++attempt) {
      auto written = WriteTable(root, One(Named({k * 10, k * 10 + 1})), o);
      if (written.ok()) break;
      if (!IsDeltaError(written.status(), DeltaErrorCode::kConcurrentTransaction) ||
          attempt > 100) {
        std::fprintf(stderr, "txn version %d: %s\n", k, written.status().ToString().c_str());
        return kChildWriteFailed;
      }
    }
  }
  return kChildOk;
}

TEST(ConcurrentWriters, IdempotentWritesFromRacingProcessesLandOnce) {
  TempDir dir;
  const std::string root = (dir.path() / "table").string();
  CreateTableOptions create;
  create.schema = IdName();
  ASSERT_TRUE(CreateTable(root, create).ok());
  StartBarrier barrier;
  std::vector<pid_t> children;
  for (int w = 0; w < kIdempotentWriters; ++w) {
    pid_t pid = ForkChild([&] { return IdempotentChild(barrier, root); });
    if (pid < 0) break;
    children.push_back(pid);
  }
  barrier.Release();
  for (pid_t child : children) {
    int status = WaitStatus(child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kChildOk) << DescribeStatus(status);
  }
  std::vector<int64_t> ids;
  for (int k = 1; k <= kIdempotentVersions; ++k) {
    ids.push_back(k * 10);
    ids.push_back(k * 10 + 1);
  }
  EXPECT_EQ(ReadRows(root), NamedRows(ids));
  EXPECT_EQ(LatestVersion(root), kIdempotentVersions);
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto latest = (*table)->Latest();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->txn_version("ingest"), kIdempotentVersions);
  // Each version recorded the next txn version, in order.
  for (int64_t v = 1; v <= kIdempotentVersions; ++v) {
    auto snapshot = (*table)->SnapshotAt(v);
    ASSERT_TRUE(snapshot.ok());
    EXPECT_EQ((*snapshot)->txn_version("ingest"), v) << "version " << v;
  }
}

// In-commit timestamps keep increasing when racing processes retry their commits.
int IctChild(StartBarrier& barrier, const std::string& root, int writer) {
  if (!barrier.Wait()) return kChildBarrierBroken;
  for (int i = 0; i < 10; ++i) {
    auto written = WriteTable(root, One(Named({writer * 100 + i})), Append());
    if (!written.ok()) {
      std::fprintf(stderr, "writer %d: %s\n", writer, written.status().ToString().c_str());
      return kChildWriteFailed;
    }
  }
  return kChildOk;
}

TEST(ConcurrentWriters, InCommitTimestampsIncreaseAcrossRacingProcesses) {
  TempDir dir;
  const std::string root = (dir.path() / "table").string();
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"delta.enableInCommitTimestamps", "true"}};
  ASSERT_TRUE(CreateTable(root, create).ok());
  StartBarrier barrier;
  std::vector<pid_t> children;
  for (int w = 0; w < 4; ++w) {
    pid_t pid = ForkChild([&, w] { return IctChild(barrier, root, w); });
    if (pid < 0) break;
    children.push_back(pid);
  }
  barrier.Release();
  for (pid_t child : children) {
    int status = WaitStatus(child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kChildOk) << DescribeStatus(status);
  }
  ASSERT_EQ(LatestVersion(root), 40);
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  int64_t previous = -1;
  for (int64_t v = 0; v <= 40; ++v) {
    auto snapshot = (*table)->SnapshotAt(v);
    ASSERT_TRUE(snapshot.ok());
    ASSERT_TRUE((*snapshot)->commit_info().has_value());
    auto ict = (*snapshot)->commit_info()->in_commit_timestamp;
    ASSERT_TRUE(ict.has_value()) << "version " << v;
    EXPECT_GT(*ict, previous) << "version " << v;
    EXPECT_EQ((*snapshot)->timestamp_ms(), *ict);
    previous = *ict;
  }
  EXPECT_EQ(ReadRows(root).size(), 40u);
}

// ---------------------------------------------------------------------------------------------
// 2. Conflicts between operations

class ConcurrentOperations : public ::testing::Test {
 protected:
  // `name` gets rows 1, 2 (one append each); `part` is partitioned with rows 1, 2 in 'a' and
  // 3 in 'b'.
  void SetUp() override {
    plain_ = (dir_.path() / "plain").string();
    parted_ = (dir_.path() / "parted").string();
    ASSERT_WRITES(WriteTable(plain_, One(Named({1})), {}));
    ASSERT_WRITES(WriteTable(plain_, One(Named({2})), {}));
    WriteOptions by_part;
    by_part.partition_by = {"part"};
    ASSERT_WRITES(WriteTable(parted_, One(InPart({1, 2}, "a")), by_part));
    ASSERT_WRITES(WriteTable(parted_, One(InPart({3}, "b")), {}));
  }

  // Runs `loser` (an operation streaming `batches`) and, once it has read its snapshot and
  // written its first batch, `winner`. Returns the loser's outcome.
  arrow::Result<WriteResult> Race(const std::string& root,
                                  std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                                  const WriteOptions& loser,
                                  const std::function<arrow::Result<WriteResult>()>& winner) {
    auto schema = batches.front()->schema();
    auto reader = std::make_shared<ScriptedReader>(schema, std::move(batches));
    reader->RunBefore(1, [&] {
      winner_ = winner();
      if (!winner_.ok()) ADD_FAILURE() << "winner: " << winner_.status().ToString();
    });
    return WriteTable(root, reader, loser);
  }

  // The loser left nothing: the log gained only the winner's commit and the data files only
  // the winner's new ones.
  void ExpectOnlyWinnerLanded(const std::string& root, const std::set<std::string>& log_before,
                              const std::set<std::string>& files_before) {
    ASSERT_TRUE(winner_.ok());
    ASSERT_TRUE(winner_->version.has_value());
    auto log_expected = log_before;
    log_expected.insert(CommitName(*winner_->version));
    EXPECT_EQ(LogListing(root), log_expected);
    auto files_expected = files_before;
    auto live = LiveFiles(root, *winner_->version);
    files_expected.insert(live.begin(), live.end());
    EXPECT_EQ(DataFiles(root), files_expected)
        << "data files written by the failed operation are still there";
    EXPECT_EQ(LatestVersion(root), *winner_->version);
  }

  TempDir dir_;
  std::string plain_;
  std::string parted_;
  arrow::Result<WriteResult> winner_ = arrow::Status::UnknownError("winner did not run");
};

TEST_F(ConcurrentOperations, OverwriteLosesToConcurrentOverwrite) {
  const auto log_before = LogListing(plain_);
  const auto files_before = DataFiles(plain_);
  auto lost = Race(plain_, {Named({10}), Named({11})}, Overwrite(),
                   [&] { return WriteTable(plain_, One(Named({20})), Overwrite()); });
  ASSERT_FALSE(lost.ok());
  // The winner both added files to the table the loser read whole and removed the files the
  // loser read and removed; added files are checked first (as delta-spark does).
  EXPECT_EQ(Code(lost.status()), "ConcurrentAppend") << lost.status().ToString();
  ExpectOnlyWinnerLanded(plain_, log_before, files_before);
  EXPECT_EQ(ReadRows(plain_), NamedRows({20}));
}

TEST_F(ConcurrentOperations, OverwriteLosesToConcurrentTruncate) {
  const auto log_before = LogListing(plain_);
  const auto files_before = DataFiles(plain_);
  auto lost = Race(plain_, {Named({10}), Named({11})}, Overwrite(), [&] {
    return WriteTable(plain_, Reader(IdName(), {}), Overwrite());  // removes everything
  });
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(Code(lost.status()), "ConcurrentDeleteRead") << lost.status().ToString();
  ExpectOnlyWinnerLanded(plain_, log_before, files_before);
  EXPECT_EQ(ReadRows(plain_), NamedRows({}));
}

TEST_F(ConcurrentOperations, ReplaceWhereLosesToConcurrentAppendIntoTheReplacedRange) {
  const auto log_before = LogListing(parted_);
  const auto files_before = DataFiles(parted_);
  auto lost = Race(parted_, {InPart({10}, "a"), InPart({11}, "a")}, ReplaceWhere("part = 'a'"),
                   [&] { return WriteTable(parted_, One(InPart({20}, "a")), Append()); });
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(Code(lost.status()), "ConcurrentAppend") << lost.status().ToString();
  ExpectOnlyWinnerLanded(parted_, log_before, files_before);
  EXPECT_EQ(ReadRows(parted_), Union(InPartRows({1, 2, 20}, "a"), InPartRows({3}, "b")));
}

TEST_F(ConcurrentOperations, ReplaceWhereOnAPartialFileLosesToConcurrentAppend) {
  // Unpartitioned: the replaced range is only part of a file, which the loser rewrites; that
  // rewritten file must go too.
  ASSERT_WRITES(WriteTable(plain_, One(Named({3, 4})), Append()));
  const auto log_mid = LogListing(plain_);
  const auto files_mid = DataFiles(plain_);
  auto lost = Race(plain_, {Named({30}), Named({31})}, ReplaceWhere("id >= 4"),
                   [&] { return WriteTable(plain_, One(Named({40})), Append()); });
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(Code(lost.status()), "ConcurrentAppend") << lost.status().ToString();
  ExpectOnlyWinnerLanded(plain_, log_mid, files_mid);
  EXPECT_EQ(ReadRows(plain_), NamedRows({1, 2, 3, 4, 40}));
}

TEST_F(ConcurrentOperations, ReplaceWhereSucceedsOverConcurrentAppendOutsideTheRange) {
  auto done = Race(parted_, {InPart({10}, "a"), InPart({11}, "a")}, ReplaceWhere("part = 'a'"),
                   [&] { return WriteTable(parted_, One(InPart({20}, "b")), Append()); });
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_TRUE(winner_.ok());
  EXPECT_EQ(*done->version, *winner_->version + 1);
  EXPECT_EQ(ReadRows(parted_), Union(InPartRows({10, 11}, "a"), InPartRows({3, 20}, "b")));
  EXPECT_EQ(DataFiles(parted_), ReferencedFiles(parted_));
}

TEST_F(ConcurrentOperations, AppendLosesToConcurrentSchemaReplacement) {
  const auto log_before = LogListing(plain_);
  const auto files_before = DataFiles(plain_);
  auto other = arrow::schema({arrow::field("key", arrow::utf8())});
  auto lost = Race(plain_, {Named({10}), Named({11})}, Append(), [&] {
    WriteOptions replace = Overwrite();
    replace.overwrite_schema = true;
    return WriteTable(plain_, Rows(other, {Strings({"k"})}), replace);
  });
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(Code(lost.status()), "MetadataChanged") << lost.status().ToString();
  ExpectOnlyWinnerLanded(plain_, log_before, files_before);
  EXPECT_EQ(ReadRows(plain_), (std::multiset<std::string>{"k"}));
}

TEST_F(ConcurrentOperations, AppendsRacingAnOverwriteBothLand) {
  // A blind append does not read the table, so an overwrite committed meanwhile does not
  // conflict with it: its rows land on top of the overwritten table.
  auto done = Race(plain_, {Named({10}), Named({11})}, Append(),
                   [&] { return WriteTable(plain_, One(Named({20})), Overwrite()); });
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(ReadRows(plain_), NamedRows({20, 10, 11}));
  EXPECT_EQ(DataFiles(plain_), ReferencedFiles(plain_));
}

TEST_F(ConcurrentOperations, TransactionsRemovingTheSameFileConflict) {
  auto table = DeltaTable::Open(plain_);
  ASSERT_TRUE(table.ok());
  auto snapshot = (*table)->Latest();
  ASSERT_TRUE(snapshot.ok());
  const auto& files = *(*snapshot)->files();
  ASSERT_EQ(files.num_rows(), 2);
  auto remove_first = [&](bool record_read) -> std::unique_ptr<Transaction> {
    auto txn = Transaction::Start(*table, *snapshot);
    EXPECT_TRUE(txn.ok()) << txn.status().ToString();
    auto remove = internal::RemoveForLiveFile(files, 0, internal::WallClockMillis());
    if (record_read) (*txn)->ReadFiles({remove.path});
    (*txn)->RemoveFiles({remove});
    return std::move(*txn);
  };
  // Neither read the file (a blind delete): both removing it is a delete-delete conflict.
  auto first = remove_first(false);
  auto second = remove_first(false);
  auto third = remove_first(true);
  auto won = first->Commit("DELETE");
  ASSERT_TRUE(won.ok()) << won.status().ToString();
  const auto log_after_winner = LogListing(plain_);
  auto lost = second->Commit("DELETE");
  EXPECT_EQ(Code(lost.status()), "ConcurrentDeleteDelete") << lost.status().ToString();
  // Having read the file, the loser reports that the file it read is gone.
  auto lost_read = third->Commit("DELETE");
  EXPECT_EQ(Code(lost_read.status()), "ConcurrentDeleteRead") << lost_read.status().ToString();
  EXPECT_EQ(LogListing(plain_), log_after_winner);
  EXPECT_EQ(ReadRows(plain_).size(), 1u);
}

// Overwrites from several processes at once: each either commits or fails with a conflict, and
// no failed overwrite leaves files behind.
constexpr int kOverwriteWriters = 4;
constexpr int kOverwritesPerWriter = 4;

int OverwritingChild(StartBarrier& barrier, int report_fd, const std::string& root, int writer) {
  if (!barrier.Wait()) return kChildBarrierBroken;
  for (int i = 0; i < kOverwritesPerWriter; ++i) {
    const int64_t tag = writer * 100 + i * 10;
    auto written = WriteTable(root, One(Named({tag, tag + 1, tag + 2})), Overwrite());
    char outcome = 'S';
    if (!written.ok()) {
      auto code = GetDeltaErrorCode(written.status());
      outcome = !code                                           ? 'X'
                : *code == DeltaErrorCode::kConcurrentAppend     ? 'A'
                : *code == DeltaErrorCode::kConcurrentDeleteRead ? 'R'
                : *code == DeltaErrorCode::kConcurrentDeleteDelete ? 'D'
                                                                   : 'X';
      if (outcome == 'X') {
        std::fprintf(stderr, "writer %d overwrite %d: %s\n", writer, i,
                     written.status().ToString().c_str());
      }
    }
    if (write(report_fd, &outcome, 1) != 1) return kChildUnexpected;
  }
  return kChildOk;
}

TEST_F(ConcurrentOperations, OverwritingProcessesEitherCommitOrConflictCleanly) {
  const int64_t first = *LatestVersion(plain_);
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  StartBarrier barrier;
  std::vector<pid_t> children;
  for (int w = 0; w < kOverwriteWriters; ++w) {
    pid_t pid = ForkChild([&, w] {
      close(report[0]);
      return OverwritingChild(barrier, report[1], plain_, w);
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
  std::map<char, int> outcomes;
  char c;
  while (read(report[0], &c, 1) == 1) ++outcomes[c];
  close(report[0]);
  EXPECT_EQ(outcomes['X'], 0);
  EXPECT_EQ(outcomes['S'] + outcomes['A'] + outcomes['R'] + outcomes['D'],
            kOverwriteWriters * kOverwritesPerWriter);
  const int64_t latest = *LatestVersion(plain_);
  EXPECT_EQ(latest - first, outcomes['S']);
  // Every version written by the race holds exactly one overwrite's rows.
  for (int64_t v = first + 1; v <= latest; ++v) {
    auto rows = ReadTable(plain_, v);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_EQ((*rows)->num_rows(), 3) << "version " << v;
    auto ids = RowStrings(**rows);
    const int64_t tag = std::stoll(*ids.begin());
    EXPECT_EQ(ids, NamedRows({tag, tag + 1, tag + 2})) << "version " << v;
  }
  EXPECT_EQ(DataFiles(plain_), ReferencedFiles(plain_))
      << "an overwrite that lost its race left data files behind";
}

// ---------------------------------------------------------------------------------------------
// 3a. Storage failures at each step of a commit

using Op = FaultInjectingLogStore::Op;
using When = FaultInjectingLogStore::When;

// How many calls of each operation `store` has seen.
std::map<Op, int> CallCounts(const FaultInjectingLogStore& store) {
  std::map<Op, int> out;
  for (Op o : {Op::kList, Op::kRead, Op::kPutIfAbsent, Op::kPutReplace, Op::kDelete}) {
    out[o] = store.calls(o);
  }
  return out;
}

// Calls `run(op, n, when, name)` for call n = 1..calls[op] of every operation and each moment of
// failing it, under a SCOPED_TRACE of the case's name; returns the number of cases.
int ForEachFault(const std::map<Op, int>& calls, const std::string& prefix,
                 const std::function<void(Op, int, When, const std::string&)>& run) {
  int runs = 0;
  for (Op op : {Op::kList, Op::kRead, Op::kPutIfAbsent, Op::kPutReplace, Op::kDelete}) {
    auto it = calls.find(op);
    for (int n = 1; it != calls.end() && n <= it->second; ++n) {
      for (When when : {When::kBefore, When::kDuring, When::kAfter}) {
        const std::string name =
            fmt::format("{}{}-{}-{}", prefix, FaultInjectingLogStore::OpName(op), n,
                        when == When::kBefore   ? "before"
                        : when == When::kDuring ? "during"
                                                : "after");
        SCOPED_TRACE(name);
        run(op, n, when, name);
        ++runs;
      }
    }
  }
  return runs;
}

// After a fault: one more append commits the next version on top of `rows_at_latest`.
void ExpectStillWritable(const std::string& root, int64_t latest,
                         std::multiset<std::string> rows_at_latest) {
  auto later = WriteTable(root, One(Named({300})), {});
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_EQ(later->version, latest + 1);
  rows_at_latest.insert("300|n300");
  EXPECT_EQ(ReadRows(root), rows_at_latest);
}

class FaultInjection : public ::testing::Test {
 protected:
  // Template: checkpoint every 5 versions; versions 0 (create) and 1..3 (rows 1, 2, 3).
  static void SetUpTestSuite() {
    template_dir_ = new TempDir();
    template_ = (template_dir_->path() / "template").string();
    CreateTableOptions create;
    create.schema = IdName();
    create.properties = {{"delta.checkpointInterval", "5"}};
    ASSERT_TRUE(CreateTable(template_, create).ok());
    for (int64_t i = 1; i <= 3; ++i) ASSERT_WRITES(WriteTable(template_, One(Named({i})), {}));
  }
  static void TearDownTestSuite() {
    delete template_dir_;
    template_dir_ = nullptr;
  }

  struct Outcome {
    arrow::Result<CommitResult> commit = arrow::Status::UnknownError("not run");
    std::string root;
  };

  // A fresh copy of the template; a transaction on it (through a store failing `op` call `nth`
  // of the commit, 0 for none) adds rows 100, 101 while a concurrent append adds row 200 first,
  // so the commit loses a race, reads the winner, commits version 5 and checkpoints it.
  Outcome Run(const std::string& name, Op op, int nth, When when,
              std::map<Op, int>* calls = nullptr) {
    Outcome out;
    out.root = CopyTable(template_, dir_, name);
    auto base = *(*DeltaTable::Open(out.root))->Latest();
    auto adds = WriteDataFiles(*base, Named({100, 101}));
    EXPECT_TRUE(adds.ok()) << adds.status().ToString();
    auto faulty = std::make_shared<FaultInjectingLogStore>(MakeLocalLogStore());
    auto table = DeltaTable::Open(out.root, faulty);
    EXPECT_TRUE(table.ok());
    TransactionOptions options;
    options.initial_backoff = std::chrono::milliseconds(0);
    auto txn = Transaction::Start(*table, base, options);
    EXPECT_TRUE(txn.ok());
    (*txn)->AddFiles(*adds);
    auto winner = WriteTable(out.root, One(Named({200})), {});
    EXPECT_TRUE(winner.ok() && winner->version == 4) << winner.status().ToString();
    const std::map<Op, int> before = CallCounts(*faulty);
    if (nth > 0) faulty->FailOn(op, before.at(op) + nth, when);
    out.commit = (*txn)->Commit("WRITE", {{"mode", "Append"}});
    if (calls) {
      for (const auto& [o, n] : CallCounts(*faulty)) (*calls)[o] = n - before.at(o);
    }
    return out;
  }

  // The table shows versions 0..4 and, when version 5 landed, version 5 in full; the log holds
  // nothing else; a later write still works.
  void ExpectConsistent(const Outcome& out, bool may_land_despite_error) {
    const std::string& root = out.root;
    const bool landed = std::filesystem::exists(root + "/_delta_log/" + CommitName(5));
    if (out.commit.ok()) {
      EXPECT_TRUE(landed);
      EXPECT_EQ(out.commit->version, 5);
    } else if (landed) {
      EXPECT_TRUE(may_land_despite_error)
          << "the commit failed (" << out.commit.status().ToString() << ") but version 5 exists";
    }
    const int64_t latest = landed ? 5 : 4;
    std::map<int64_t, std::multiset<std::string>> rows = {
        {0, {}}, {1, NamedRows({1})}, {2, NamedRows({1, 2})}, {3, NamedRows({1, 2, 3})},
        {4, NamedRows({1, 2, 3, 200})}, {5, NamedRows({1, 2, 3, 200, 100, 101})}};
    ExpectVersions(root, latest, rows);
    std::set<std::string> allowed = {CommitName(0), CommitName(1), CommitName(2), CommitName(3),
                                     CommitName(4)};
    if (landed) {
      allowed.insert({CommitName(5), CheckpointName(5), "_last_checkpoint"});
    }
    for (const auto& name : LogListing(root)) {
      EXPECT_TRUE(allowed.count(name)) << "unexpected entry in _delta_log: " << name;
    }
    if (auto hint = LastCheckpointHint(root)) {
      EXPECT_TRUE(std::filesystem::exists(root + "/_delta_log/" + CheckpointName(*hint)))
          << "_last_checkpoint names version " << *hint << " which has no checkpoint";
    }
    ExpectStillWritable(root, latest, rows[latest]);
  }

  static TempDir* template_dir_;
  static std::string template_;
  TempDir dir_;
};

TempDir* FaultInjection::template_dir_ = nullptr;
std::string FaultInjection::template_;

TEST_F(FaultInjection, EveryFailingStoreCallLeavesOnlyCommittedVersions) {
  std::map<Op, int> calls;
  auto clean = Run("clean", Op::kList, 0, When::kBefore, &calls);
  ASSERT_TRUE(clean.commit.ok()) << clean.commit.status().ToString();
  EXPECT_EQ(clean.commit->attempts, 2);
  EXPECT_TRUE(clean.commit->checkpointed);
  ExpectConsistent(clean, false);
  // Two commit puts (the lost one and version 5) and one checkpoint put at least.
  EXPECT_GE(calls[Op::kPutIfAbsent], 3);
  EXPECT_GE(calls[Op::kList], 1);
  EXPECT_GE(calls[Op::kRead], 1);
  EXPECT_EQ(calls[Op::kPutReplace], 1);
  const int runs = ForEachFault(calls, "", [&](Op op, int n, When when, const std::string& name) {
    auto out = Run(name, op, n, when);
    // Only a put that went through and then reported an error can leave its commit.
    ExpectConsistent(out, op == Op::kPutIfAbsent && when == When::kAfter);
  });
  RecordProperty("fault_runs", runs);
}

// The local store reports an error when syncing `_delta_log` fails after the commit file was
// linked into place, so the commit is visible although WriteTable sees a failure. The write must
// then not delete the data files that committed version references.
TEST_F(FaultInjection, LogDirectorySyncFailureAfterThePutKeepsCommittedFiles) {
  const std::string root = CopyTable(template_, dir_, "dir-sync");
  pid_t pid = ForkChild([&] {
    fail_log_dir_sync = true;
    auto written = WriteTable(root, One(Named({5})), {});
    if (!written.ok()) std::fprintf(stderr, "write failed: %s\n", written.status().ToString().c_str());
    if (failed_log_dir_syncs.load() == 0) return kChildNoFaultInjected;
    return written.ok() ? kChildOk : kChildWriteFailed;
  });
  ASSERT_GT(pid, 0);
  const int status = WaitStatus(pid);
  ASSERT_TRUE(WIFEXITED(status)) << DescribeStatus(status);
  ASSERT_NE(WEXITSTATUS(status), kChildNoFaultInjected)
      << "no fsync of _delta_log was failed: the test did not exercise the fault";
  const bool reported_ok = WEXITSTATUS(status) == kChildOk;
  const bool landed = std::filesystem::exists(root + "/_delta_log/" + CommitName(4));
  if (!landed) {
    EXPECT_FALSE(reported_ok);
    EXPECT_EQ(ReadRows(root), NamedRows({1, 2, 3}));
    return;
  }
  // Version 4 is in the log: every file it references must exist and it must read back.
  for (const auto& file : LiveFiles(root, 4)) {
    EXPECT_TRUE(std::filesystem::exists(root + "/" + file))
        << "version 4 references " << file << ", which the write deleted after reporting "
        << (reported_ok ? "success" : "failure");
  }
  EXPECT_EQ(ReadRows(root), NamedRows({1, 2, 3, 5}));
}

// The same faults under a whole WriteTable (data files, commit, checkpoint and log cleanup):
// the template's log is old enough for cleanup to delete commits 0 and 1 after the checkpoint
// at version 4, so deletes are among the calls failed. A write that fails without committing
// leaves no data file behind; one whose commit landed keeps every file it references.
class WriteTableFaults : public ::testing::Test {
 protected:
  // Versions 0 (create) and 1..3 (rows 1, 2, 3), a checkpoint at 2; each copy's log files are
  // made 3 days old (copying does not keep modification times).
  static void SetUpTestSuite() {
    template_dir_ = new TempDir();
    template_ = (template_dir_->path() / "template").string();
    CreateTableOptions create;
    create.schema = IdName();
    create.properties = {{"delta.checkpointInterval", "2"},
                         {"delta.logRetentionDuration", "interval 1 days"}};
    ASSERT_TRUE(CreateTable(template_, create).ok());
    for (int64_t i = 1; i <= 3; ++i) {
      ASSERT_WRITES(WriteTable(template_, One(Named({i})), {}));
    }
  }
  static void TearDownTestSuite() {
    delete template_dir_;
    template_dir_ = nullptr;
  }

  struct Outcome {
    arrow::Result<WriteResult> write = arrow::Status::UnknownError("not run");
    std::string root;
    std::set<std::string> data_before;
  };

  Outcome Run(const std::string& name, Op op, int nth, When when,
              std::map<Op, int>* calls = nullptr) {
    Outcome out;
    out.root = CopyTable(template_, dir_, name);
    const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(72);
    for (const auto& e : std::filesystem::directory_iterator(out.root + "/_delta_log")) {
      std::filesystem::last_write_time(e.path(), old);
    }
    out.data_before = DataFiles(out.root);
    auto faulty = std::make_shared<FaultInjectingLogStore>(MakeLocalLogStore());
    auto table = DeltaTable::Open(out.root, faulty);
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    const std::map<Op, int> before = CallCounts(*faulty);
    if (nth > 0) faulty->FailOn(op, before.at(op) + nth, when);
    WriteOptions options;
    options.transaction.initial_backoff = std::chrono::milliseconds(0);
    out.write = WriteTable(*table, One(Named({100, 101})), options);
    if (calls) {
      for (const auto& [o, n] : CallCounts(*faulty)) (*calls)[o] = n - before.at(o);
    }
    return out;
  }

  void ExpectConsistent(const Outcome& out, bool may_land_despite_error) {
    const std::string& root = out.root;
    const bool landed = std::filesystem::exists(root + "/_delta_log/" + CommitName(4));
    if (out.write.ok()) {
      EXPECT_TRUE(landed);
      EXPECT_EQ(out.write->version, 4);
    } else if (landed) {
      EXPECT_TRUE(may_land_despite_error)
          << "the write failed (" << out.write.status().ToString() << ") but version 4 exists";
    }
    std::map<int64_t, std::multiset<std::string>> rows = {
        {0, {}}, {1, NamedRows({1})}, {2, NamedRows({1, 2})}, {3, NamedRows({1, 2, 3})},
        {4, NamedRows({1, 2, 3, 100, 101})}};
    const int64_t latest = landed ? 4 : 3;
    EXPECT_EQ(LatestVersion(root), latest);
    // Versions from the checkpoint at 2 on read in full. Cleanup may have expired 0 and 1 (oldest
    // first, so an interrupted cleanup can leave 1 without 0): those read in full or are
    // reported as not reconstructable, never as other rows.
    for (int64_t v = 0; v <= latest; ++v) {
      if (v >= 2) {
        EXPECT_TRUE(std::filesystem::exists(root + "/_delta_log/" + CommitName(v)))
            << "version " << v << " was removed";
        EXPECT_EQ(ReadRows(root, v), rows[v]) << "version " << v;
        continue;
      }
      auto read = ReadTable(root, v);
      if (read.ok()) {
        EXPECT_EQ(RowStrings(**read), rows[v]) << "version " << v;
      } else {
        EXPECT_EQ(Code(read.status()), "VersionNotFound") << read.status().ToString();
      }
    }
    for (const auto& entry : LogListing(root)) {
      EXPECT_FALSE(IsHiddenTemp(entry)) << "temporary file left in _delta_log: " << entry;
    }
    if (auto hint = LastCheckpointHint(root)) {
      EXPECT_TRUE(std::filesystem::exists(root + "/_delta_log/" + CheckpointName(*hint)))
          << "_last_checkpoint names version " << *hint << " which has no checkpoint";
    }
    // Data files: none left behind by a write that did not commit; all kept by one that did.
    const auto data = DataFiles(root);
    if (!landed) {
      EXPECT_EQ(data, out.data_before) << "a failed write left data files behind";
    } else {
      for (const auto& f : LiveFiles(root, 4)) {
        EXPECT_TRUE(data.count(f)) << "version 4 references " << f << ", which was deleted";
      }
    }
    ExpectStillWritable(root, latest, rows[latest]);
  }

  static TempDir* template_dir_;
  static std::string template_;
  TempDir dir_;
};

TempDir* WriteTableFaults::template_dir_ = nullptr;
std::string WriteTableFaults::template_;

TEST_F(WriteTableFaults, EveryFailingStoreCallLeavesOnlyCommittedVersionsAndFiles) {
  std::map<Op, int> calls;
  auto clean = Run("clean", Op::kList, 0, When::kBefore, &calls);
  ASSERT_TRUE(clean.write.ok()) << clean.write.status().ToString();
  ExpectConsistent(clean, false);
  // The clean run checkpointed version 4 and cleaned up the expired commits 0 and 1.
  EXPECT_TRUE(std::filesystem::exists(clean.root + "/_delta_log/" + CheckpointName(4)));
  EXPECT_FALSE(std::filesystem::exists(clean.root + "/_delta_log/" + CommitName(0)));
  EXPECT_FALSE(std::filesystem::exists(clean.root + "/_delta_log/" + CommitName(1)));
  EXPECT_GE(calls[Op::kDelete], 2);
  EXPECT_GE(calls[Op::kPutIfAbsent], 2);
  EXPECT_EQ(calls[Op::kPutReplace], 1);
  const int runs = ForEachFault(calls, "w-", [&](Op op, int n, When when, const std::string& name) {
    auto out = Run(name, op, n, when);
    ExpectConsistent(out, op == Op::kPutIfAbsent && when == When::kAfter);
  });
  RecordProperty("fault_runs", runs);
}

// ---------------------------------------------------------------------------------------------
// 3b. Writers killed at a chosen step

// Delegates to the local store and kills the process (SIGKILL) around one chosen put. A kill
// "during" a put-if-absent happens inside the local store's own streamed put, after half the
// content went to its temporary file; for PutReplace (which has no streamed form) the half
// temporary file is made here, as the store would name it.
class CrashingLogStore final : public LogStore {
 public:
  enum class Call { kPutIfAbsent, kPutReplace };
  enum class Moment {
    kBefore,  ///< nothing of the put happened
    kDuring,  ///< the put's temporary file is half written
    kAfter,   ///< the put completed
  };

  CrashingLogStore(Call call, int nth, Moment moment)
      : inner_(MakeLocalLogStore()), call_(call), nth_(nth), moment_(moment) {}

  arrow::Result<std::vector<FileEntry>> List(const std::string& dir,
                                             std::string_view start_after_name) override {
    return inner_->List(dir, start_after_name);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) override {
    return inner_->Read(path);
  }
  arrow::Status PutIfAbsent(const std::string& path, std::string_view data) override {
    return Step(Call::kPutIfAbsent, path, data, [&] { return inner_->PutIfAbsent(path, data); });
  }
  arrow::Status PutIfAbsentStreaming(const std::string& path,
                                     const ContentWriter& write) override {
    if (!Selected(Call::kPutIfAbsent)) return inner_->PutIfAbsentStreaming(path, write);
    ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
    ARROW_RETURN_NOT_OK(write(sink));
    ARROW_ASSIGN_OR_RAISE(auto content, sink->Finish());
    const std::string_view data(content->data_as<char>(), static_cast<size_t>(content->size()));
    return Act(path, data, [&] { return inner_->PutIfAbsent(path, data); });
  }
  arrow::Status PutReplace(const std::string& path, std::string_view data) override {
    if (!Selected(Call::kPutReplace)) return inner_->PutReplace(path, data);
    if (moment_ == Moment::kDuring) {
      auto slash = path.rfind('/');
      std::string temp = path.substr(0, slash + 1) + "." + path.substr(slash + 1) +
                         ".00000000deadbeef.tmp";
      std::ofstream out(temp, std::ios::binary);
      out.write(data.data(), static_cast<std::streamsize>(data.size() / 2));
      out.flush();
      Die();
    }
    return Act(path, data, [&] { return inner_->PutReplace(path, data); });
  }
  arrow::Status Delete(const std::string& path) override { return inner_->Delete(path); }
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override {
    return inner_->filesystem();
  }

 private:
  [[noreturn]] static void Die() {
    raise(SIGKILL);
    _exit(kChildUnexpected);
  }

  // Counts the call; true when it is the one to crash in.
  bool Selected(Call call) { return ++calls_[static_cast<int>(call)] == nth_ && call == call_; }

  template <typename Put>
  arrow::Status Step(Call call, const std::string& path, std::string_view data, const Put& put) {
    if (!Selected(call)) return put();
    return Act(path, data, put);
  }

  // The chosen put: die before it, in the middle of the local store's streamed put of `data`,
  // or after it.
  template <typename Put>
  arrow::Status Act(const std::string& path, std::string_view data, const Put& put) {
    if (moment_ == Moment::kBefore) Die();
    if (moment_ == Moment::kDuring) {
      (void)inner_->PutIfAbsentStreaming(
          path, [&](const std::shared_ptr<arrow::io::OutputStream>& out) -> arrow::Status {
            ARROW_RETURN_NOT_OK(out->Write(data.data(), static_cast<int64_t>(data.size() / 2)));
            ARROW_RETURN_NOT_OK(out->Flush());
            Die();
          });
      Die();
    }
    (void)put();
    Die();
  }

  std::shared_ptr<LogStore> inner_;
  Call call_;
  int nth_;
  Moment moment_;
  int calls_[2] = {0, 0};
};

struct KillStep {
  const char* name;
  CrashingLogStore::Call call;
  int nth;
  CrashingLogStore::Moment moment;
  bool commit_lands;
};

class WriterKilled : public ::testing::TestWithParam<KillStep> {
 protected:
  // Template: checkpoint every 2 versions, versions 0..9 (row i added by version i), so the
  // next commit is version 10 and writes a checkpoint.
  static void SetUpTestSuite() {
    template_dir_ = new TempDir();
    template_ = (template_dir_->path() / "template").string();
    CreateTableOptions create;
    create.schema = IdName();
    create.properties = {{"delta.checkpointInterval", "2"}};
    ASSERT_TRUE(CreateTable(template_, create).ok());
    for (int64_t i = 1; i <= 9; ++i) ASSERT_WRITES(WriteTable(template_, One(Named({i})), {}));
  }
  static void TearDownTestSuite() {
    delete template_dir_;
    template_dir_ = nullptr;
  }

  static std::multiset<std::string> RowsAt(int64_t version) {
    std::vector<int64_t> ids;
    for (int64_t i = 1; i <= std::min<int64_t>(version, 9); ++i) ids.push_back(i);
    if (version >= 10) {
      ids.push_back(100);
      ids.push_back(101);
    }
    return NamedRows(ids);
  }

  static TempDir* template_dir_;
  static std::string template_;
};

TempDir* WriterKilled::template_dir_ = nullptr;
std::string WriterKilled::template_;

// The killed writer: an ordinary append of two rows through a table handle on the crashing
// store, so it writes its data file, then commits version 10 (which also writes a checkpoint).
int KilledWriter(const std::string& root, const KillStep& step) {
  auto store = std::make_shared<CrashingLogStore>(step.call, step.nth, step.moment);
  auto table = DeltaTable::Open(root, store);
  if (!table.ok()) return kChildSetupFailed;
  auto written = WriteTable(*table, One(Named({100, 101})), {});
  return written.ok() ? kChildUnexpected : kChildWriteFailed;  // it should not get here
}

TEST_P(WriterKilled, TableStaysConsistentAndWritable) {
  const KillStep& step = GetParam();
  TempDir dir;
  const std::string root = CopyTable(template_, dir, "table");
  const auto files_before = DataFiles(root);
  pid_t pid = ForkChild([&] { return KilledWriter(root, step); });
  ASSERT_GT(pid, 0);
  int status = WaitStatus(pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the writer should have been killed, got " << DescribeStatus(status);

  const int64_t latest = step.commit_lands ? 10 : 9;
  std::map<int64_t, std::multiset<std::string>> rows;
  for (int64_t v = 0; v <= 12; ++v) rows[v] = RowsAt(v);
  ExpectVersions(root, latest, rows);
  // The kill really interrupted a put: its hidden temporary file is left behind...
  if (step.moment == CrashingLogStore::Moment::kDuring) {
    bool temp_left = false;
    for (const auto& e : std::filesystem::directory_iterator(root + "/_delta_log")) {
      temp_left |= IsHiddenTemp(e.path().filename().string());
    }
    EXPECT_TRUE(temp_left) << "no temporary file of the interrupted put";
  }
  // ...but a half-written file is never visible: the store lists only whole files.
  auto listed = MakeLocalLogStore()->List(root + "/_delta_log");
  ASSERT_TRUE(listed.ok());
  for (const auto& e : *listed) EXPECT_FALSE(IsHiddenTemp(e.path.substr(e.path.rfind('/') + 1)));
  if (auto hint = LastCheckpointHint(root)) {
    EXPECT_TRUE(std::filesystem::exists(root + "/_delta_log/" + CheckpointName(*hint)));
    EXPECT_LE(*hint, latest);
  }
  // The killed writer's data files are orphans unless its commit landed.
  const auto written = Minus(DataFiles(root), files_before);
  EXPECT_EQ(written.size(), 1u);
  if (step.commit_lands) {
    EXPECT_EQ(Minus(written, LiveFiles(root, 10)).size(), 0u);
  }

  // Later writers carry on: two more commits (one of them checkpointed) read back in full.
  auto more = RowsAt(latest);
  for (int64_t id : {200, 201}) {
    auto later = WriteTable(root, One(Named({id})), {});
    ASSERT_TRUE(later.ok()) << later.status().ToString();
    EXPECT_EQ(later->version, latest + (id - 199));
    more.insert(fmt::format("{}|n{}", id, id));
    EXPECT_EQ(ReadRows(root), more);
  }
  const int64_t final_version = latest + 2;
  const int64_t newest_checkpoint = final_version - final_version % 2;
  EXPECT_TRUE(std::filesystem::exists(root + "/_delta_log/" + CheckpointName(newest_checkpoint)));
  EXPECT_EQ(LastCheckpointHint(root), newest_checkpoint);
  for (int64_t v = 0; v <= final_version; ++v) {
    EXPECT_TRUE((*DeltaTable::Open(root))->SnapshotAt(v).ok()) << "version " << v;
  }
}

using Call = CrashingLogStore::Call;
using Moment = CrashingLogStore::Moment;

INSTANTIATE_TEST_SUITE_P(
    FaultKill, WriterKilled,
    ::testing::Values(
        KillStep{"DataFilesWrittenBeforeCommit", Call::kPutIfAbsent, 1, Moment::kBefore, false},
        KillStep{"DuringCommitPut", Call::kPutIfAbsent, 1, Moment::kDuring, false},
        KillStep{"AfterCommitPut", Call::kPutIfAbsent, 1, Moment::kAfter, true},
        KillStep{"DuringCheckpointPut", Call::kPutIfAbsent, 2, Moment::kDuring, true},
        KillStep{"AfterCheckpointBeforeLastCheckpoint", Call::kPutReplace, 1, Moment::kBefore,
                 true},
        KillStep{"DuringLastCheckpointPut", Call::kPutReplace, 1, Moment::kDuring, true}),
    [](const ::testing::TestParamInfo<KillStep>& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// 4. Bad input leaves the table unchanged

class BadInput : public ::testing::Test {
 protected:
  // `parted`: partitioned by part, NOT NULL id, CHECK id > 0, a file per batch (tiny target
  // size), rows 1 ('a') and 2 ('b'). `plain`: unpartitioned, rows 1, 2.
  void SetUp() override {
    parted_ = (dir_.path() / "parted").string();
    CreateTableOptions create;
    create.schema = IdNamePart();
    create.partition_columns = {"part"};
    create.constraints = {{"positive", "id > 0"}};
    create.properties = {{"delta.targetFileSize", "1"}};
    ASSERT_TRUE(CreateTable(parted_, create).ok());
    ASSERT_WRITES(WriteTable(parted_, Reader(IdNamePart(), {InPart({1}, "a"), InPart({2}, "b")}),
                           {})
                    );
    plain_ = (dir_.path() / "plain").string();
    ASSERT_WRITES(WriteTable(plain_, One(Named({1, 2})), {}));
    Remember();
  }

  void Remember() {
    for (const auto& root : {parted_, plain_}) {
      log_[root] = LogListing(root);
      files_[root] = DataFiles(root);
      rows_[root] = ReadRows(root);
    }
  }

  void ExpectUnchanged(const std::string& root) {
    EXPECT_EQ(LogListing(root), log_[root]) << "the failed write changed _delta_log";
    EXPECT_EQ(DataFiles(root), files_[root]) << "the failed write left data files behind";
    EXPECT_EQ(ReadRows(root), rows_[root]);
  }

  // Two good batches (two partitions, so two files each) before the bad one.
  std::shared_ptr<arrow::RecordBatchReader> GoodThen(std::shared_ptr<arrow::RecordBatch> bad) {
    return Reader(IdNamePart(), {InPart({10, 11}, "a"), InPart({12}, "c"), std::move(bad)});
  }

  TempDir dir_;
  std::string parted_;
  std::string plain_;
  std::map<std::string, std::set<std::string>> log_;
  std::map<std::string, std::set<std::string>> files_;
  std::map<std::string, std::multiset<std::string>> rows_;
};

TEST_F(BadInput, WrongColumnTypes) {
  auto wrong = arrow::schema({arrow::field("id", arrow::utf8()), arrow::field("name", arrow::utf8()),
                              arrow::field("part", arrow::utf8())});
  auto r = WriteTable(parted_, Rows(wrong, {Strings({"x"}), Strings({"n"}), Strings({"a"})}), {});
  EXPECT_EQ(Code(r.status()), "SchemaMismatch") << r.status().ToString();
  auto unknown = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("zip", arrow::utf8())});
  auto r2 = WriteTable(plain_, Rows(unknown, {Longs({5}), Strings({"z"})}), {});
  EXPECT_EQ(Code(r2.status()), "SchemaMismatch") << r2.status().ToString();
  ExpectUnchanged(parted_);
  ExpectUnchanged(plain_);
}

TEST_F(BadInput, NullIntoNotNullAfterGoodBatches) {
  auto nullable = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                                 arrow::field("part", arrow::utf8())});
  auto good1 = Batch(nullable, {Longs({10, 11}), Strings({"x", "y"}), Strings({"a", "a"})});
  auto good2 = Batch(nullable, {Longs({12}), Strings({"z"}), Strings({"c"})});
  auto bad = Batch(nullable, {Longs({13, std::nullopt}), Strings({"u", "v"}), Strings({"a", "b"})});
  auto r = WriteTable(parted_, Reader(nullable, {good1, good2, bad}), {});
  EXPECT_EQ(Code(r.status()), "ConstraintViolation") << r.status().ToString();
  ExpectUnchanged(parted_);
}

TEST_F(BadInput, CheckConstraintViolationAfterGoodBatches) {
  auto r = WriteTable(parted_, GoodThen(InPart({5, -5}, "b")), {});
  EXPECT_EQ(Code(r.status()), "ConstraintViolation") << r.status().ToString();
  EXPECT_NE(r.status().message().find("positive"), std::string::npos) << r.status().ToString();
  ExpectUnchanged(parted_);
}

TEST_F(BadInput, ReplaceWhereViolationAfterGoodBatches) {
  auto r = WriteTable(parted_, Reader(IdNamePart(), {InPart({10}, "a"), InPart({11}, "a"),
                                                     InPart({12}, "b")}),
                      ReplaceWhere("part = 'a'"));
  EXPECT_EQ(Code(r.status()), "ConstraintViolation") << r.status().ToString();
  ExpectUnchanged(parted_);
}

TEST_F(BadInput, InputStreamFailingHalfWay) {
  auto reader = std::make_shared<ScriptedReader>(
      IdNamePart(), std::vector<std::shared_ptr<arrow::RecordBatch>>{
                        InPart({10, 11}, "a"), InPart({12}, "c"), InPart({13}, "a")});
  reader->FailAt(2, arrow::Status::IOError("input source went away"));
  auto r = WriteTable(parted_, reader, {});
  EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
  ExpectUnchanged(parted_);
}

TEST_F(BadInput, InvalidReplaceWherePredicate) {
  auto r = WriteTable(parted_, GoodThen(InPart({13}, "a")), ReplaceWhere("nope = 1"));
  EXPECT_EQ(Code(r.status()), "InvalidExpression") << r.status().ToString();
  ExpectUnchanged(parted_);
}

TEST_F(BadInput, DynamicPartitionOverwriteOfUnpartitionedTable) {
  WriteOptions dyn = Overwrite();
  dyn.dynamic_partition_overwrite = true;
  auto r = WriteTable(plain_, One(Named({7})), dyn);
  EXPECT_EQ(Code(r.status()), "InvalidArgument") << r.status().ToString();
  ExpectUnchanged(plain_);
}

TEST_F(BadInput, PartitioningThatDoesNotMatchTheTable) {
  WriteOptions other = Append();
  other.partition_by = {"name"};
  auto r = WriteTable(parted_, GoodThen(InPart({13}, "a")), other);
  EXPECT_EQ(Code(r.status()), "InvalidArgument") << r.status().ToString();
  ExpectUnchanged(parted_);
}

TEST_F(BadInput, OverwriteOfAppendOnlyTableIsRefusedAtCommit) {
  // Refused only when the commit is validated, after the data files were written.
  const std::string root = (dir_.path() / "append-only").string();
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"delta.appendOnly", "true"}};
  ASSERT_TRUE(CreateTable(root, create).ok());
  ASSERT_WRITES(WriteTable(root, One(Named({1})), {}));
  log_[root] = LogListing(root);
  files_[root] = DataFiles(root);
  rows_[root] = ReadRows(root);
  auto r = WriteTable(root, Reader(IdName(), {Named({2}), Named({3})}), Overwrite());
  EXPECT_EQ(Code(r.status()), "AppendOnlyViolation") << r.status().ToString();
  ExpectUnchanged(root);
}

TEST_F(BadInput, WriteToMissingDirectoryCreatesTheTable) {
  // Writing creates the table when there is none, also where no directory exists yet; a
  // partitioned write manages, an unpartitioned one must too.
  const std::string fresh = (dir_.path() / "new" / "plain").string();
  auto r = WriteTable(fresh, One(Named({1})), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadRows(fresh), NamedRows({1}));
  const std::string fresh_parted = (dir_.path() / "new" / "parted").string();
  WriteOptions by_part;
  by_part.partition_by = {"part"};
  auto p = WriteTable(fresh_parted, One(InPart({1}, "a")), by_part);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(ReadRows(fresh_parted), InPartRows({1}, "a"));
}

// The CLI reading a CSV whose last line does not parse, after enough good lines that earlier
// blocks were converted and written.
TEST_F(BadInput, CliCsvWithUnparsableLine) {
  // A table made by the CLI, with files of about 64 KiB so that several are finished before the
  // bad line is reached.
  const std::string table = dir_.str() + "/from-cli";
  auto created = RunCli("create " + table +
                            " --schema 'id long NOT NULL, name string, part string'"
                            " --partition-by part --property delta.targetFileSize=65536",
                        dir_);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string seed = dir_.str() + "/seed.csv";
  std::ofstream(seed) << "id,name,part\n1,one,a\n2,two,b\n";
  ASSERT_EQ(RunCli("write " + table + " " + seed, dir_).exit_code, 0);
  log_[table] = LogListing(table);
  files_[table] = DataFiles(table);
  rows_[table] = ReadRows(table);
  ASSERT_EQ(rows_[table].size(), 2u);

  const std::string csv = dir_.str() + "/input.csv";
  {
    std::ofstream out(csv);
    out << "id,name,part\n";
    for (int i = 1; i <= 300'000; ++i) out << i << ",name-" << i << "," << (i % 3 ? "a" : "b") << "\n";
    out << "not-a-number,broken,a\n";
  }
  auto r = RunCli("write " + table + " " + csv, dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("not-a-number"), std::string::npos) << r.err;
  ExpectUnchanged(table);

  // A line with a missing field, and an empty NOT NULL id.
  const std::string short_csv = dir_.str() + "/short.csv";
  std::ofstream(short_csv) << "id,name,part\n5,ok,a\n6,missing\n";
  auto r2 = RunCli("write " + table + " " + short_csv, dir_);
  EXPECT_EQ(r2.exit_code, 1) << r2.err;
  const std::string null_csv = dir_.str() + "/null.csv";
  std::ofstream(null_csv) << "id,name,part\n5,ok,a\n,no-id,b\n";
  auto r3 = RunCli("write " + table + " " + null_csv, dir_);
  EXPECT_EQ(r3.exit_code, 1) << r3.err;
  EXPECT_NE(r3.err.find("ConstraintViolation"), std::string::npos) << r3.err;
  ExpectUnchanged(table);
}

}  // namespace
}  // namespace deltacpp::testing
