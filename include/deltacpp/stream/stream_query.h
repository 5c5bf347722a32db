// Streaming queries: a source read in micro-batches, an optional transform, and a sink (a Delta
// table or a callback), with a checkpoint directory that makes every batch take effect once.
#pragma once

#include <arrow/api.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/ops/write.h"

namespace deltacpp {

/// When micro-batches run.
struct Trigger {
  enum class Kind {
    kOnce,            ///< one batch of everything available (rate limits ignored), then stop
    kAvailableNow,    ///< batches (rate limits respected) until everything available is done
    kProcessingTime,  ///< a batch every `interval` until stopped (none when nothing is new)
  };
  Kind kind = Kind::kAvailableNow;
  std::chrono::milliseconds interval{0};

  static Trigger Once() { return {Kind::kOnce, {}}; }
  static Trigger AvailableNow() { return {Kind::kAvailableNow, {}}; }
  static Trigger ProcessingTime(std::chrono::milliseconds every) {
    return {Kind::kProcessingTime, every};
  }
};

/// Rate limits of a source, per batch. A batch takes at least one file (or commit) even when
/// that alone exceeds them.
struct ReadLimits {
  std::optional<int64_t> max_files;  ///< nullopt: the source's default (1000 for files)
  std::optional<int64_t> max_bytes;
};

/// Where a batch's rows come from. Implementations are deterministic: a batch planned once
/// reads the same rows however often it is replayed (after a crash).
class StreamSource {
 public:
  virtual ~StreamSource() = default;
  /// The rows' schema.
  virtual std::shared_ptr<arrow::Schema> schema() const = 0;
  /// Called once when the query starts, with a directory of the checkpoint that is the
  /// source's own (for what it must remember between runs).
  virtual arrow::Status Open(const std::string& state_dir) = 0;
  /// Plans batch `batch_id` starting after `start` (nullopt: the first batch): the end offset
  /// as JSON text, or nullopt when there is nothing new. `unlimited` ignores the rate limits
  /// (Trigger::Once). Planning batch_id again (after a crash) gives the same end.
  virtual arrow::Result<std::optional<std::string>> PlanBatch(
      int64_t batch_id, const std::optional<std::string>& start, bool unlimited) = 0;
  /// The rows of batch `batch_id`, from `start` (exclusive) to `end` (inclusive).
  virtual arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReadBatch(
      int64_t batch_id, const std::optional<std::string>& start, const std::string& end) = 0;
  /// Trigger::AvailableNow: from now on, plan only what is available at this moment (data
  /// arriving later waits for the next run).
  virtual arrow::Status LimitToAvailableNow() = 0;
  /// What is left to read after `end` (files, bytes or versions, as the source counts), for
  /// the status line; nullopt when not known.
  virtual std::optional<int64_t> Backlog(const std::optional<std::string>& end) {
    (void)end;
    return std::nullopt;
  }
  /// Records the source set aside in the batch just read (malformed input dropped or routed).
  virtual int64_t rejected_records() const { return 0; }
};

/// How a Delta sink takes each batch.
enum class OutputMode {
  kAppend,    ///< the batch's rows are appended
  kComplete,  ///< the batch's rows replace the table's (one overwrite commit per batch)
  /// Not for a Delta sink (as in delta-spark): upserts of each batch go through
  /// ForeachBatch with MergeBuilder::Txn. A Delta sink in this mode is InvalidArgument.
  kUpdate,
};

/// A Delta table receiving the batches. Every batch commits with txn(appId = the query's id,
/// version = the batch id), so a batch replayed after a crash is skipped, not written twice.
struct DeltaSinkOptions {
  std::string location;
  OutputMode mode = OutputMode::kAppend;
  std::vector<std::string> partition_by;  ///< when the sink creates the table
  bool merge_schema = false;
  std::map<std::string, std::string> properties;  ///< when the sink creates the table
  TransactionOptions transaction;
};

/// One batch as the query ran it.
struct BatchReport {
  int64_t batch_id = 0;
  int64_t rows = 0;                    ///< rows the sink received
  int64_t rejected_records = 0;        ///< malformed input the source set aside
  bool replayed = false;               ///< planned by an earlier run that did not finish it
  bool skipped_by_sink = false;        ///< the sink had it already (txn recorded)
  std::optional<int64_t> sink_version; ///< the Delta sink's commit
  std::optional<int64_t> backlog;      ///< Backlog() after this batch
  std::chrono::milliseconds duration{0};
};

/// What a run did.
struct StreamRunResult {
  std::string query_id;
  int64_t batches = 0;  ///< batches run (replays included)
  int64_t rows = 0;
  std::optional<int64_t> last_batch_id;  ///< last committed batch id
};

/// The callback of foreachBatch: the batch's rows and its id. A batch can be delivered again
/// after a crash (before its commit was recorded): effects outside Delta are at-least-once;
/// Delta writes made with IdempotentWrite(query_id, batch_id) take effect once.
using ForeachBatchFn =
    std::function<arrow::Status(const std::shared_ptr<arrow::Table>& rows, int64_t batch_id)>;

/// A streaming query: `StreamQueryBuilder().Source(src).Sink({.location = "/t"})
///   .Checkpoint("/ckpt").Trigger(Trigger::AvailableNow()).Run()`.
///
/// The checkpoint directory holds the query id (`metadata`), the end offset of each planned
/// batch (`offsets/N`), a marker per finished batch (`commits/N`) and the source's state
/// (`sources/0/`). A batch is planned (its offset written) before it runs and marked after
/// the sink took it; a run finds a planned but unmarked batch and runs it again with the same
/// offsets. The directory is locked while a query runs: a second query on it fails with
/// InvalidArgument. It is not part of the table: deleting it starts the query afresh (a new
/// id, every input read again). The last 100 batches' entries are kept.
class StreamQueryBuilder {
 public:
  StreamQueryBuilder& Source(std::shared_ptr<StreamSource> source) {
    source_ = std::move(source);
    return *this;
  }
  /// Applied to every batch between source and sink.
  StreamQueryBuilder& Transform(
      std::function<arrow::Result<std::shared_ptr<arrow::Table>>(std::shared_ptr<arrow::Table>)>
          fn) {
    transform_ = std::move(fn);
    return *this;
  }
  StreamQueryBuilder& Sink(DeltaSinkOptions sink) {
    sink_ = std::move(sink);
    return *this;
  }
  StreamQueryBuilder& ForeachBatch(ForeachBatchFn fn) {
    foreach_batch_ = std::move(fn);
    return *this;
  }
  StreamQueryBuilder& Checkpoint(std::string dir) {
    checkpoint_ = std::move(dir);
    return *this;
  }
  StreamQueryBuilder& Trigger(deltacpp::Trigger trigger) {
    trigger_ = trigger;
    return *this;
  }
  /// Called after every batch, on the query's thread.
  StreamQueryBuilder& OnBatch(std::function<void(const BatchReport&)> fn) {
    on_batch_ = std::move(fn);
    return *this;
  }
  /// Set to true (from any thread or a signal handler) to stop after the batch in progress.
  StreamQueryBuilder& StopFlag(const std::atomic<bool>* stop) {
    stop_ = stop;
    return *this;
  }
  /// Runs until the trigger is done or the stop flag is set. Errors: the source's, the sink's
  /// (the batch stays planned and runs again next time), InvalidArgument for a query without a
  /// source, sink or checkpoint, or whose checkpoint another query holds.
  arrow::Result<StreamRunResult> Run() const;

 private:
  std::shared_ptr<StreamSource> source_;
  std::function<arrow::Result<std::shared_ptr<arrow::Table>>(std::shared_ptr<arrow::Table>)>
      transform_;
  std::optional<DeltaSinkOptions> sink_;
  ForeachBatchFn foreach_batch_;
  std::string checkpoint_;
  deltacpp::Trigger trigger_;
  std::function<void(const BatchReport&)> on_batch_;
  const std::atomic<bool>* stop_ = nullptr;
};

/// Write options for a Delta write inside foreachBatch that takes effect once per batch:
/// txn(app_id, batch_id) is committed with it and a replay of the batch skips it.
WriteOptions IdempotentWrite(const std::string& app_id, int64_t batch_id,
                             WriteOptions options = {});

}  // namespace deltacpp
