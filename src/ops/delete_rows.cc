// DELETE: rows matching a predicate leave the table through deletion vectors or rewritten files.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <mutex>

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
    // Files whose every row matches go without being read; the others are read ahead.
    std::vector<size_t> to_read;
    for (size_t i = 0; i < op.candidates.size(); ++i) {
      if (!AllRowsMatchFile(op, op.candidates[i])) {
        to_read.push_back(i);
        continue;
      }
      const auto t = std::chrono::steady_clock::now();
      ARROW_RETURN_NOT_OK(rewriter.RemoveWholeFile(op.candidates[i]));
      rewrite_time += std::chrono::steady_clock::now() - t;
    }
    op.parallelism = parallelism_;
    std::mutex time_mutex;
    return ForEachCandidateInLanes(
        op, to_read, ChooseLanes(op, to_read),
        [&](int lane, size_t, FileRows file) -> arrow::Status {
          ARROW_ASSIGN_OR_RAISE(auto drop, MatchMask(op, *file.rows));
          const auto t = std::chrono::steady_clock::now();
          ARROW_RETURN_NOT_OK(op.rewriter->lane(lane).Delete(file, *drop));
          std::lock_guard lock(time_mutex);
          rewrite_time += std::chrono::steady_clock::now() - t;
          return arrow::Status::OK();
        });
  };
  ARROW_ASSIGN_OR_RAISE(auto outcome, FinishRewrite(op, run(), &rewrite_time));
  metrics.num_deleted_rows = outcome.deleted_rows;
  metrics.num_removed_files = outcome.removed_files;
  SetSharedRewriteMetrics(outcome, rewrite_time, start, &metrics);
  ARROW_ASSIGN_OR_RAISE(
      metrics.version,
      CommitUnlessUnchanged(op, std::move(outcome),
                            {{"predicate", JsonStringArray({predicate_.value_or("true")})}},
                            metrics.Named()));
  return metrics;
}

}  // namespace deltacpp
