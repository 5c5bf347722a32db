// DELETE: remove the rows of a table that match a predicate, with deletion vectors or by
// rewriting files, writing the change data feed when the table has it.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/table.h"
#include "deltacpp/transaction.h"

namespace deltacpp {

/// What a DELETE did, under delta-spark's metric names (see Named()).
struct DeleteMetrics {
  /// The version committed; nullopt when no row matched (nothing is committed, as delta-spark).
  std::optional<int64_t> version;
  int64_t num_deleted_rows = 0;           ///< numDeletedRows
  int64_t num_removed_files = 0;          ///< numRemovedFiles: files removed or rewritten
  int64_t num_added_files = 0;            ///< numAddedFiles: new data files
  int64_t num_copied_rows = 0;            ///< numCopiedRows: kept rows of rewritten files
  int64_t num_deletion_vectors_added = 0;    ///< numDeletionVectorsAdded: new DVs
  int64_t num_deletion_vectors_removed = 0;  ///< numDeletionVectorsRemoved: old DVs replaced or
                                             ///< gone with their file
  int64_t num_deletion_vectors_updated = 0;  ///< numDeletionVectorsUpdated: DVs replaced by larger
                                             ///< ones
  int64_t num_added_change_files = 0;     ///< numAddedChangeFiles
  int64_t num_removed_bytes = 0;          ///< numRemovedBytes
  int64_t num_added_bytes = 0;            ///< numAddedBytes
  int64_t execution_time_ms = 0;          ///< executionTimeMs
  int64_t scan_time_ms = 0;               ///< scanTimeMs: finding and reading the rows
  int64_t rewrite_time_ms = 0;            ///< rewriteTimeMs: writing files and DVs

  /// The metrics as (delta-spark name, value), in a fixed order; what the commit records.
  std::vector<std::pair<std::string, int64_t>> Named() const;
};

/// Deletes rows: `DeleteBuilder(table).Where("id > 5").Execute()`.
///
/// Without a predicate every file is removed without being read. Otherwise only the files that
/// can hold a matching row are considered (partition pruning and statistics skipping); a file
/// whose partition values and statistics prove that every row matches is removed without being
/// read; the others are read and the rows for which the predicate is TRUE are deleted (NULL
/// keeps the row). With `delta.enableDeletionVectors=true` on a protocol that supports
/// `deletionVectors`, a file keeps its data and its deletion vector grows; otherwise it is
/// rewritten without the deleted rows. A file that loses every row is removed.
///
/// The commit (operation DELETE, operationParameters `predicate` = a JSON array holding the
/// predicate text, `["true"]` without one; the metrics as strings) records what was read for
/// conflict detection: the predicate and the files read or removed; a concurrent removal of
/// one of them fails it with ConcurrentDeleteRead or ConcurrentDeleteDelete, a concurrent add
/// matching the predicate with ConcurrentAppend (Serializable). With the change data feed, a
/// rewrite writes the deleted rows to cdc files (`_change_type` = delete); deletes that readers
/// can derive from removes and deletion vectors write none. When no row matches nothing is
/// committed. A failure leaves no file behind.
///
/// Errors: TableNotFound; InvalidExpression for a predicate that does not parse or bind or is
/// not BOOLEAN; InvalidArgument for predicate text that is not valid UTF-8;
/// AppendOnlyViolation on a `delta.appendOnly` table; UnsupportedFeature when deltacpp cannot
/// write the table; read errors naming the file; the commit conflicts of Transaction.
class DeleteBuilder {
 public:
  explicit DeleteBuilder(std::shared_ptr<DeltaTable> table) : table_(std::move(table)) {}
  /// Opens the table at `location` when executed.
  explicit DeleteBuilder(std::string_view location) : location_(location) {}

  /// Deletes only the rows for which `predicate` (SQL, as in scans) is TRUE.
  DeleteBuilder& Where(std::string predicate) {
    predicate_ = std::move(predicate);
    return *this;
  }
  /// Files read and rewritten at once, each on a thread of its own (0, the default: one per
  /// hardware thread, at most 4, when the files to read hold 64 MiB or more, else 1). Each
  /// file-at-once lane writes its own new files.
  DeleteBuilder& Parallelism(int files) {
    parallelism_ = files;
    return *this;
  }
  DeleteBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  arrow::Result<DeleteMetrics> Execute() const;

 private:
  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  std::optional<std::string> predicate_;
  int parallelism_ = 0;
  TransactionOptions options_;
};

}  // namespace deltacpp
