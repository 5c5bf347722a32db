// UPDATE: set columns of the rows matching a predicate to new values, with deletion vectors or
// by rewriting files, writing the change data feed when the table has it.
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

/// What an UPDATE did, under delta-spark's metric names (see Named()).
struct UpdateMetrics {
  /// The version committed; nullopt when no row matched (nothing is committed, as delta-spark).
  std::optional<int64_t> version;
  int64_t num_updated_rows = 0;           ///< numUpdatedRows
  int64_t num_copied_rows = 0;            ///< numCopiedRows: unchanged rows of rewritten files
  int64_t num_added_files = 0;            ///< numAddedFiles: new data files
  int64_t num_removed_files = 0;          ///< numRemovedFiles: files touched (as delta-spark)
  int64_t num_deletion_vectors_added = 0;    ///< numDeletionVectorsAdded: new DVs
  int64_t num_deletion_vectors_removed = 0;  ///< numDeletionVectorsRemoved: old DVs replaced or
                                             ///< gone with their file
  int64_t num_deletion_vectors_updated = 0;  ///< numDeletionVectorsUpdated: DVs replaced by larger
                                             ///< ones
  int64_t num_added_change_files = 0;     ///< numAddedChangeFiles
  int64_t num_added_bytes = 0;            ///< numAddedBytes
  int64_t num_removed_bytes = 0;          ///< numRemovedBytes
  int64_t execution_time_ms = 0;          ///< executionTimeMs
  int64_t scan_time_ms = 0;               ///< scanTimeMs: finding and reading the rows
  int64_t rewrite_time_ms = 0;            ///< rewriteTimeMs: computing and writing new rows

  /// The metrics as (delta-spark name, value), in a fixed order; what the commit records.
  std::vector<std::pair<std::string, int64_t>> Named() const;
};

/// Updates rows: `UpdateBuilder(table).Set("price", "price * 2").Where("id > 5").Execute()`.
///
/// Each SET expression (SQL, over the columns of the table) is evaluated on the old row;
/// columns not assigned keep their values, generated columns whose inputs change are computed
/// again. Only files that can hold a matching row are read (partition pruning, statistics
/// skipping); rows where the predicate is TRUE are updated (NULL leaves the row). The new rows
/// are written to new files; with `delta.enableDeletionVectors=true` (and a protocol that
/// supports `deletionVectors`) the old rows are marked deleted in their file's deletion
/// vector, otherwise each changed file is rewritten with its other rows. With the change data
/// feed, the old and new rows go to cdc files as `update_preimage` / `update_postimage`.
///
/// Rules enforced on the new rows before anything is committed (ConstraintViolation naming the
/// column or constraint and the row): NOT NULL, CHECK constraints, invariants, generated
/// columns (a SET of a generated column must equal its expression); a SET of a GENERATED
/// ALWAYS identity column is refused (BY DEFAULT ones may be set). Values are stored under
/// Spark's ANSI store-assignment rules (expr/assignment.h): a value type the column cannot take
/// is InvalidExpression, a value that does not fit (overflow) is SchemaMismatch naming the
/// column, the value and the row; values are never wrapped silently.
///
/// The commit (operation UPDATE, operationParameters `predicate` = JSON array of the predicate
/// text, `[]` without one, as delta-spark) records the predicate and the files read, as DELETE does
/// (see DeleteBuilder); when no row matches nothing is committed. A failure leaves no file
/// behind.
///
/// Errors: TableNotFound; InvalidArgument (no SET, a column assigned twice, text that is not
/// valid UTF-8, a value whose computation fails); InvalidExpression (an unknown column, a
/// predicate or expression that does not parse or bind, a value type the column cannot take);
/// ConstraintViolation; SchemaMismatch (a value that does not fit its column, a new string
/// that is not valid UTF-8); AppendOnlyViolation; UnsupportedFeature (a nested SET target,
/// among others); the commit conflicts of Transaction.
class UpdateBuilder {
 public:
  explicit UpdateBuilder(std::shared_ptr<DeltaTable> table) : table_(std::move(table)) {}
  /// Opens the table at `location` when executed.
  explicit UpdateBuilder(std::string_view location) : location_(location) {}

  /// Sets `column` (a top-level column, case-insensitive) to `expression` (SQL).
  UpdateBuilder& Set(std::string column, std::string expression) {
    assignments_.emplace_back(std::move(column), std::move(expression));
    return *this;
  }
  /// Updates only the rows for which `predicate` is TRUE.
  UpdateBuilder& Where(std::string predicate) {
    predicate_ = std::move(predicate);
    return *this;
  }
  /// Files read and rewritten at once, each on a thread of its own (0, the default: one per
  /// hardware thread, at most 4, when the files to read hold 64 MiB or more, else 1). Each
  /// file-at-once lane writes its own new files.
  UpdateBuilder& Parallelism(int files) {
    parallelism_ = files;
    return *this;
  }
  UpdateBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  arrow::Result<UpdateMetrics> Execute() const;

 private:
  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  std::vector<std::pair<std::string, std::string>> assignments_;
  std::optional<std::string> predicate_;
  int parallelism_ = 0;
  TransactionOptions options_;
};

}  // namespace deltacpp
