#include "util/thread_pools.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

namespace deltacpp::internal {
namespace {

arrow::internal::ThreadPool* FileTaskThreadPool() {
  // MakeEternal: the pool may still be in use while static destructors run at exit.
  static const std::shared_ptr<arrow::internal::ThreadPool> pool = [] {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    auto made = arrow::internal::ThreadPool::MakeEternal(std::max(4, 2 * hw));
    return made.ok() ? *made : nullptr;
  }();
  return pool.get();
}

arrow::Status RunInline(int n, const std::function<arrow::Status(int)>& fn) {
  arrow::Status first;
  for (int i = 0; i < n; ++i) {
    auto st = fn(i);
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

arrow::Status RunOn(arrow::internal::Executor* pool, int n,
                    const std::function<arrow::Status(int)>& fn) {
  std::vector<arrow::Future<>> futures;
  futures.reserve(static_cast<size_t>(n));
  arrow::Status submit_error;
  for (int i = 0; i < n; ++i) {
    auto fut = pool->Submit([&fn, i] { return fn(i); });
    if (!fut.ok()) {
      submit_error = fut.status();
      break;
    }
    futures.push_back(std::move(*fut));
  }
  // Every submitted task refers to `fn`: wait for all of them before returning.
  arrow::Status first;
  for (auto& f : futures) {
    auto st = f.status();
    if (first.ok() && !st.ok()) first = st;
  }
  return first.ok() ? submit_error : first;
}

}  // namespace

arrow::internal::Executor* FileTaskPool() { return FileTaskThreadPool(); }

bool InCpuPool() { return arrow::internal::GetCpuThreadPool()->OwnsThisThread(); }

arrow::Status RunFileTasks(int n, const std::function<arrow::Status(int)>& fn) {
  if (n <= 0) return arrow::Status::OK();
  auto* pool = FileTaskThreadPool();
  if (n == 1 || (pool != nullptr && pool->OwnsThisThread())) return RunInline(n, fn);
  if (pool == nullptr) return arrow::Status::IOError("cannot start the file reading threads");
  return RunOn(pool, n, fn);
}

arrow::Status CpuParallelFor(bool parallel, int n, const std::function<arrow::Status(int)>& fn) {
  if (n <= 0) return arrow::Status::OK();
  if (!parallel || n == 1 || InCpuPool()) return RunInline(n, fn);
  return RunOn(arrow::internal::GetCpuThreadPool(), n, fn);
}

}  // namespace deltacpp::internal
