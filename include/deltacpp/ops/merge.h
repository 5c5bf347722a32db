// MERGE (upsert): join a source of rows to a table on a condition, then update, delete or insert
// rows clause by clause, with deletion vectors or by rewriting files, writing the change data
// feed when the table has it.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/snapshot.h"
#include "deltacpp/table.h"
#include "deltacpp/transaction.h"

namespace deltacpp {

/// What a MERGE did, under delta-spark's metric names (see Named()).
struct MergeMetrics {
  /// The version committed; nullopt when the merge changed nothing (nothing is committed).
  std::optional<int64_t> version;
  /// With MergeBuilder::Txn: the table had recorded that version (or a later one) of the app
  /// already, so the merge did nothing.
  bool skipped = false;
  int64_t num_source_rows = 0;                          ///< numSourceRows
  int64_t num_target_rows_inserted = 0;                 ///< numTargetRowsInserted
  int64_t num_target_rows_updated = 0;                  ///< numTargetRowsUpdated: both kinds
  int64_t num_target_rows_deleted = 0;                  ///< numTargetRowsDeleted: both kinds
  int64_t num_target_rows_copied = 0;                   ///< numTargetRowsCopied: unchanged rows
                                                        ///< of rewritten files
  int64_t num_target_rows_matched_updated = 0;          ///< numTargetRowsMatchedUpdated
  int64_t num_target_rows_matched_deleted = 0;          ///< numTargetRowsMatchedDeleted
  int64_t num_target_rows_not_matched_by_source_updated = 0;  ///< ...NotMatchedBySourceUpdated
  int64_t num_target_rows_not_matched_by_source_deleted = 0;  ///< ...NotMatchedBySourceDeleted
  int64_t num_output_rows = 0;           ///< numOutputRows: inserted + updated + copied
  int64_t num_target_files_added = 0;    ///< numTargetFilesAdded: new data files
  int64_t num_target_files_removed = 0;  ///< numTargetFilesRemoved: files removed for good
  int64_t num_target_bytes_added = 0;    ///< numTargetBytesAdded
  int64_t num_target_bytes_removed = 0;  ///< numTargetBytesRemoved
  int64_t num_target_deletion_vectors_added = 0;    ///< numTargetDeletionVectorsAdded
  int64_t num_target_deletion_vectors_removed = 0;  ///< numTargetDeletionVectorsRemoved
  int64_t num_target_deletion_vectors_updated = 0;  ///< numTargetDeletionVectorsUpdated
  int64_t num_target_change_files_added = 0;        ///< numTargetChangeFilesAdded
  int64_t execution_time_ms = 0;                    ///< executionTimeMs
  int64_t scan_time_ms = 0;     ///< scanTimeMs: reading the source and the target, joining
  int64_t rewrite_time_ms = 0;  ///< rewriteTimeMs: computing and writing new rows and files

  /// The metrics as (delta-spark name, value), in a fixed order; what the commit records.
  std::vector<std::pair<std::string, int64_t>> Named() const;
};

/// One WHEN clause of a MERGE, as given to MergeBuilder.
struct MergeClause {
  enum class Kind { kMatched, kNotMatched, kNotMatchedBySource };
  enum class Action { kUpdate, kUpdateAll, kDelete, kInsert, kInsertAll };
  Kind kind = Kind::kMatched;
  Action action = Action::kUpdate;
  /// The clause's extra condition (SQL); nullopt: none.
  std::optional<std::string> condition;
  /// (column, SQL value) of an UPDATE SET or INSERT VALUES, in the order given.
  std::vector<std::pair<std::string, std::string>> assignments;
};

/// Merges a source into a table, as delta-spark's `DeltaTable.merge`:
///
///     MergeBuilder(table, source).TargetAlias("t").SourceAlias("s").On("t.id = s.id")
///         .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
///         .WhenNotMatchedInsertAll()
///         .Execute();
///
/// Expressions name columns as `<alias>.<column>` (aliases default to `target` and `source`),
/// or bare when exactly one side has the column. The ON condition and WHEN MATCHED clauses see
/// both sides; WHEN NOT MATCHED clauses (source rows no target row matches) see only the
/// source; WHEN NOT MATCHED BY SOURCE clauses (target rows no source row matches) see only the
/// target. Clauses of one kind are tried in the order given and the first whose condition is
/// TRUE acts; only the last clause of a kind may omit its condition. UPDATE SET assigns the
/// named columns (Spark's store-assignment rules, as UpdateBuilder); UPDATE SET * and INSERT *
/// take every target column from the source column of the same name (generated and identity
/// columns the source lacks are computed); INSERT leaves the columns it does not name NULL
/// (generated ones computed, identity ones given the next values, the high-water mark committed
/// with the merge). New and updated rows must keep NOT NULL, CHECK constraints, generated
/// columns and GENERATED ALWAYS identity columns (ConstraintViolation, as UpdateBuilder).
///
/// The source (a reader consumed by Execute, or a version of a Delta table, which may be an
/// older version of the target) is read into memory: memory grows with the source, not with
/// the table. The target is read only where it may match: its partition values and
/// statistics are checked against the ON condition's conditions on the target alone and
/// against the range of the source's values of each `target.col = source expr` key (no
/// pruning with WHEN NOT MATCHED BY SOURCE clauses, which concern every target row). A target
/// row matched by more than one source row is an error (InvalidArgument) unless the only
/// WHEN MATCHED clause is an unconditional DELETE, as delta-spark. Changed rows leave through
/// deletion vectors when the table enables them, otherwise by rewriting their files; updated
/// and inserted rows are written to new files. A merge with only WHEN NOT MATCHED clauses
/// changes no existing file. With the change data feed, changes go to cdc files as insert,
/// update_preimage / update_postimage and delete where readers could not derive them.
///
/// The commit (operation MERGE; operationParameters `predicate` (JSON array of the ON text),
/// `matchedPredicates`, `notMatchedPredicates`, `notMatchedBySourcePredicates` (JSON arrays of
/// `{"predicate":...,"actionType":...}`), as delta-spark) records the files read and the
/// region of the target the ON condition reads, for conflict detection as DELETE does. When
/// nothing changes nothing is committed. A failure leaves no file behind.
///
/// Errors: TableNotFound; InvalidArgument (no ON condition, no clause, a clause without a
/// condition before another of its kind, a column assigned twice, an alias that is also a
/// target column, several source rows matching one target row, text that is not valid UTF-8);
/// InvalidExpression (an unknown or ambiguous column, a column of the wrong side, a condition
/// that does not parse, bind or is not BOOLEAN, a value type a column cannot take);
/// ConstraintViolation; SchemaMismatch; UnsupportedFeature (insert clauses that differ in
/// which identity columns they give values, nested SET targets); AppendOnlyViolation; the
/// commit conflicts of Transaction.
class MergeBuilder {
 public:
  MergeBuilder(std::shared_ptr<DeltaTable> table, std::shared_ptr<arrow::RecordBatchReader> source)
      : table_(std::move(table)), source_(std::move(source)) {}
  /// Opens the table at `location` when executed.
  MergeBuilder(std::string_view location, std::shared_ptr<arrow::RecordBatchReader> source)
      : location_(location), source_(std::move(source)) {}
  /// The source is a version of a Delta table (another table, or an older version of the
  /// target): its rows in its logical schema, deletion vectors applied, read when executed.
  MergeBuilder(std::shared_ptr<DeltaTable> table, std::shared_ptr<const Snapshot> source)
      : table_(std::move(table)), source_snapshot_(std::move(source)) {}
  MergeBuilder(std::string_view location, std::shared_ptr<const Snapshot> source)
      : location_(location), source_snapshot_(std::move(source)) {}

  /// The name expressions use for the table's columns (default `target`).
  MergeBuilder& TargetAlias(std::string alias) {
    target_alias_ = std::move(alias);
    return *this;
  }
  /// The name expressions use for the source's columns (default `source`).
  MergeBuilder& SourceAlias(std::string alias) {
    source_alias_ = std::move(alias);
    return *this;
  }
  /// The join condition (SQL), e.g. `t.id = s.id`.
  MergeBuilder& On(std::string condition) {
    on_ = std::move(condition);
    return *this;
  }
  /// WHEN MATCHED [AND condition] THEN UPDATE SET column = value, ...
  MergeBuilder& WhenMatchedUpdate(std::optional<std::string> condition,
                                  std::vector<std::pair<std::string, std::string>> set) {
    return Add(MergeClause::Kind::kMatched, MergeClause::Action::kUpdate, std::move(condition),
               std::move(set));
  }
  /// WHEN MATCHED [AND condition] THEN UPDATE SET *
  MergeBuilder& WhenMatchedUpdateAll(std::optional<std::string> condition = std::nullopt) {
    return Add(MergeClause::Kind::kMatched, MergeClause::Action::kUpdateAll,
               std::move(condition), {});
  }
  /// WHEN MATCHED [AND condition] THEN DELETE
  MergeBuilder& WhenMatchedDelete(std::optional<std::string> condition = std::nullopt) {
    return Add(MergeClause::Kind::kMatched, MergeClause::Action::kDelete, std::move(condition),
               {});
  }
  /// WHEN NOT MATCHED [AND condition] THEN INSERT (column, ...) VALUES (value, ...)
  MergeBuilder& WhenNotMatchedInsert(std::optional<std::string> condition,
                                     std::vector<std::pair<std::string, std::string>> values) {
    return Add(MergeClause::Kind::kNotMatched, MergeClause::Action::kInsert, std::move(condition),
               std::move(values));
  }
  /// WHEN NOT MATCHED [AND condition] THEN INSERT *
  MergeBuilder& WhenNotMatchedInsertAll(std::optional<std::string> condition = std::nullopt) {
    return Add(MergeClause::Kind::kNotMatched, MergeClause::Action::kInsertAll,
               std::move(condition), {});
  }
  /// WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET column = value, ...
  MergeBuilder& WhenNotMatchedBySourceUpdate(
      std::optional<std::string> condition, std::vector<std::pair<std::string, std::string>> set) {
    return Add(MergeClause::Kind::kNotMatchedBySource, MergeClause::Action::kUpdate,
               std::move(condition), std::move(set));
  }
  /// WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE
  MergeBuilder& WhenNotMatchedBySourceDelete(std::optional<std::string> condition = std::nullopt) {
    return Add(MergeClause::Kind::kNotMatchedBySource, MergeClause::Action::kDelete,
               std::move(condition), {});
  }
  /// UPDATE SET * and INSERT * also add the source's columns the table lacks (top-level
  /// columns and fields of struct columns, nullable, at the end), committing the evolved
  /// schema with the merge, as delta-spark's `withSchemaEvolution()`. Rows the merge does not
  /// write read NULL for them. Tables with column mapping: UnsupportedFeature.
  MergeBuilder& WithSchemaEvolution(bool enabled = true) {
    schema_evolution_ = enabled;
    return *this;
  }
  /// Target files joined and changed at once, each on a thread of its own (0, the default: one
  /// per hardware thread, at most 4, when the files to read hold 64 MiB or more, else 1). Each
  /// lane writes its own new files.
  MergeBuilder& Parallelism(int files) {
    parallelism_ = files;
    return *this;
  }
  MergeBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// An idempotent merge (delta-spark's txnAppId / txnVersion): skipped when the table has
  /// recorded `version` or a later one for `app_id`, otherwise committed with that txn. The
  /// pattern for foreachBatch: `.Txn(query_id, batch_id)`. A merge that changes nothing
  /// commits nothing, its txn included.
  MergeBuilder& Txn(std::string app_id, int64_t version) {
    txn_ = std::make_pair(std::move(app_id), version);
    return *this;
  }
  /// Runs the merge (reading the source to its end) and commits it.
  arrow::Result<MergeMetrics> Execute() const;

 private:
  // The target's schema the merge reads and writes in: the table's, or with schema evolution
  // the table's plus the source's columns it lacks.
  arrow::Result<std::shared_ptr<arrow::Schema>> EvolvedTargetSchema(
      const Snapshot& snapshot, const arrow::Schema& source, const std::string& context) const;
  MergeBuilder& Add(MergeClause::Kind kind, MergeClause::Action action,
                    std::optional<std::string> condition,
                    std::vector<std::pair<std::string, std::string>> assignments) {
    clauses_.push_back(MergeClause{kind, action, std::move(condition), std::move(assignments)});
    return *this;
  }

  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  std::shared_ptr<arrow::RecordBatchReader> source_;
  std::shared_ptr<const Snapshot> source_snapshot_;
  std::string target_alias_ = "target";
  std::string source_alias_ = "source";
  std::optional<std::string> on_;
  std::vector<MergeClause> clauses_;
  bool schema_evolution_ = false;
  int parallelism_ = 0;
  TransactionOptions options_;
  std::optional<std::pair<std::string, int64_t>> txn_;
};

}  // namespace deltacpp
