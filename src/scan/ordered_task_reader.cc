#include "scan/ordered_task_reader.h"

#include <algorithm>
#include <utility>

#include "util/thread_pools.h"

namespace deltacpp::internal {

OrderedTaskReader::OrderedTaskReader(std::shared_ptr<arrow::Schema> schema, size_t num_tasks,
                                     int parallelism, Task task)
    : schema_(std::move(schema)),
      num_tasks_(num_tasks),
      parallelism_(static_cast<size_t>(std::max(parallelism, 1))),
      task_(std::move(task)) {}

OrderedTaskReader::~OrderedTaskReader() { (void)Close(); }

arrow::Status OrderedTaskReader::ReadNext(std::shared_ptr<arrow::RecordBatch>* out) {
  while (true) {
    if (pos_in_current_ < current_.size()) {
      // Handed over, not kept: a consumed batch's memory goes back as soon as the caller drops
      // it, instead of living until the whole task's output is consumed.
      *out = std::move(current_[pos_in_current_++]);
      return arrow::Status::OK();
    }
    Fill();
    if (pending_.empty()) {
      *out = nullptr;
      return arrow::Status::OK();
    }
    auto fut = std::move(pending_.front());
    pending_.pop_front();
    auto result = fut.result();
    if (!result.ok()) {
      for (auto& f : pending_) f.Wait();
      pending_.clear();
      next_task_ = num_tasks_;
      return result.status();
    }
    current_ = std::move(*result);
    pos_in_current_ = 0;
    Fill();
  }
}

arrow::Status OrderedTaskReader::Close() {
  for (auto& f : pending_) f.Wait();
  pending_.clear();
  return arrow::Status::OK();
}

void OrderedTaskReader::Fill() {
  // Not the CPU pool: a consumer may itself run on it (an Acero node, say) and wait here.
  auto* pool = FileTaskPool();
  if (pool == nullptr) {
    pending_.push_back(arrow::Future<Batches>::MakeFinished(
        arrow::Status::IOError("cannot start the file reading threads")));
    next_task_ = num_tasks_;
    return;
  }
  while (pending_.size() < parallelism_ && next_task_ < num_tasks_) {
    const size_t i = next_task_++;
    // The task is copied into the closure: the reader may be dropped while it runs.
    auto fut = pool->Submit([task = task_, i]() -> arrow::Result<Batches> { return task(i); });
    pending_.push_back(fut.ok() ? std::move(*fut)
                                : arrow::Future<Batches>::MakeFinished(fut.status()));
  }
}

}  // namespace deltacpp::internal
