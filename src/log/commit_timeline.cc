#include "log/commit_timeline.h"

#include <fmt/core.h>

#include <charconv>

#include "deltacpp/error.h"
#include "log/commit_parser.h"

namespace deltacpp::internal {

arrow::Result<CommitTimeline> CommitTimeline::Load(std::shared_ptr<LogStore> store,
                                                   const std::string& table_root,
                                                   const TableConfig& latest_config) {
  CommitTimeline t;
  t.store_ = std::move(store);
  t.table_root_ = table_root;
  ARROW_ASSIGN_OR_RAISE(auto files, ListLogFiles(*t.store_, table_root));
  auto earliest = EarliestReconstructableVersion(files);
  if (!earliest) {
    return DeltaError(DeltaErrorCode::kTableNotFound,
                      fmt::format("{} is not a Delta table: no reconstructable version", table_root));
  }
  t.earliest_ = *earliest;
  t.latest_ = -1;
  int64_t prev = INT64_MIN;
  std::map<int64_t, int64_t> checkpoint_times;
  for (const auto& f : files) {
    if (f.name.kind == LogFileKind::kCommit) {
      t.commits_[f.name.version] = f.entry;
      // A commit time that does not move forward is bumped to 1 ms after the previous one.
      int64_t ts = f.entry.modification_time_ms;
      if (prev != INT64_MIN && ts <= prev) ts = prev + 1;
      t.file_times_[f.name.version] = ts;
      prev = ts;
      t.latest_ = std::max(t.latest_, f.name.version);
    } else if (f.name.kind != LogFileKind::kChecksum && f.name.kind != LogFileKind::kCompaction) {
      checkpoint_times.emplace(f.name.version, f.entry.modification_time_ms);
      t.latest_ = std::max(t.latest_, f.name.version);
    }
  }
  // A reconstructable version whose commit file is gone is dated by its checkpoint.
  if (!t.file_times_.count(t.earliest_) && checkpoint_times.count(t.earliest_)) {
    t.file_times_[t.earliest_] = checkpoint_times[t.earliest_];
  }
  if (latest_config.in_commit_timestamps) {
    t.ict_since_ = latest_config.in_commit_timestamp_enablement_version.value_or(0);
  }
  return t;
}

arrow::Result<int64_t> CommitTimeline::TimestampOf(int64_t version) const {
  if (ict_since_ && version >= *ict_since_) {
    auto it = commits_.find(version);
    if (it == commits_.end()) {
      return DeltaError(DeltaErrorCode::kVersionNotFound,
                        fmt::format("table {}: commit {} not found", table_root_, version));
    }
    ARROW_ASSIGN_OR_RAISE(auto buf, store_->Read(it->second.path));
    ARROW_ASSIGN_OR_RAISE(auto parsed,
                          ParseActionFile(std::string_view(buf->data_as<char>(), buf->size()),
                                          it->second.path));
    if (!parsed.commit_info || !parsed.commit_info->in_commit_timestamp) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("table {}: commit {} has no inCommitTimestamp although "
                                    "in-commit timestamps are enabled",
                                    table_root_, it->second.path));
    }
    return *parsed.commit_info->in_commit_timestamp;
  }
  auto it = file_times_.find(version);
  if (it == file_times_.end()) {
    return DeltaError(DeltaErrorCode::kVersionNotFound,
                      fmt::format("table {}: commit {} not found", table_root_, version));
  }
  return it->second;
}

arrow::Result<int64_t> CommitTimeline::VersionAt(int64_t ts) const {
  ARROW_ASSIGN_OR_RAISE(int64_t first_ts, TimestampOf(earliest_));
  ARROW_ASSIGN_OR_RAISE(int64_t last_ts, TimestampOf(latest_));
  if (ts < first_ts) {
    return DeltaError(DeltaErrorCode::kTimestampOutOfRange,
                      fmt::format("table {}: timestamp {} ms is before the earliest available "
                                  "version {} ({} ms)",
                                  table_root_, ts, earliest_, first_ts));
  }
  if (ts > last_ts) {
    return DeltaError(DeltaErrorCode::kTimestampOutOfRange,
                      fmt::format("table {}: timestamp {} ms is after the latest version {} "
                                  "({} ms)",
                                  table_root_, ts, latest_, last_ts));
  }
  // Binary search for the last version with timestamp <= ts; timestamps are monotonic.
  int64_t lo = earliest_, hi = latest_;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    ARROW_ASSIGN_OR_RAISE(int64_t mts, TimestampOf(mid));
    if (mts <= ts) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace deltacpp::internal
