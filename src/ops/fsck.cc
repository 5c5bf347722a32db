// FSCK: each live file and deletion vector file looked up on storage in parallel; the missing
// ones removed in one commit.
#include "deltacpp/ops/fsck.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "deltacpp/error.h"
#include "ops/op_util.h"
#include "ops/row_level_op.h"
#include "protocol/deletion_vector.h"
#include "protocol/path_encoding.h"
#include "txn/writer_features.h"
#include "util/clock.h"
#include "util/thread_pools.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

// Files looked up per task: enough to keep the pool's overhead small, few enough to spread.
constexpr int64_t kFilesPerTask = 256;

// Absent (not found) is what FSCK looks for; a path that exists but is not a regular file is
// as unreadable as an absent one; other failures are errors.
arrow::Result<bool> IsRegularFile(arrow::fs::FileSystem& fs, const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto info, fs.GetFileInfo(path));
  return info.type() == arrow::fs::FileType::File;
}

}  // namespace

arrow::Result<FsckResult> FsckBuilder::Execute() const {
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<DeltaTable> table = table_;
  if (!table) {
    ARROW_ASSIGN_OR_RAISE(table, DeltaTable::Open(location_));
  }
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<const Snapshot> snapshot, table->Latest());
  const std::string& root = snapshot->table_root();
  const std::string context = fmt::format("FSCK of table {} version {}", root,
                                          snapshot->version());
  std::unique_ptr<Transaction> txn;
  if (!dry_run_) {
    // FSCK writes no row: the table's row-level rules stay as they are.
    TransactionOptions options = options_;
    for (const auto& f : RowLevelWriterFeatures()) options.enforced_features.push_back(f);
    ARROW_ASSIGN_OR_RAISE(txn, Transaction::Start(table, snapshot, options));
  }

  const LiveFiles& live = snapshot->live_files();
  const std::vector<FileRef> refs = live.Refs();
  const auto n = static_cast<int64_t>(refs.size());
  std::vector<uint8_t> data_missing(refs.size(), 0), dv_missing(refs.size(), 0);
  std::vector<std::string> details(refs.size());
  auto fs = snapshot->store()->filesystem();
  std::atomic<int64_t> checked{0};
  std::mutex progress_mutex;
  const int tasks = static_cast<int>((n + kFilesPerTask - 1) / kFilesPerTask);
  ARROW_RETURN_NOT_OK(RunFileTasks(tasks, [&](int task) -> arrow::Status {
    const int64_t begin = task * kFilesPerTask;
    const int64_t end = std::min(n, begin + kFilesPerTask);
    for (int64_t i = begin; i < end; ++i) {
      const FileRef ref = refs[static_cast<size_t>(i)];
      auto fail = [&](const arrow::Status& st) {
        return st.WithMessage(fmt::format("{}: file {}: {}", context, live.path(ref),
                                          st.message()));
      };
      auto data = ResolveFileInTable(root, root, live.path(ref));
      if (!data.ok()) return fail(data.status());
      auto present = IsRegularFile(*fs, *data);
      if (!present.ok()) return fail(present.status());
      if (!*present) {
        data_missing[static_cast<size_t>(i)] = 1;
        details[static_cast<size_t>(i)] = *data;
      }
      const AddFile add = AddForLiveFile(live.actions(ref), ref.row);
      if (add.deletion_vector && add.deletion_vector->storage_type != "i") {
        auto dv = DeletionVectorAbsolutePath(*add.deletion_vector, root);
        if (!dv.ok()) return fail(dv.status());
        auto dv_present = IsRegularFile(*fs, *dv);
        if (!dv_present.ok()) return fail(dv_present.status());
        if (!*dv_present) {
          dv_missing[static_cast<size_t>(i)] = 1;
          auto& d = details[static_cast<size_t>(i)];
          d += (d.empty() ? "" : ", ") + *dv + " (its deletion vector)";
        }
      }
    }
    const int64_t done = checked += end - begin;
    if (on_progress_) {
      std::lock_guard lock(progress_mutex);
      on_progress_(FsckProgress{done, n});
    }
    return arrow::Status::OK();
  }));

  FsckResult result;
  result.dry_run = dry_run_;
  result.version_checked = snapshot->version();
  result.num_files_checked = n;
  std::vector<RemoveFile> removes;
  std::vector<std::string> read_paths;
  int64_t missing_data = 0, missing_dvs = 0;
  const int64_t now = WallClockMillis();
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!data_missing[i] && !dv_missing[i]) continue;
    RemoveFile remove = RemoveForLiveFile(live, refs[i], now);
    FsckMissingFile m;
    m.path = std::string(live.path(refs[i]));
    m.size = remove.size.value_or(0);
    m.data_file_missing = data_missing[i] != 0;
    m.deletion_vector_missing = dv_missing[i] != 0;
    m.detail = std::move(details[i]);
    missing_data += m.data_file_missing;
    missing_dvs += m.deletion_vector_missing;
    result.missing.push_back(std::move(m));
    read_paths.push_back(remove.path);
    removes.push_back(std::move(remove));
  }
  if (dry_run_ || removes.empty()) {
    result.execution_time_ms = MillisSince(start);
    return result;
  }
  const auto removed = static_cast<int64_t>(removes.size());
  txn->ReadFiles(read_paths);
  txn->RemoveFiles(std::move(removes));
  ARROW_ASSIGN_OR_RAISE(
      auto committed,
      txn->Commit("FSCK", {{"numRemovedFiles", std::to_string(removed)}},
                  {{"numRemovedFiles", std::to_string(removed)},
                   {"numMissingDataFiles", std::to_string(missing_data)},
                   {"numMissingDeletionVectors", std::to_string(missing_dvs)}}));
  result.version = committed.version;
  result.execution_time_ms = MillisSince(start);
  return result;
}

}  // namespace deltacpp
