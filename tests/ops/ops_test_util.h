// Helpers for operation tests: small Arrow inputs, rows read back as text, the on-disk state of
// a table (log listing, data files, files some version references) and forked-child plumbing.
#pragma once

#include <arrow/api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "support/process_barrier.h"
#include "support/temp_dir.h"

namespace deltacpp::testing {

// ---------------------------------------------------------------------------------------------
// Inputs

inline std::shared_ptr<arrow::Array> Longs(const std::vector<std::optional<int64_t>>& values) {
  arrow::Int64Builder b;
  for (const auto& v : values) (void)(v ? b.Append(*v) : b.AppendNull());
  return *b.Finish();
}

inline std::shared_ptr<arrow::Array> Ints(const std::vector<std::optional<int32_t>>& values) {
  arrow::Int32Builder b;
  for (const auto& v : values) (void)(v ? b.Append(*v) : b.AppendNull());
  return *b.Finish();
}

inline std::shared_ptr<arrow::Array> Strings(
    const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder b;
  for (const auto& v : values) (void)(v ? b.Append(*v) : b.AppendNull());
  return *b.Finish();
}

inline std::shared_ptr<arrow::RecordBatch> Batch(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::shared_ptr<arrow::Array>>& columns) {
  return arrow::RecordBatch::Make(schema, columns.empty() ? 0 : columns[0]->length(), columns);
}

/// A reader over `batches` (all of `schema`).
inline std::shared_ptr<arrow::RecordBatchReader> Reader(
    const std::shared_ptr<arrow::Schema>& schema,
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  return *arrow::RecordBatchReader::Make(std::move(batches), schema);
}

inline std::shared_ptr<arrow::RecordBatchReader> Rows(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::shared_ptr<arrow::Array>>& columns) {
  return Reader(schema, {Batch(schema, columns)});
}

/// Yields batches one by one; before handing out batch `hook_at` it runs `hook`, and when
/// `fail_at` is reached it returns `failure` instead of the batch. Lets a test act in the middle
/// of an operation that streams its input (after it read its snapshot, before it commits).
class ScriptedReader final : public arrow::RecordBatchReader {
 public:
  ScriptedReader(std::shared_ptr<arrow::Schema> schema,
                 std::vector<std::shared_ptr<arrow::RecordBatch>> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {}

  ScriptedReader& RunBefore(size_t index, std::function<void()> hook) {
    hook_at_ = index;
    hook_ = std::move(hook);
    return *this;
  }
  ScriptedReader& FailAt(size_t index, arrow::Status failure) {
    fail_at_ = index;
    failure_ = std::move(failure);
    return *this;
  }

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (hook_ && next_ == hook_at_) {
      auto hook = std::move(hook_);
      hook_ = nullptr;
      hook();
    }
    if (fail_at_ && next_ == *fail_at_) return failure_;
    *batch = next_ < batches_.size() ? batches_[next_] : nullptr;
    ++next_;
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  size_t next_ = 0;
  size_t hook_at_ = 0;
  std::function<void()> hook_;
  std::optional<size_t> fail_at_;
  arrow::Status failure_;
};

// ---------------------------------------------------------------------------------------------
// Reading back

/// Rows of `table` as "a|b|..." strings (null as "null").
inline std::multiset<std::string> RowStrings(const arrow::Table& table) {
  std::multiset<std::string> out;
  for (int64_t r = 0; r < table.num_rows(); ++r) {
    std::string row;
    for (int c = 0; c < table.num_columns(); ++c) {
      auto s = *table.column(c)->GetScalar(r);
      row += (c ? "|" : "") + (s->is_valid ? s->ToString() : std::string("null"));
    }
    out.insert(std::move(row));
  }
  return out;
}

inline arrow::Result<std::shared_ptr<arrow::Table>> ReadTable(
    const std::string& root, std::optional<int64_t> version = std::nullopt) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(root));
  ARROW_ASSIGN_OR_RAISE(auto snapshot, table->SnapshotAt(version));
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Build());
  return scan->ToTable();
}

/// Rows of a version (latest when nullopt) as strings; records a failure and returns nothing
/// when the table cannot be read.
inline std::multiset<std::string> ReadRows(const std::string& root,
                                           std::optional<int64_t> version = std::nullopt) {
  auto table = ReadTable(root, version);
  EXPECT_TRUE(table.ok()) << root << " version " << (version ? std::to_string(*version) : "latest")
                          << ": " << table.status().ToString();
  if (!table.ok()) return {};
  return RowStrings(**table);
}

/// The latest snapshot of the table at `root`; records a failure when it cannot be loaded.
inline std::shared_ptr<Snapshot> Latest(const std::string& root) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return *snap;
}

inline std::optional<int64_t> LatestVersion(const std::string& root) {
  auto table = DeltaTable::Open(root);
  if (!table.ok()) return std::nullopt;
  auto snapshot = (*table)->Latest();
  if (!snapshot.ok()) return std::nullopt;
  return (*snapshot)->version();
}

inline std::multiset<std::string> Union(std::multiset<std::string> a,
                                        const std::multiset<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// ---------------------------------------------------------------------------------------------
// On-disk state

/// Names in `_delta_log` (files and directories, hidden ones included).
inline std::set<std::string> LogListing(const std::string& root) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root + "/_delta_log", ec)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

/// Parquet files under the table root outside `_delta_log`, relative to the root.
inline std::set<std::string> DataFiles(const std::string& root) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const auto& p = it->path();
    if (it->is_directory() && p.filename() == "_delta_log") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && p.extension() == ".parquet") {
      out.insert(std::filesystem::relative(p, root).string());
    }
  }
  return out;
}

/// Data files (relative to the root) live in `version`.
inline std::set<std::string> LiveFiles(const std::string& root, int64_t version) {
  std::set<std::string> out;
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return out;
  auto snapshot = (*table)->SnapshotAt(version);
  EXPECT_TRUE(snapshot.ok()) << "version " << version << ": " << snapshot.status().ToString();
  if (!snapshot.ok()) return out;
  auto scan = (*snapshot)->NewScan().Build();
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  if (!scan.ok()) return out;
  for (const auto& f : (*scan)->files()) {
    out.insert(std::filesystem::path(f.path).lexically_relative(root).string());
  }
  return out;
}

/// Data files some version from `first_version` to the latest references.
inline std::set<std::string> ReferencedFiles(const std::string& root, int64_t first_version = 0) {
  std::set<std::string> out;
  auto latest = LatestVersion(root);
  EXPECT_TRUE(latest.has_value()) << root;
  for (int64_t v = first_version; latest && v <= *latest; ++v) {
    auto live = LiveFiles(root, v);
    out.insert(live.begin(), live.end());
  }
  return out;
}

template <typename T>
std::set<T> Minus(const std::set<T>& a, const std::set<T>& b) {
  std::set<T> out;
  for (const auto& x : a) {
    if (!b.count(x)) out.insert(x);
  }
  return out;
}

/// A copy of a table directory (e.g. a corpus table) under `into`/`name`.
inline std::string CopyTable(const std::string& source, const TempDir& into,
                             const std::string& name) {
  std::string target = (into.path() / name).string();
  std::filesystem::copy(source, target, std::filesystem::copy_options::recursive);
  return target;
}

inline std::string CommitName(int64_t version) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020lld.json", static_cast<long long>(version));
  return name;
}

inline std::string Code(const arrow::Status& st) {
  auto code = GetDeltaErrorCode(st);
  return code ? DeltaErrorCodeName(*code) : "(no delta code) " + st.ToString();
}

// ---------------------------------------------------------------------------------------------
// Forked children

/// Exit codes children report; a child never returns into the test runner.
enum ChildExit : int {
  kChildOk = 0,
  kChildBarrierBroken = 2,
  kChildSetupFailed = 3,
  kChildWriteFailed = 4,
  kChildUnexpected = 5,
  kChildNoFaultInjected = 6,  ///< a fault the child was to meet never happened
};

/// Forks; the child runs `body` and _exits with its result (it never returns here). -1 when the
/// fork failed.
inline pid_t ForkChild(const std::function<int()>& body) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(120);  // a stuck child dies instead of hanging the suite
    int code = kChildUnexpected;
    try {
      code = body();
    } catch (...) {
      code = kChildUnexpected;
    }
    _exit(code);
  }
  if (pid < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  return pid;
}

inline std::string DescribeStatus(int status) {
  if (status == -1) return "waitpid failed";
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace deltacpp::testing
