// Which thread pool runs which work, so that no read can deadlock.
//
// Three pools, and a fixed order of who may wait on whom: a caller may wait on the file task
// pool, a file task on Arrow's CPU pool, a CPU task on Arrow's I/O pool; no pool ever waits on
// itself or on one before it. A task that waits for work queued behind it on its own pool
// deadlocks as soon as every thread of that pool runs such a task (eight checkpoint parts on
// the eight-thread I/O pool, each waiting for its own pre-buffered reads, did exactly that).
// Callers may themselves be threads of the CPU pool (an Acero node, a pyarrow callback): work
// they start never uses the CPU pool again (InCpuPool() tells).
#pragma once

#include <arrow/status.h>
#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>

#include <functional>

namespace deltacpp::internal {

/// Process-wide pool for tasks that each read one whole file (checkpoint parts, sidecars, data
/// files with their deletion vectors). Such a task blocks on the I/O pool (pre-buffered column
/// chunks) and may block on the CPU pool (column decoding), so it runs on neither. Capacity:
/// twice the hardware threads, at least 4, since tasks spend much of their time waiting for
/// reads; how many files are in flight at once is bounded by each caller. Null only when the
/// threads cannot be started.
arrow::internal::Executor* FileTaskPool();

/// True when the calling thread belongs to Arrow's CPU pool.
bool InCpuPool();

/// Runs `fn(0) .. fn(n-1)` as file tasks and waits for all of them; returns the first error in
/// index order. Runs them inline, one after the other, when `n == 1` or when the caller is
/// itself a file task.
arrow::Status RunFileTasks(int n, const std::function<arrow::Status(int)>& fn);

/// Runs `fn(0) .. fn(n-1)` on the CPU pool when `parallel` and waits; inline when not, or when
/// the caller is a CPU pool thread. Returns the first error in index order.
arrow::Status CpuParallelFor(bool parallel, int n, const std::function<arrow::Status(int)>& fn);

}  // namespace deltacpp::internal
