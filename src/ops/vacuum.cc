// VACUUM: what the latest version and the retention window protect, what a listing (or the
// log) offers for deletion, the deletions on several threads, and the START / END commits.
#include "deltacpp/ops/vacuum.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "deltacpp/error.h"
#include "deltacpp/transaction.h"
#include "log/commit_parser.h"
#include "log/file_action_schema.h"
#include "log/log_segment.h"
#include "log/tombstones.h"
#include "ops/data_tree_listing.h"
#include "protocol/deletion_vector.h"
#include "protocol/path_encoding.h"
#include "txn/writer_features.h"
#include "util/clock.h"
#include "util/thread_pools.h"

namespace deltacpp {

namespace {

using internal::kDeletionVectorCol;
using internal::kPathCol;

constexpr int kDeletionTimestampCol = internal::kNumFileActionColumns + 1;
constexpr int64_t kMsPerHour = 3600LL * 1000;

// The files the latest version and the versions inside the retention window need, as paths
// relative to the root; paths of the log that lead outside the root are collected apart.
class ProtectedFiles {
 public:
  explicit ProtectedFiles(std::string root) : root_(std::move(root)) {}

  // Row `row` of a batch of add or remove actions (FileActionSchema() column order): its data
  // file and its deletion vector file.
  void AddAction(const arrow::RecordBatch& batch, int64_t row) {
    const auto& paths = static_cast<const arrow::StringArray&>(*batch.column(kPathCol));
    if (paths.IsNull(row)) return;
    if (auto rel = Resolve(paths.GetView(row))) paths_.insert(std::move(*rel));
    if (auto dv = DeletionVectorFile(batch, row)) paths_.insert(std::move(*dv));
  }

  bool Contains(const std::string& rel) const { return paths_.count(rel) > 0; }
  void Reserve(size_t n) { paths_.reserve(n); }

  // `raw` (a path from the log) relative to the root; nullopt (and recorded as refused) when
  // it leads outside the root or cannot be decoded.
  std::optional<std::string> Resolve(std::string_view raw) {
    auto resolved = internal::ResolveFileInTable(root_, root_, raw);
    if (!resolved.ok()) {
      Refuse(std::string(raw));
      return std::nullopt;
    }
    return Relative(*resolved);
  }

  // The on-disk deletion vector file of row `row`, relative to the root; nullopt for inline
  // or absent ones and for ones outside the root (recorded as refused).
  std::optional<std::string> DeletionVectorFile(const arrow::RecordBatch& batch, int64_t row) {
    const auto& dvs = static_cast<const arrow::StructArray&>(*batch.column(kDeletionVectorCol));
    if (dvs.IsNull(row)) return std::nullopt;
    const auto& storage =
        static_cast<const arrow::StringArray&>(*dvs.field(internal::kDvStorageType));
    const auto& where =
        static_cast<const arrow::StringArray&>(*dvs.field(internal::kDvPathOrInlineDv));
    if (storage.IsNull(row) || where.IsNull(row)) return std::nullopt;
    DeletionVectorDescriptor dv;
    dv.storage_type = std::string(storage.GetView(row));
    dv.path_or_inline_dv = std::string(where.GetView(row));
    if (dv.storage_type == "i") return std::nullopt;
    auto path = internal::DeletionVectorAbsolutePath(dv, root_);
    if (!path.ok()) {
      Refuse(dv.storage_type + ":" + dv.path_or_inline_dv);
      return std::nullopt;
    }
    return Relative(*path);
  }

  std::vector<std::string> TakeRefused() {
    std::sort(refused_.begin(), refused_.end());
    refused_.erase(std::unique(refused_.begin(), refused_.end()), refused_.end());
    return std::move(refused_);
  }

 private:
  std::optional<std::string> Relative(const std::string& absolute) const {
    if (absolute.size() <= root_.size() + 1) return std::nullopt;  // the root itself
    return absolute.substr(root_.size() + 1);
  }
  void Refuse(std::string raw) { refused_.push_back(std::move(raw)); }

  std::string root_;
  std::unordered_set<std::string> paths_;
  std::vector<std::string> refused_;
};

// What a file or folder to delete is.
struct Deletable {
  std::string path;  // relative to the root
  int64_t size = 0;
};

arrow::Result<std::shared_ptr<DeltaTable>> OpenTable(const std::shared_ptr<DeltaTable>& table,
                                                     const std::string& location) {
  if (table) return table;
  return DeltaTable::Open(location);
}

TransactionOptions RowFreeOptions() {
  TransactionOptions options;
  options.enforced_features = internal::RowLevelWriterFeatures();
  return options;
}

// The files a kLite run offers: the removes of `tombstones` (the segment's) and of every commit
// still in the log whose deletion time is before `delete_before`, their deletion vector files,
// and the cdc files of those commits. Each is returned once, relative to the root, with its
// size and time from storage (gone files are left out).
arrow::Result<std::vector<internal::DataFile>> LiteCandidates(
    LogStore& store, const std::string& root, const arrow::RecordBatch* tombstones,
    int64_t delete_before, ProtectedFiles* resolver) {
  std::vector<std::string> named;
  auto take_removes = [&](const arrow::RecordBatch& batch) {
    const auto& is_add =
        static_cast<const arrow::BooleanArray&>(*batch.column(internal::kNumFileActionColumns));
    const auto& deleted = static_cast<const arrow::Int64Array&>(*batch.column(kDeletionTimestampCol));
    const auto& paths = static_cast<const arrow::StringArray&>(*batch.column(kPathCol));
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      if (paths.IsNull(r) || (is_add.IsValid(r) && is_add.Value(r))) continue;
      const int64_t when = deleted.IsValid(r) ? deleted.Value(r) : 0;
      if (when >= delete_before) continue;
      if (auto rel = resolver->Resolve(paths.GetView(r))) named.push_back(std::move(*rel));
      if (auto dv = resolver->DeletionVectorFile(batch, r)) named.push_back(std::move(*dv));
    }
  };
  if (tombstones) take_removes(*tombstones);

  ARROW_ASSIGN_OR_RAISE(auto log_files, internal::ListLogFiles(store, root));
  std::vector<const internal::LogFile*> commits;
  for (const auto& f : log_files) {
    if (f.name.kind == internal::LogFileKind::kCommit) commits.push_back(&f);
  }
  std::vector<internal::ParsedActions> parsed(commits.size());
  ARROW_RETURN_NOT_OK(internal::RunFileTasks(static_cast<int>(commits.size()), [&](int i) {
    const auto& file = *commits[static_cast<size_t>(i)];
    ARROW_ASSIGN_OR_RAISE(auto content, store.Read(file.entry.path));
    ARROW_ASSIGN_OR_RAISE(parsed[static_cast<size_t>(i)],
                          internal::ParseActionFile(content->ToString(), file.entry.path));
    return arrow::Status::OK();
  }));
  for (size_t i = 0; i < commits.size(); ++i) {
    if (parsed[i].file_actions) take_removes(*parsed[i].file_actions);
    for (const auto& cdc : parsed[i].cdc_files) {
      if (auto rel = resolver->Resolve(cdc.path)) named.push_back(std::move(*rel));
    }
  }
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());

  std::vector<internal::DataFile> out;
  auto fs = store.filesystem();
  std::mutex mutex;
  ARROW_RETURN_NOT_OK(internal::RunFileTasks(static_cast<int>(named.size()), [&](int i) {
    const std::string& rel = named[static_cast<size_t>(i)];
    ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(root + "/" + rel));
    if (info.type() != arrow::fs::FileType::File) return arrow::Status::OK();
    const int64_t mtime = std::chrono::duration_cast<std::chrono::milliseconds>(
                              info.mtime().time_since_epoch())
                              .count();
    std::lock_guard<std::mutex> lock(mutex);
    out.push_back(internal::DataFile{rel, info.size(), mtime, -1});
    return arrow::Status::OK();
  }));
  return out;
}

// Deletes `files` (relative to `root`) on `threads` threads, calling `progress(done, bytes)`
// from the caller's thread while it waits. Sets `gone[i]` for each file deleted; stops at the
// first failure and returns it.
arrow::Status DeleteFiles(LogStore& store, const std::string& root,
                          const std::vector<Deletable>& files, int threads,
                          const std::function<void(int64_t, int64_t)>& progress,
                          std::vector<char>* gone) {
  gone->assign(files.size(), 0);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  arrow::Status first_error;
  auto work = [&] {
    while (!failed.load()) {
      const size_t i = next.fetch_add(1);
      if (i >= files.size()) return;
      auto status = store.DeleteDataFile(root + "/" + files[i].path);
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (first_error.ok()) first_error = status;
        failed = true;
        return;
      }
      (*gone)[i] = 1;
      done.fetch_add(1);
      bytes.fetch_add(files[i].size);
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(files.size())));
  std::vector<std::thread> workers;
  for (int t = 1; t < n; ++t) workers.emplace_back(work);
  if (progress && n > 1) {
    // The caller reports while the others delete, then joins in for what is left.
    while (next.load() < files.size() && !failed.load()) {
      progress(done.load(), bytes.load());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  work();
  for (auto& w : workers) w.join();
  if (progress) progress(done.load(), bytes.load());
  return first_error;
}

}  // namespace

arrow::Result<VacuumResult> VacuumBuilder::Execute() const {
  const auto started = std::chrono::steady_clock::now();
  ARROW_ASSIGN_OR_RAISE(auto table, OpenTable(table_, location_));
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<const Snapshot> snapshot, table->Latest());
  const std::string& root = snapshot->table_root();
  LogStore& store = *snapshot->store();
  const std::string context =
      fmt::format("table {} version {}: VACUUM", root, snapshot->version());

  // VACUUM is a writer: the writer protocol is checked first, whatever the table lists
  // (vacuumProtocolCheck asks exactly that).
  ARROW_ASSIGN_OR_RAISE(auto start_txn, Transaction::Start(table, snapshot, RowFreeOptions()));

  const TableConfig& config = snapshot->config();
  ARROW_RETURN_NOT_OK(config.CheckValid("delta.deletedFileRetentionDuration", context));
  const int64_t table_retention = config.deleted_file_retention_ms;
  int64_t retention = table_retention;
  if (retention_hours_) {
    const double hours = *retention_hours_;
    if (!std::isfinite(hours) || hours < 0 || hours * kMsPerHour > 9.0e15) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{}: the retention must be a non-negative number of hours, "
                                    "not {}",
                                    context, hours));
    }
    retention = std::llround(hours * kMsPerHour);
    if (retention_check_ && retention < table_retention) {
      return DeltaError(
          DeltaErrorCode::kInvalidArgument,
          fmt::format("{}: a retention of {} hours is shorter than the table's "
                      "delta.deletedFileRetentionDuration ({} hours). Files that readers of "
                      "older versions or writers that have not committed yet still need could "
                      "be deleted. Give a retention of at least {} hours, or turn the check off "
                      "(RetentionDurationCheck(false), `--no-retention-check`) if no such "
                      "reader or writer can exist",
                      context, hours, static_cast<double>(table_retention) / kMsPerHour,
                      static_cast<double>(table_retention) / kMsPerHour));
    }
  }
  const int64_t now = internal::WallClockMillis();
  VacuumResult result;
  result.dry_run = dry_run_;
  result.retention_ms = retention;
  result.delete_before_ms = now - retention;
  const int64_t delete_before = result.delete_before_ms;

  // What must stay: the latest version's files and deletion vectors, and those of every remove
  // no older than `delete_before` (the versions inside the window read them).
  ProtectedFiles protect(root);
  protect.Reserve(static_cast<size_t>(snapshot->num_files()));
  snapshot->live_files().ForEach(
      [&](FileRef ref) { protect.AddAction(snapshot->live_files().actions(ref), ref.row); });
  ARROW_ASSIGN_OR_RAISE(auto segment, internal::BuildLogSegment(store, root, snapshot->version()));
  ARROW_ASSIGN_OR_RAISE(
      auto tombstones,
      internal::LoadTombstones(store, segment, std::numeric_limits<int64_t>::min()));
  if (tombstones) {
    const auto& deleted =
        static_cast<const arrow::Int64Array&>(*tombstones->column(kDeletionTimestampCol));
    for (int64_t r = 0; r < tombstones->num_rows(); ++r) {
      const int64_t when = deleted.IsValid(r) ? deleted.Value(r) : 0;
      if (when >= delete_before) {
        protect.AddAction(*tombstones, r);
      } else if (mode_ == VacuumMode::kFull) {
        // Expired: nothing to protect, but a path that leads outside the root is reported.
        const auto& paths = static_cast<const arrow::StringArray&>(*tombstones->column(kPathCol));
        if (paths.IsValid(r)) protect.Resolve(paths.GetView(r));
        protect.DeletionVectorFile(*tombstones, r);
      }
    }
  }

  // What is offered for deletion.
  std::vector<internal::DataFile> offered;
  internal::DataTree tree;
  if (mode_ == VacuumMode::kFull) {
    ARROW_ASSIGN_OR_RAISE(
        tree, internal::ListDataTree(store, root, snapshot->partition_columns(), [&](int64_t n) {
          if (on_progress_) on_progress_(VacuumProgress{VacuumProgress::Stage::kListing, n});
        }));
    offered = std::move(tree.files);
  } else {
    ARROW_ASSIGN_OR_RAISE(offered, LiteCandidates(store, root, tombstones.get(), delete_before,
                                                  &protect));
  }
  result.num_listed_files = static_cast<int64_t>(offered.size());

  std::vector<Deletable> files;
  std::vector<int64_t> deletable_in_dir(tree.dirs.size(), 0);
  for (const auto& f : offered) {
    if (f.modification_time_ms >= delete_before || protect.Contains(f.path)) continue;
    // The listing never enters hidden folders (`_delta_log` among them) nor offers hidden
    // files; this keeps it that way for the paths a LITE run takes from the log, whatever a
    // remove or cdc entry names.
    if (internal::HasHiddenSegment(f.path, snapshot->partition_columns())) continue;
    files.push_back(Deletable{f.path, f.size});
    if (f.dir >= 0) ++deletable_in_dir[static_cast<size_t>(f.dir)];
  }
  std::sort(files.begin(), files.end(),
            [](const Deletable& a, const Deletable& b) { return a.path < b.path; });

  // Folders the deletions leave empty, children before their parents: every entry deletable
  // (files) or itself left empty (folders), and not modified inside the window, so a folder a
  // writer has just made for files it is still writing stays.
  std::vector<int32_t> empty_dirs;
  {
    std::vector<int64_t> emptied(tree.dirs.size(), 0);  // entries that go
    for (size_t d = 0; d < tree.dirs.size(); ++d) emptied[d] = deletable_in_dir[d];
    for (size_t i = tree.dirs.size(); i-- > 0;) {  // children come after their parents
      const auto& dir = tree.dirs[i];
      if (emptied[i] == dir.num_entries && dir.modification_time_ms < delete_before) {
        empty_dirs.push_back(static_cast<int32_t>(i));
        if (dir.parent >= 0) ++emptied[static_cast<size_t>(dir.parent)];
      }
    }
  }

  result.refused_paths = protect.TakeRefused();
  for (const auto& f : files) {
    result.files.push_back(VacuumFile{f.path, f.size});
    result.num_bytes += f.size;
  }
  result.num_files = static_cast<int64_t>(files.size());
  if (dry_run_) {
    result.num_directories = static_cast<int64_t>(empty_dirs.size());
    result.execution_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - started)
                                   .count();
    return result;
  }

  std::map<std::string, std::string> parameters = {
      {"retentionCheckEnabled", retention_check_ ? "true" : "false"},
      {"defaultRetentionMillis", std::to_string(table_retention)}};
  if (retention_hours_) parameters["specifiedRetentionMillis"] = std::to_string(retention);
  ARROW_ASSIGN_OR_RAISE(
      auto started_commit,
      start_txn->Commit("VACUUM START", parameters,
                        {{"numFilesToDelete", std::to_string(result.num_files)},
                         {"sizeOfDataToDelete", std::to_string(result.num_bytes)}}));
  result.start_version = started_commit.version;

  std::vector<char> gone;
  arrow::Status delete_status = DeleteFiles(
      store, root, files, parallelism_,
      [&](int64_t done, int64_t bytes) {
        if (on_progress_) {
          on_progress_(VacuumProgress{VacuumProgress::Stage::kDeleting, done, result.num_files,
                                      bytes});
        }
      },
      &gone);
  int64_t deleted = 0;
  result.files.clear();
  result.num_bytes = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!gone[i]) continue;
    ++deleted;
    result.files.push_back(VacuumFile{files[i].path, files[i].size});
    result.num_bytes += files[i].size;
  }
  int64_t removed_dirs = 0;
  if (delete_status.ok()) {
    for (int32_t d : empty_dirs) {
      auto removed = store.RemoveDataDirIfEmpty(root + "/" + tree.dirs[static_cast<size_t>(d)].path);
      if (!removed.ok()) {
        delete_status = removed.status();
        break;
      }
      if (*removed) ++removed_dirs;
    }
  }
  result.num_directories = removed_dirs;
  result.num_files = deleted;

  // The end marker, also after a failure, so history shows the run did not complete.
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<const Snapshot> now_snapshot, table->Latest());
  auto end_txn = Transaction::Start(table, now_snapshot, RowFreeOptions());
  arrow::Status end_status = end_txn.status();
  if (end_txn.ok()) {
    auto ended = (*end_txn)->Commit(
        "VACUUM END", {{"status", delete_status.ok() ? "COMPLETED" : "FAILED"}},
        {{"numDeletedFiles", std::to_string(deleted)},
         {"numVacuumedDirectories", std::to_string(removed_dirs)}});
    end_status = ended.status();
    if (ended.ok()) result.end_version = ended->version;
  }
  if (!delete_status.ok()) {
    return delete_status.WithMessage(fmt::format("{}: deleting files failed after {} of {}: {}",
                                                 context, deleted, files.size(),
                                                 delete_status.message()));
  }
  ARROW_RETURN_NOT_OK(end_status);
  result.execution_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - started)
                                 .count();
  return result;
}

}  // namespace deltacpp
