// UPDATE: rows matching a predicate get new values, written as new rows; the old ones leave
// through deletion vectors or rewritten files.
#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>

#include "deltacpp/error.h"
#include "deltacpp/ops/update.h"
#include "expr/assignment.h"
#include "expr/parser.h"
#include "ops/generated_columns.h"
#include "ops/identity_columns.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "ops/row_constraints.h"
#include "ops/row_level_op.h"
#include "write/string_validation.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

std::vector<std::pair<std::string, int64_t>> UpdateMetrics::Named() const {
  return {
      {"numUpdatedRows", num_updated_rows},
      {"numCopiedRows", num_copied_rows},
      {"numAddedFiles", num_added_files},
      {"numRemovedFiles", num_removed_files},
      {"numDeletionVectorsAdded", num_deletion_vectors_added},
      {"numDeletionVectorsRemoved", num_deletion_vectors_removed},
      {"numDeletionVectorsUpdated", num_deletion_vectors_updated},
      {"numAddedChangeFiles", num_added_change_files},
      {"numAddedBytes", num_added_bytes},
      {"numRemovedBytes", num_removed_bytes},
      {"executionTimeMs", execution_time_ms},
      {"scanTimeMs", scan_time_ms},
      {"rewriteTimeMs", rewrite_time_ms},
  };
}

arrow::Result<UpdateMetrics> UpdateBuilder::Execute() const {
  const auto start = std::chrono::steady_clock::now();
  const std::string where = table_ ? table_->root() : location_;
  if (assignments_.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("UPDATE on table {}: no column to SET", where));
  }
  for (const auto& [column, sql] : assignments_) {
    const std::string context = fmt::format("UPDATE on table {}: ", where);
    ARROW_RETURN_NOT_OK(CheckOptionText(column, context, "a SET column name"));
    ARROW_RETURN_NOT_OK(CheckOptionText(sql, context, "a SET expression"));
  }
  ARROW_ASSIGN_OR_RAISE(auto op, StartRowLevelOperation(table_, location_, "UPDATE", predicate_,
                                                        options_));
  const auto& snapshot = *op.snapshot;
  const auto& schema = snapshot.schema();
  const std::string context =
      fmt::format("UPDATE on table {} version {}: ", snapshot.table_root(), snapshot.version());

  std::vector<BoundAssignment> assignments;
  std::set<int> assigned;
  for (const auto& [column, sql] : assignments_) {
    auto parsed = ParseExpression(sql);
    if (!parsed.ok()) {
      return parsed.status().WithMessage(
          fmt::format("{}SET {} = {}: {}", context, column, sql, parsed.status().message()));
    }
    auto bound = BindAssignment(column, *parsed, *schema);
    if (!bound.ok()) {
      return bound.status().WithMessage(fmt::format("{}{}", context, bound.status().message()));
    }
    if (!assigned.insert(bound->field_index).second) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{}column '{}' is SET twice", context, bound->target->name()));
    }
    assignments.push_back(std::move(*bound));
  }
  // The columns the update supplies: the generated columns it does not assign are computed
  // again from the new rows, the ones it assigns are checked against their expressions.
  arrow::FieldVector supplied_fields;
  arrow::FieldVector assigned_fields;
  const auto computed = GeneratedColumns::MissingFrom(*schema, arrow::Schema(arrow::FieldVector{}));
  for (int i = 0; i < schema->num_fields(); ++i) {
    const auto& f = schema->field(i);
    if (assigned.count(i)) assigned_fields.push_back(f);
    bool generated = false;
    for (const auto& g : computed) generated |= g->name() == f->name();
    if (!generated || assigned.count(i)) supplied_fields.push_back(f);
  }
  auto identity = IdentityColumns::Make(schema, arrow::Schema(assigned_fields));
  if (!identity.ok()) {
    return identity.status().WithMessage(
        fmt::format("{}{} (an identity column GENERATED ALWAYS cannot be SET)", context,
                    identity.status().message()));
  }
  ARROW_ASSIGN_OR_RAISE(auto generated,
                        GeneratedColumns::Make(schema, arrow::Schema(supplied_fields)));
  ARROW_ASSIGN_OR_RAISE(auto constraints,
                        RowConstraints::Make(schema, snapshot.metadata().configuration,
                                             std::nullopt));

  // The updated version of `old_rows` (all in the table schema).
  // Row numbers in errors count the updated rows of one file, which the message names.
  const std::string where_prefix =
      fmt::format("UPDATE on table {} version {}", snapshot.table_root(), snapshot.version());
  auto new_rows_of = [&](const std::shared_ptr<arrow::RecordBatch>& old_rows)
      -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
    auto columns = old_rows->columns();
    for (const auto& a : assignments) {
      ARROW_ASSIGN_OR_RAISE(columns[a.field_index],
                            EvaluateAssignment(a, old_rows, 0, where_prefix));
    }
    auto rows = arrow::RecordBatch::Make(schema, old_rows->num_rows(), std::move(columns));
    if (!generated.empty()) {
      // Generated columns that are not assigned enter as nulls and are computed again.
      auto columns_with_nulls = rows->columns();
      for (int i = 0; i < schema->num_fields(); ++i) {
        bool is_supplied = false;
        for (const auto& f : supplied_fields) is_supplied |= f->name() == schema->field(i)->name();
        if (!is_supplied) {
          ARROW_ASSIGN_OR_RAISE(columns_with_nulls[i],
                                arrow::MakeArrayOfNull(schema->field(i)->type(), rows->num_rows()));
        }
      }
      rows = arrow::RecordBatch::Make(schema, rows->num_rows(), std::move(columns_with_nulls));
      ARROW_ASSIGN_OR_RAISE(rows, generated.Apply(rows));
    }
    ARROW_RETURN_NOT_OK(CheckStringsAreUtf8(*rows, 0, context, snapshot.partition_columns()));
    ARROW_RETURN_NOT_OK(constraints.Check(*rows));
    return rows;
  };

  std::chrono::steady_clock::duration rewrite_time{};
  auto run = [&]() -> arrow::Status {
    std::vector<size_t> all(op.candidates.size());
    std::iota(all.begin(), all.end(), size_t{0});
    op.parallelism = parallelism_;
    std::mutex time_mutex;
    return ForEachCandidateInLanes(
        op, all, ChooseLanes(op, all), [&](int lane, size_t i, FileRows file) -> arrow::Status {
          ARROW_ASSIGN_OR_RAISE(auto mask, MatchMask(op, *file.rows));
          if (mask->true_count() == 0) return arrow::Status::OK();
          const auto t = std::chrono::steady_clock::now();
          ARROW_ASSIGN_OR_RAISE(auto selected, arrow::compute::Filter(file.rows, mask));
          auto new_rows = new_rows_of(selected.record_batch());
          if (!new_rows.ok()) {
            return new_rows.status().WithMessage(fmt::format(
                "{} (file {})", new_rows.status().message(), op.candidate_paths[i]));
          }
          ARROW_RETURN_NOT_OK(op.rewriter->lane(lane).Update(file, *mask, *new_rows));
          std::lock_guard lock(time_mutex);
          rewrite_time += std::chrono::steady_clock::now() - t;
          return arrow::Status::OK();
        });
  };
  ARROW_ASSIGN_OR_RAISE(auto outcome, FinishRewrite(op, run(), &rewrite_time));
  UpdateMetrics metrics;
  metrics.num_updated_rows = outcome.updated_rows;
  // As delta-spark: every file the update touched, also those re-added with a deletion vector.
  metrics.num_removed_files = static_cast<int64_t>(outcome.removes.size());
  SetSharedRewriteMetrics(outcome, rewrite_time, start, &metrics);
  ARROW_ASSIGN_OR_RAISE(
      metrics.version,
      CommitUnlessUnchanged(op, std::move(outcome),
                            {{"predicate", predicate_ ? JsonStringArray({*predicate_}) : "[]"}},
                            metrics.Named()));
  return metrics;
}

}  // namespace deltacpp
