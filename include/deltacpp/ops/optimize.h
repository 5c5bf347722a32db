// OPTIMIZE: compact small files, cluster rows by Z-order or by the table's clustering columns,
// and purge deletion vectors (REORG ... APPLY (PURGE)), without changing the table's rows.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/table.h"
#include "deltacpp/transaction.h"

namespace deltacpp {

/// Sizes of a set of files, as delta-spark's OPTIMIZE reports them.
struct OptimizeFileSizes {
  int64_t min = 0;
  int64_t max = 0;
  double avg = 0;
  int64_t total_files = 0;
  int64_t total_size = 0;
};

/// Files and bytes, as delta-spark's ZOrderFileStats.
struct ZOrderFileStats {
  int64_t num = 0;
  int64_t size = 0;
};

/// delta-spark's zOrderStats of an OPTIMIZE ZORDER BY.
struct ZOrderStats {
  /// Every file in scope of each partition is merged (delta-spark's "all" strategy).
  std::string strategy_name = "all";
  /// Input files already in a Z-cube of the same columns (ZCUBE_ZORDER_BY tag), and the rest.
  ZOrderFileStats input_cube_files;
  ZOrderFileStats input_other_files;
  int64_t input_num_cubes = 0;  ///< distinct ZCUBE_ID tags among the input files
  ZOrderFileStats merged_files;  ///< the input files rewritten (all of them)
  int64_t num_output_cubes = 0;  ///< one per partition rewritten
  int64_t merged_num_cubes = 0;  ///< distinct Z-cubes among the merged files
};

/// What an OPTIMIZE (or a purge) did.
struct OptimizeMetrics {
  /// The version committed; nullopt when there was nothing to do (nothing is committed then).
  std::optional<int64_t> version;
  int64_t num_files_added = 0;
  int64_t num_files_removed = 0;
  OptimizeFileSizes files_added;
  OptimizeFileSizes files_removed;
  /// Sizes of the added files at the quartiles (delta-spark's p25FileSize, ...).
  int64_t p25_file_size = 0;
  int64_t p50_file_size = 0;
  int64_t p75_file_size = 0;
  int64_t partitions_optimized = 0;  ///< partitions with at least one file rewritten
  int64_t num_batches = 0;           ///< groups of files rewritten together (bins)
  int64_t total_considered_files = 0;  ///< live files inside the WHERE scope
  int64_t total_files_skipped = 0;     ///< of those, files left as they are
  int64_t num_rows = 0;                ///< rows written (deleted rows are not)
  int64_t num_deletion_vectors_removed = 0;
  int64_t num_deletion_vector_rows_removed = 0;  ///< rows the removed deletion vectors deleted
  /// Columns the rows were clustered by (Z-ORDER BY, or a clustered table's columns); empty
  /// for bin-packing.
  std::vector<std::string> clustering_columns;
  /// Set by ZORDER BY (not by bin-packing, a purge or a clustered table's OPTIMIZE).
  std::optional<ZOrderStats> zorder_stats;
  int64_t execution_time_ms = 0;

  /// What the commit records as operationMetrics, under delta-spark's names.
  std::vector<std::pair<std::string, int64_t>> Named() const;
};

/// Progress of a long OPTIMIZE, reported from the worker threads (serialised): files read and
/// bytes of them so far, out of the totals planned, and files written so far.
struct OptimizeProgress {
  int64_t files_read = 0;
  int64_t files_to_read = 0;
  int64_t bytes_read = 0;
  int64_t bytes_to_read = 0;
  int64_t files_written = 0;
};

/// Rewrites files of a table without changing its rows:
/// `OptimizeBuilder(table).Where("date = '2024-01-01'").ZOrderBy({"x", "y"}).Execute()`.
///
/// Bin-packing (the default): inside each partition, files smaller than the minimum size
/// (default: the target size), and files whose deletion vector deletes more than
/// MaxDeletedRowsRatio of their rows, are grouped in order of size into bins of at most the
/// target size (TargetFileSize, else `delta.targetFileSize`, else delta-spark's 1 GiB); each bin
/// of two or more files, or of one file with a deletion vector, is rewritten as files of about
/// the target size. Deleted rows are left out, so the new files have no deletion vectors.
///
/// ZOrderBy: every file of each partition in scope is rewritten, its rows ordered by the
/// interleaved bits of the columns' ranks (each column's values mapped to their rank among the
/// partition's values, so any orderable type takes part evenly) and cut into files of about the
/// target size: each file then covers a narrow range of every column, and range filters on any
/// of them skip most files. The columns must be data columns with statistics, not partition
/// columns. A partition is held in memory while it is ordered.
///
/// Clustered tables (`CLUSTER BY`, the `delta.clustering` domain): OPTIMIZE clusters by the
/// table's clustering columns as ZOrderBy does, the files that are not clustered yet (Full():
/// every file), and marks the new files `clusteringProvider: liquid`, as delta-spark does.
/// ZOrderBy and Where are refused there, as delta-spark refuses them.
///
/// Purge (delta-spark's `REORG TABLE ... APPLY (PURGE)`): every file in scope with a deletion
/// vector is rewritten without its deleted rows; the commit's operation is REORG.
///
/// Every action has dataChange=false (a stream reading the table sees no change); the commit
/// depends on the files rewritten only, so concurrent appends never conflict with it, while a
/// concurrent DELETE, UPDATE or MERGE that removed one of them does (ConcurrentDeleteRead /
/// ConcurrentDeleteDelete, after which nothing of the OPTIMIZE remains). Commit:
/// operation OPTIMIZE, operationParameters predicate, zOrderBy, clusterBy, auto=false (REORG:
/// predicate, applyPurge), metrics as Named(). Nothing is committed when no file needs
/// rewriting. On a row-tracking table the new files get fresh row ids and the commit says so
/// (tag `delta.rowTracking.preserved=false`).
///
/// Errors: TableNotFound; InvalidExpression for a WHERE that does not bind or names a data
/// column; InvalidArgument for unknown, repeated or partition Z-order columns, a non-positive
/// size or a Z-order on a clustered table; UnsupportedFeature when deltacpp cannot write the
/// table; MissingFile naming a file that is gone; the commit conflicts of Transaction. A failed
/// OPTIMIZE deletes the files it wrote and leaves the table as it was.
class OptimizeBuilder {
 public:
  explicit OptimizeBuilder(std::shared_ptr<DeltaTable> table) : table_(std::move(table)) {}
  /// Opens the table at `location` when executed.
  explicit OptimizeBuilder(std::string_view location) : location_(location) {}

  /// Only files of partitions matching this predicate over partition columns (SQL text).
  OptimizeBuilder& Where(std::string predicate) {
    where_ = std::move(predicate);
    return *this;
  }
  OptimizeBuilder& ZOrderBy(std::vector<std::string> columns) {
    zorder_by_ = std::move(columns);
    return *this;
  }
  /// Bytes of the files to write (and the largest bin).
  OptimizeBuilder& TargetFileSize(int64_t bytes) {
    target_file_size_ = bytes;
    return *this;
  }
  /// Files at least this large are left alone by bin-packing (default: the target size).
  OptimizeBuilder& MinFileSize(int64_t bytes) {
    min_file_size_ = bytes;
    return *this;
  }
  /// Files whose deletion vector deletes more than this share of their rows are rewritten
  /// whatever their size (delta-spark's default 0.05).
  OptimizeBuilder& MaxDeletedRowsRatio(double ratio) {
    max_deleted_rows_ratio_ = ratio;
    return *this;
  }
  /// REORG ... APPLY (PURGE): rewrite every file that has a deletion vector.
  OptimizeBuilder& Purge(bool purge = true) {
    purge_ = purge;
    return *this;
  }
  /// On a clustered table, recluster every file, not only those not clustered yet.
  OptimizeBuilder& Full(bool full = true) {
    full_ = full;
    return *this;
  }
  /// Bins rewritten at once (0: one per hardware thread, at most 4).
  OptimizeBuilder& Parallelism(int threads) {
    parallelism_ = threads;
    return *this;
  }
  OptimizeBuilder& OnProgress(std::function<void(const OptimizeProgress&)> callback) {
    on_progress_ = std::move(callback);
    return *this;
  }
  OptimizeBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  arrow::Result<OptimizeMetrics> Execute() const;

 private:
  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  std::optional<std::string> where_;
  std::vector<std::string> zorder_by_;
  std::optional<int64_t> target_file_size_;
  std::optional<int64_t> min_file_size_;
  double max_deleted_rows_ratio_ = 0.05;
  bool purge_ = false;
  bool full_ = false;
  int parallelism_ = 0;
  std::function<void(const OptimizeProgress&)> on_progress_;
  TransactionOptions options_;
};

}  // namespace deltacpp
