// What DELETE and UPDATE share: the snapshot and transaction they run in, the rewriter of the
// changed files, the files their condition may touch, and the commit of the outcome.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/expression.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/table.h"
#include "deltacpp/transaction.h"
#include "expr/bound_expr.h"
#include "write/row_rewriter.h"

namespace deltacpp::internal {

/// One row-level operation under way.
struct RowLevelOperation {
  std::shared_ptr<DeltaTable> table;
  std::shared_ptr<const Snapshot> snapshot;
  std::unique_ptr<Transaction> txn;
  std::unique_ptr<RowRewriter> rewriter;
  /// "DELETE" or "UPDATE".
  std::string name;
  /// The condition as given; nullopt: every row.
  std::optional<std::string> predicate;
  /// The condition bound to the snapshot's schema.
  std::optional<BoundExpr> bound;
  /// TRUE exactly where the condition is TRUE (NULL gives false), bound to the schema.
  std::optional<arrow::compute::Expression> match;
  /// Live files (Snapshot::live_files()) that may hold a matching row, in file order.
  std::vector<FileRef> candidates;
  /// The candidates whose partition values and statistics prove the condition TRUE for every
  /// row, ascending.
  std::vector<FileRef> all_rows_match;
  /// Log paths of the candidates (what the operation reads, for conflict detection).
  std::vector<std::string> candidate_paths;
  /// Files read and changed at once (0: chosen by ChooseLanes).
  int parallelism = 0;
};

/// Opens the table (`table`, else `location`), checks the predicate text, starts the
/// transaction (row-level writer duties listed as enforced: `enforced_features`), binds the
/// condition, plans the candidate files (partition pruning and statistics skipping) and makes
/// the rewriter: deletion vectors when the table enables them and its protocol supports them,
/// copy-on-write otherwise. Records the predicate (or the whole table) as read. `write_schema`
/// (null: the snapshot's) is the schema the rewriter reads and writes rows in.
arrow::Result<RowLevelOperation> StartRowLevelOperation(
    std::shared_ptr<DeltaTable> table, const std::string& location, std::string name,
    const std::optional<std::string>& predicate, TransactionOptions options,
    std::shared_ptr<arrow::Schema> write_schema = nullptr);

/// True when the partition values and statistics of candidate `file` prove the condition TRUE
/// for every row (always true without a condition).
bool AllRowsMatchFile(const RowLevelOperation& op, FileRef file);

/// Where the condition is TRUE for `rows` (in the snapshot's schema); all true without one.
arrow::Result<std::shared_ptr<arrow::BooleanArray>> MatchMask(const RowLevelOperation& op,
                                                              const arrow::RecordBatch& rows);

/// Stages the outcome (removes, adds, cdc files; the row-tracking tag when rows moved to new
/// files), records the touched files as read and commits with `parameters` and `metrics`. The
/// rewriter's files are deleted when the commit fails (unless its outcome is unknown).
arrow::Result<int64_t> CommitRowLevelOperation(RowLevelOperation& op, RewriteOutcome outcome,
                                               const std::map<std::string, std::string>& parameters,
                                               const std::map<std::string, std::string>& metrics);

/// Reads the candidates `candidate_indexes` (positions in `op.candidates`) in that order and
/// calls `each(index, rows)` for each. The next file is read on a thread of its own while
/// `each` handles the current one, so decoding overlaps rewriting; at most two files' rows are
/// in memory at once. The first error (a read's or `each`'s) stops the loop and is returned,
/// after the read under way has finished.
arrow::Status ForEachCandidateRead(
    const RowLevelOperation& op, const std::vector<size_t>& candidate_indexes,
    const std::function<arrow::Status(size_t index, FileRows file)>& each);

/// How many files of `candidate_indexes` to read and change at once: `op.parallelism` when set,
/// else one per hardware thread (at most 4) when the files hold at least 64 MiB in all, else 1
/// (small changes stay in one lane, so they write as few new files as one lane does).
int ChooseLanes(const RowLevelOperation& op, const std::vector<size_t>& candidate_indexes);

/// As ForEachCandidateRead with `lanes` files at once: lane k (0 <= k < lanes) is a thread of its
/// own that reads a file, calls `each(k, index, rows)` and takes the next, so decoding and
/// rewriting of different files overlap on every core. `each` runs on several threads at once
/// and must use `op.rewriter->lane(k)` (made here) and otherwise only thread-safe state. At most
/// `lanes` files' rows are in memory at once. The first error stops every lane (each finishes
/// the file under way) and is returned. With one lane: ForEachCandidateRead.
arrow::Status ForEachCandidateInLanes(
    const RowLevelOperation& op, const std::vector<size_t>& candidate_indexes, int lanes,
    const std::function<arrow::Status(int lane, size_t index, FileRows file)>& each);

/// Milliseconds since `start` (steady clock).
int64_t MillisSince(std::chrono::steady_clock::time_point start);

/// Finishes the rewriter after the per-file work (`run_status`), adding the time Finish takes
/// to `*rewrite_time`; when either fails the rewriter is aborted (its files deleted).
arrow::Result<RewriteOutcome> FinishRewrite(RowLevelOperation& op, const arrow::Status& run_status,
                                            std::chrono::steady_clock::duration* rewrite_time);

/// Commits the outcome with `parameters` and the metrics `named`, unless it changes nothing:
/// then, as delta-spark, nothing is committed (the rewriter is aborted) and nullopt returned.
arrow::Result<std::optional<int64_t>> CommitUnlessUnchanged(
    RowLevelOperation& op, RewriteOutcome outcome,
    const std::map<std::string, std::string>& parameters,
    const std::vector<std::pair<std::string, int64_t>>& named);

/// The metrics DELETE and UPDATE report alike (files and bytes added, rows copied, deletion
/// vectors, change files, timings: scan time is what is not rewrite time), from the outcome.
template <typename Metrics>
void SetSharedRewriteMetrics(const RewriteOutcome& outcome,
                             std::chrono::steady_clock::duration rewrite_time,
                             std::chrono::steady_clock::time_point start, Metrics* metrics) {
  metrics->num_copied_rows = outcome.copied_rows;
  metrics->num_added_files = outcome.added_files;
  metrics->num_deletion_vectors_added = outcome.deletion_vectors_added;
  metrics->num_deletion_vectors_removed = outcome.deletion_vectors_removed;
  metrics->num_deletion_vectors_updated = outcome.deletion_vectors_updated;
  metrics->num_added_change_files = static_cast<int64_t>(outcome.change_files.size());
  metrics->num_added_bytes = outcome.added_bytes;
  metrics->num_removed_bytes = outcome.removed_bytes;
  metrics->rewrite_time_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(rewrite_time).count();
  metrics->execution_time_ms = MillisSince(start);
  metrics->scan_time_ms =
      std::max<int64_t>(0, metrics->execution_time_ms - metrics->rewrite_time_ms);
}

}  // namespace deltacpp::internal
