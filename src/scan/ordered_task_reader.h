// A record batch reader over numbered tasks that each produce batches: the tasks run on the file
// task pool, a bounded number ahead, and their batches come out in task order.
#pragma once

#include <arrow/api.h>
#include <arrow/util/future.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace deltacpp::internal {

class OrderedTaskReader : public arrow::RecordBatchReader {
 public:
  using Batches = std::vector<std::shared_ptr<arrow::RecordBatch>>;
  /// Produces the batches of task `index`; called on the file task pool, so it may wait for
  /// Arrow's CPU and I/O pools (never for the file task pool).
  using Task = std::function<arrow::Result<Batches>(size_t index)>;

  /// `num_tasks` tasks, at most `parallelism` (at least 1) of them queued or running at once.
  OrderedTaskReader(std::shared_ptr<arrow::Schema> schema, size_t num_tasks, int parallelism,
                    Task task);
  ~OrderedTaskReader() override;

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  /// The next batch in task order; the first failing task's error (after the tasks under way
  /// have finished, so nothing outlives the reader), then the end.
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override;
  /// Waits for the tasks under way.
  arrow::Status Close() override;

 private:
  void Fill();

  std::shared_ptr<arrow::Schema> schema_;
  size_t num_tasks_;
  size_t parallelism_;
  Task task_;
  std::deque<arrow::Future<Batches>> pending_;
  size_t next_task_ = 0;
  Batches current_;
  size_t pos_in_current_ = 0;
};

}  // namespace deltacpp::internal
