// The micro-batch loop: plan (offset written), read, transform, sink (txn = query id, batch
// id), mark (commit written); a planned batch without its mark runs again with its offsets.
#include "deltacpp/stream/stream_query.h"

#include <fmt/core.h>

#include <thread>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "stream/checkpoint_dir.h"

namespace deltacpp {

using internal::CheckpointDir;

namespace {

using Clock = std::chrono::steady_clock;

bool Stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

// Sleeps until `until` or until the stop flag is set.
void SleepUntil(Clock::time_point until, const std::atomic<bool>* stop) {
  while (!Stopped(stop) && Clock::now() < until) {
    std::this_thread::sleep_for(
        std::min<Clock::duration>(std::chrono::milliseconds(50), until - Clock::now()));
  }
}

bool Retryable(const arrow::Status& st) {
  for (auto code : {DeltaErrorCode::kConcurrentAppend, DeltaErrorCode::kConcurrentDeleteRead,
                    DeltaErrorCode::kConcurrentDeleteDelete, DeltaErrorCode::kConcurrentTransaction,
                    DeltaErrorCode::kMetadataChanged}) {
    if (IsDeltaError(st, code)) return true;
  }
  return false;
}

}  // namespace

WriteOptions IdempotentWrite(const std::string& app_id, int64_t batch_id, WriteOptions options) {
  options.txn_app_id = app_id;
  options.txn_version = batch_id;
  return options;
}

arrow::Result<StreamRunResult> StreamQueryBuilder::Run() const {
  if (!source_) return DeltaError(DeltaErrorCode::kInvalidArgument, "a stream needs a source");
  if (!sink_ && !foreach_batch_) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "a stream needs a sink (a Delta table or foreachBatch)");
  }
  if (checkpoint_.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "a stream needs a checkpoint directory");
  }
  if (trigger_.kind == Trigger::Kind::kProcessingTime && trigger_.interval.count() <= 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "a processing-time trigger needs an interval above 0");
  }
  if (sink_ && sink_->mode == OutputMode::kUpdate) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("a Delta sink ({}) takes output mode append or complete; "
                                  "for updates, merge each batch in foreachBatch",
                                  sink_->location));
  }
  Initialize();
  ARROW_ASSIGN_OR_RAISE(auto ckpt, CheckpointDir::Open(checkpoint_));
  ARROW_RETURN_NOT_OK(source_->Open(ckpt->source_state_dir()));
  // One handle for the run: each batch reads only the sink's commits made since the last.
  std::shared_ptr<DeltaTable> sink_table;
  if (sink_) {
    ARROW_ASSIGN_OR_RAISE(sink_table, DeltaTable::Locate(sink_->location));
  }
  StreamRunResult result;
  result.query_id = ckpt->query_id();
  result.last_batch_id = ckpt->LatestCommit();

  auto run_batch = [&](int64_t id, const std::optional<std::string>& start,
                       const std::string& end, bool replayed) -> arrow::Status {
    const auto t0 = Clock::now();
    BatchReport report;
    report.batch_id = id;
    report.replayed = replayed;
    ARROW_ASSIGN_OR_RAISE(auto reader, source_->ReadBatch(id, start, end));
    ARROW_ASSIGN_OR_RAISE(auto rows, reader->ToTable());
    report.rejected_records = source_->rejected_records();
    if (transform_) {
      ARROW_ASSIGN_OR_RAISE(rows, transform_(rows));
    }
    report.rows = rows->num_rows();
    if (foreach_batch_) ARROW_RETURN_NOT_OK(foreach_batch_(rows, id));
    if (sink_) {
      WriteOptions write;
      write.mode = sink_->mode == OutputMode::kAppend ? WriteMode::kAppend : WriteMode::kOverwrite;
      write.partition_by = sink_->partition_by;
      write.merge_schema = sink_->merge_schema;
      write.properties = sink_->properties;
      write.transaction = sink_->transaction;
      write.streaming_batch = WriteOptions::StreamingBatch{
          sink_->mode == OutputMode::kAppend ? "Append" : "Complete", result.query_id, id};
      write = IdempotentWrite(result.query_id, id, std::move(write));
      arrow::Result<WriteResult> written;
      for (int attempt = 0;; ++attempt) {
        written = WriteTable(sink_table, rows, write);
        if (written.ok() || attempt == 2 || !Retryable(written.status())) break;
      }
      if (!written.ok()) {
        return written.status().WithMessage(
            fmt::format("batch {} of query {} into {}: {}", id, result.query_id,
                        sink_->location, written.status().message()));
      }
      report.skipped_by_sink = written->skipped;
      report.sink_version = written->version;
    }
    ARROW_RETURN_NOT_OK(ckpt->WriteCommit(id));
    report.backlog = source_->Backlog(end);
    report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
    ++result.batches;
    result.rows += report.rows;
    result.last_batch_id = id;
    if (on_batch_) on_batch_(report);
    return arrow::Status::OK();
  };

  std::optional<std::string> previous_end;
  int64_t next_id = 0;
  if (auto latest = ckpt->LatestOffset()) {
    const auto [id, end] = *latest;
    const auto committed = ckpt->LatestCommit();
    if (!committed || *committed < id) {
      std::optional<std::string> start;
      if (id > 0) {
        ARROW_ASSIGN_OR_RAISE(start, ckpt->OffsetOf(id - 1));
        if (!start) {
          return DeltaError(DeltaErrorCode::kCorruptLog,
                            fmt::format("streaming checkpoint {}: batch {} is planned but the "
                                        "offset of batch {} is missing",
                                        checkpoint_, id, id - 1));
        }
      }
      ARROW_RETURN_NOT_OK(run_batch(id, start, end, /*replayed=*/true));
      if (trigger_.kind == Trigger::Kind::kOnce) return result;
    }
    previous_end = end;
    next_id = id + 1;
  }
  if (trigger_.kind == Trigger::Kind::kAvailableNow) {
    ARROW_RETURN_NOT_OK(source_->LimitToAvailableNow());
  }
  while (!Stopped(stop_)) {
    const auto started = Clock::now();
    ARROW_ASSIGN_OR_RAISE(
        auto end, source_->PlanBatch(next_id, previous_end, trigger_.kind == Trigger::Kind::kOnce));
    if (end) {
      ARROW_RETURN_NOT_OK(ckpt->WriteOffset(next_id, *end));
      ARROW_RETURN_NOT_OK(run_batch(next_id, previous_end, *end, /*replayed=*/false));
      previous_end = std::move(end);
      ++next_id;
    }
    if (trigger_.kind == Trigger::Kind::kOnce) break;
    if (trigger_.kind == Trigger::Kind::kAvailableNow) {
      if (!end) break;
      continue;
    }
    SleepUntil(started + trigger_.interval, stop_);
  }
  return result;
}

}  // namespace deltacpp
