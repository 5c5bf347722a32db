// DELETE: rows matching a predicate leave the table through deletion vectors or rewritten files.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "deltacpp/error.h"
#include "deltacpp/ops/delete.h"
#include "ops/op_util.h"
#include "ops/row_level_op.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

std::vector<std::pair<std::string, int64_t>> DeleteMetrics::Named() const {
  return {
      {"numDeletedRows", num_deleted_rows},
      {"numRemovedFiles", num_removed_files},
      {"numAddedFiles", num_added_files},
      {"numCopiedRows", num_copied_rows},
      {"numDeletionVectorsAdded", num_deletion_vectors_added},
      {"numDeletionVectorsRemoved", num_deletion_vectors_removed},
      {"numDeletionVectorsUpdated", num_deletion_vectors_updated},
      {"numAddedChangeFiles", num_added_change_files},
      {"numRemovedBytes", num_removed_bytes},
      {"numAddedBytes", num_added_bytes},
      {"executionTimeMs", execution_time_ms},
      {"scanTimeMs", scan_time_ms},
      {"rewriteTimeMs", rewrite_time_ms},
  };
}

arrow::Result<DeleteMetrics> DeleteBuilder::Execute() const {
  const auto start = std::chrono::steady_clock::now();
  ARROW_ASSIGN_OR_RAISE(auto op, StartRowLevelOperation(table_, location_, "DELETE", predicate_,
                                                        options_));
  DeleteMetrics metrics;
  auto& rewriter = *op.rewriter;
  std::chrono::steady_clock::duration rewrite_time{};
  auto run = [&]() -> arrow::Status {
    for (int64_t file_row : op.candidates) {
      // Files whose every row matches go without being read.
      if (AllRowsMatchFile(op, file_row)) {
        const auto t = std::chrono::steady_clock::now();
        ARROW_RETURN_NOT_OK(rewriter.RemoveWholeFile(file_row));
        rewrite_time += std::chrono::steady_clock::now() - t;
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto file, rewriter.Read(file_row));
      ARROW_ASSIGN_OR_RAISE(auto drop, MatchMask(op, *file.rows));
      const auto t = std::chrono::steady_clock::now();
      ARROW_RETURN_NOT_OK(rewriter.Delete(file, *drop));
      rewrite_time += std::chrono::steady_clock::now() - t;
    }
    return arrow::Status::OK();
  };
  auto st = run();
  if (!st.ok()) {
    (void)rewriter.Abort();
    return st;
  }
  const auto finish_start = std::chrono::steady_clock::now();
  auto finished = rewriter.Finish();
  if (!finished.ok()) {
    (void)rewriter.Abort();
    return finished.status();
  }
  rewrite_time += std::chrono::steady_clock::now() - finish_start;
  auto outcome = std::move(*finished);
  metrics.num_deleted_rows = outcome.deleted_rows;
  metrics.num_removed_files = outcome.removed_files;
  metrics.num_added_files = outcome.added_files;
  metrics.num_copied_rows = outcome.copied_rows;
  metrics.num_deletion_vectors_added = outcome.deletion_vectors_added;
  metrics.num_deletion_vectors_removed = outcome.deletion_vectors_removed;
  metrics.num_deletion_vectors_updated = outcome.deletion_vectors_updated;
  metrics.num_added_change_files = static_cast<int64_t>(outcome.change_files.size());
  metrics.num_removed_bytes = outcome.removed_bytes;
  metrics.num_added_bytes = outcome.added_bytes;
  metrics.rewrite_time_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(rewrite_time).count();
  metrics.execution_time_ms = MillisSince(start);
  metrics.scan_time_ms = std::max<int64_t>(0, metrics.execution_time_ms - metrics.rewrite_time_ms);
  // As delta-spark: a DELETE that changes nothing commits nothing.
  if (outcome.removes.empty() && outcome.adds.empty()) {
    (void)rewriter.Abort();
    return metrics;
  }
  std::map<std::string, std::string> named;
  for (const auto& [name, value] : metrics.Named()) named[name] = std::to_string(value);
  ARROW_ASSIGN_OR_RAISE(
      metrics.version,
      CommitRowLevelOperation(op, std::move(outcome),
                              {{"predicate", JsonStringArray({predicate_.value_or("true")})}},
                              named));
  return metrics;
}

}  // namespace deltacpp
