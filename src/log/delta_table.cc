#include <fmt/core.h>
#include <simdjson.h>

#include <mutex>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "deltacpp/table.h"
#include "log/commit_parser.h"
#include "log/commit_timeline.h"
#include "log/file_action_schema.h"
#include "log/log_file_name.h"
#include "log/log_segment.h"
#include "log/replay.h"
#include "protocol/table_features.h"
#include "util/thread_pools.h"

namespace deltacpp {

using internal::BuildLogSegment;
using internal::CommitTimeline;
using internal::CpuParallelFor;
using internal::ReplayLogSegment;

arrow::Result<std::shared_ptr<DeltaTable>> DeltaTable::Open(std::string_view location) {
  ARROW_ASSIGN_OR_RAISE(auto resolved, ResolveTableLocation(location));
  return Open(std::move(resolved.first), std::move(resolved.second));
}

arrow::Result<std::shared_ptr<DeltaTable>> DeltaTable::Locate(std::string_view location) {
  Initialize();
  ARROW_ASSIGN_OR_RAISE(auto resolved, ResolveTableLocation(location));
  return std::shared_ptr<DeltaTable>(
      new DeltaTable(std::move(resolved.first), std::move(resolved.second)));
}

arrow::Result<bool> DeltaTable::Exists() const {
  // A valid `_last_checkpoint` lets the listing start at its version: log files from there on
  // mean a table, and a long log is not listed (and stat'ed) whole.
  ARROW_ASSIGN_OR_RAISE(auto hint,
                        internal::ReadLastCheckpointHint(*store_, internal::LogDir(root_)));
  if (hint) {
    ARROW_ASSIGN_OR_RAISE(auto files,
                          internal::ListLogFiles(*store_, root_, internal::VersionPrefix(*hint)));
    if (!files.empty()) return true;
  }
  ARROW_ASSIGN_OR_RAISE(auto files, internal::ListLogFiles(*store_, root_));
  return !files.empty();
}

arrow::Result<std::shared_ptr<DeltaTable>> DeltaTable::Open(std::string table_root,
                                                            std::shared_ptr<LogStore> store) {
  Initialize();
  std::shared_ptr<DeltaTable> table(new DeltaTable(std::move(table_root), std::move(store)));
  ARROW_ASSIGN_OR_RAISE(bool exists, table->Exists());
  if (!exists) {
    return DeltaError(DeltaErrorCode::kTableNotFound,
                      fmt::format("{} is not a Delta table: no _delta_log with commits",
                                  table->root()));
  }
  return table;
}

arrow::Result<std::shared_ptr<Snapshot>> DeltaTable::Latest() const {
  std::shared_ptr<Snapshot> cached;
  {
    std::lock_guard<std::mutex> lock(latest_mutex_);
    cached = latest_;
  }
  if (cached) {
    if (auto updated = UpdatedFrom(cached)) {
      RememberLatest(updated);
      return updated;
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto loaded, SnapshotAt(std::nullopt));
  RememberLatest(loaded);
  return loaded;
}

std::shared_ptr<Snapshot> DeltaTable::UpdatedFrom(const std::shared_ptr<Snapshot>& cached) const {
  // Commits are written in version order with put-if-absent, so the new ones are base+1, base+2,
  // ... up to the first missing one. Asking for them one by one costs a stat each, where a
  // listing would read the whole (possibly long) `_delta_log` directory.
  const std::string log_dir = internal::LogDir(root_);
  std::vector<internal::LogFile> commits;
  for (int64_t version = cached->version() + 1;; ++version) {
    const std::string name = internal::CommitFileName(version);
    auto entry = store_->Stat(log_dir + "/" + name);
    if (!entry.ok()) {
      if (IsDeltaError(entry.status(), DeltaErrorCode::kMissingFile)) break;
      return nullptr;
    }
    commits.push_back(internal::LogFile{std::move(*entry), *internal::ParseLogFileName(name)});
  }
  if (commits.empty()) return cached;
  // Anything unexpected (a commit that does not parse) is left to a full load, which reports it
  // with the usual errors.
  auto state = internal::ReplayCommitsOnto(cached->state(), commits);
  if (!state.ok()) return nullptr;
  return std::make_shared<Snapshot>(std::move(*state));
}

void DeltaTable::RememberLatest(const std::shared_ptr<Snapshot>& snapshot) const {
  std::lock_guard<std::mutex> lock(latest_mutex_);
  if (!latest_ || latest_->version() < snapshot->version()) latest_ = snapshot;
}

arrow::Result<std::shared_ptr<Snapshot>> DeltaTable::SnapshotAt(
    std::optional<int64_t> version) const {
  ARROW_ASSIGN_OR_RAISE(auto segment, BuildLogSegment(*store_, root_, version));
  ARROW_ASSIGN_OR_RAISE(auto state, ReplayLogSegment(store_, segment));
  return std::make_shared<Snapshot>(std::move(state));
}

arrow::Result<int64_t> DeltaTable::VersionAtTimestamp(int64_t timestamp_ms) const {
  ARROW_ASSIGN_OR_RAISE(auto latest, Latest());
  ARROW_ASSIGN_OR_RAISE(auto timeline, CommitTimeline::Load(store_, root_, latest->config()));
  return timeline.VersionAt(timestamp_ms);
}

arrow::Result<std::shared_ptr<Snapshot>> DeltaTable::SnapshotAtTimestamp(
    int64_t timestamp_ms) const {
  ARROW_ASSIGN_OR_RAISE(int64_t version, VersionAtTimestamp(timestamp_ms));
  return SnapshotAt(version);
}

namespace {

std::string MemberJson(const std::string& commit_info_json, const char* key) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(commit_info_json).get(doc)) return "{}";
  simdjson::dom::element member;
  if (doc[key].get(member)) return "{}";
  return simdjson::minify(member);
}

}  // namespace

arrow::Result<std::vector<HistoryEntry>> DeltaTable::History(std::optional<int64_t> limit) const {
  ARROW_ASSIGN_OR_RAISE(auto latest, Latest());
  ARROW_ASSIGN_OR_RAISE(auto timeline, CommitTimeline::Load(store_, root_, latest->config()));
  // The timeline has listed the log already; newest commits first.
  std::vector<std::pair<int64_t, FileEntry>> commits;
  for (auto it = timeline.commits().rbegin(); it != timeline.commits().rend(); ++it) {
    if (limit && static_cast<int64_t>(commits.size()) >= *limit) break;
    commits.emplace_back(it->first, it->second);
  }
  std::vector<HistoryEntry> out(commits.size());
  std::vector<arrow::Status> statuses(commits.size());
  auto load = [&](int i) {
    auto& e = out[i];
    e.version = commits[i].first;
    e.operation_parameters = "{}";
    e.operation_metrics = "{}";
    e.commit_info_json = "{}";
    auto buf = store_->Read(commits[i].second.path);
    if (!buf.ok()) {
      statuses[i] = buf.status();
      return arrow::Status::OK();
    }
    auto parsed = internal::ParseActionFile(
        std::string_view((*buf)->data_as<char>(), (*buf)->size()),
        fmt::format("table {}: commit {}", root_, commits[i].second.path));
    if (!parsed.ok()) {
      statuses[i] = parsed.status();
      return arrow::Status::OK();
    }
    if (parsed->commit_info) {
      e.operation = parsed->commit_info->operation;
      e.commit_info_json = parsed->commit_info->raw_json;
      e.operation_parameters = MemberJson(e.commit_info_json, "operationParameters");
      e.operation_metrics = MemberJson(e.commit_info_json, "operationMetrics");
    }
    // The commit was just parsed: take its in-commit timestamp from it instead of reading the
    // file again.
    if (timeline.UsesInCommitTimestamp(e.version) && parsed->commit_info &&
        parsed->commit_info->in_commit_timestamp) {
      e.timestamp_ms = *parsed->commit_info->in_commit_timestamp;
    } else {
      auto ts = timeline.TimestampOf(e.version);
      e.timestamp_ms = ts.ok() ? *ts : commits[i].second.modification_time_ms;
    }
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(CpuParallelFor(commits.size() > 4,
                                                           static_cast<int>(commits.size()), load));
  for (auto& st : statuses) ARROW_RETURN_NOT_OK(st);
  return out;
}

int64_t Snapshot::total_size_bytes() const { return state_.files.total_size_bytes(); }

struct Snapshot::FilesBatch {
  std::once_flag once;
  std::shared_ptr<arrow::RecordBatch> batch;
};

Snapshot::Snapshot(State state)
    : state_(std::move(state)), files_batch_(std::make_unique<FilesBatch>()) {}

Snapshot::~Snapshot() = default;

const std::shared_ptr<arrow::RecordBatch>& Snapshot::files() const {
  std::call_once(files_batch_->once, [&] {
    // Only a failed allocation fails here; the batch then stays null rather than partial.
    auto batch = state_.files.ToBatch();
    if (batch.ok()) files_batch_->batch = std::move(*batch);
  });
  return files_batch_->batch;
}

std::optional<int64_t> Snapshot::txn_version(const std::string& app_id) const {
  auto it = state_.txns.find(app_id);
  if (it == state_.txns.end()) return std::nullopt;
  return it->second.version;
}

std::vector<std::string> Snapshot::table_features() const {
  return internal::EffectiveFeatures(state_.protocol);
}

}  // namespace deltacpp

#include "util/temporal.h"

namespace deltacpp {

arrow::Result<int64_t> ParseTimestampMicros(std::string_view text) {
  auto ts = internal::ParseTimestamp(text);
  if (!ts) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("'{}' is not an ISO-8601 timestamp (e.g. 2024-01-15T10:00:00Z)",
                                  text));
  }
  return ts->micros;
}

arrow::Result<int64_t> ParseTimestampMillis(std::string_view text) {
  ARROW_ASSIGN_OR_RAISE(int64_t us, ParseTimestampMicros(text));
  // Floor division keeps pre-1970 instants correct.
  return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

}  // namespace deltacpp
