// UPDATE: rows matching a predicate get new values, written as new rows; the old ones leave
// through deletion vectors or rewritten files.
#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "deltacpp/error.h"
#include "deltacpp/ops/update.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "ops/generated_columns.h"
#include "ops/identity_columns.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "ops/row_constraints.h"
#include "ops/row_level_op.h"
#include "util/uri.h"
#include "write/string_validation.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

// One SET, bound to the table schema.
struct Assignment {
  int index = -1;       // position of the column in the table schema
  std::string column;   // the column's name as in the schema
  std::string sql;      // the expression as given
  std::shared_ptr<arrow::DataType> source_type;
  arrow::compute::Expression value;  // over the table schema
};

bool IsNumeric(const arrow::DataType& t) {
  return arrow::is_integer(t.id()) || arrow::is_floating(t.id()) || arrow::is_decimal(t.id());
}

bool IsTemporal(const arrow::DataType& t) {
  return t.id() == arrow::Type::DATE32 || t.id() == arrow::Type::TIMESTAMP;
}

// Binds `sql` as the new value of `column`. The value's type must be storable in the column:
// the same type, a numeric type into a numeric column, a date or timestamp into a date or
// timestamp column, or NULL. Kept to this one function (and EvaluateAssignment) so that the
// expression layer's store-assignment rules can take their place.
arrow::Result<Assignment> BindAssignment(const std::string& column, const std::string& sql,
                                         const arrow::Schema& schema, const std::string& context) {
  Assignment out;
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (!EqualsIgnoreCase(schema.field(i)->name(), column)) continue;
    if (out.index >= 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{}SET of '{}': the name matches several columns", context,
                                    column));
    }
    out.index = i;
  }
  if (out.index < 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("{}SET of '{}': no such column; columns are {}", context,
                                  column, schema.ToString()));
  }
  const auto& field = schema.field(out.index);
  out.column = field->name();
  out.sql = sql;
  auto bound = [&]() -> arrow::Result<BoundExpr> {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(sql));
    return Bind(parsed, schema, /*allow_current_time=*/true);
  }();
  if (!bound.ok()) {
    return bound.status().WithMessage(fmt::format("{}SET {} = {}: {}", context, out.column, sql,
                                                  bound.status().message()));
  }
  out.source_type = bound->type;
  const auto& target = *field->type();
  const auto& source = *out.source_type;
  const bool storable = source.Equals(target) || source.id() == arrow::Type::NA ||
                        (IsNumeric(source) && IsNumeric(target)) ||
                        (IsTemporal(source) && IsTemporal(target));
  if (!storable) {
    return DeltaError(DeltaErrorCode::kInvalidExpression,
                      fmt::format("{}SET {} = {}: a value of type {} cannot be stored in column "
                                  "'{}' of type {}",
                                  context, out.column, sql, source.ToString(), out.column,
                                  target.ToString()));
  }
  ARROW_ASSIGN_OR_RAISE(auto value, ToArrowExpression(*bound));
  ARROW_ASSIGN_OR_RAISE(out.value, value.Bind(schema));
  return out;
}

// The new values of one assignment for `rows`, of the column's type. A value that does not
// fit (overflow, lost digits) is an error naming the column and the row (counting from 1 over
// the rows of the file); fractions going into integer columns are truncated toward zero, as a
// cast does in Spark.
arrow::Result<std::shared_ptr<arrow::Array>> EvaluateAssignment(
    const Assignment& assignment, const arrow::RecordBatch& rows,
    const std::shared_ptr<arrow::DataType>& target, const std::string& context) {
  ARROW_ASSIGN_OR_RAISE(auto datum, arrow::compute::ExecuteScalarExpression(
                                        assignment.value, arrow::compute::ExecBatch(rows)));
  std::shared_ptr<arrow::Array> values;
  if (datum.is_array()) {
    values = datum.make_array();
  } else {
    ARROW_ASSIGN_OR_RAISE(values, arrow::MakeArrayFromScalar(*datum.scalar(), rows.num_rows()));
  }
  if (values->type()->Equals(*target)) return values;
  if (values->type()->id() == arrow::Type::NA) {
    return arrow::MakeArrayOfNull(target, values->length());
  }
  auto options = arrow::compute::CastOptions::Safe(target);
  options.allow_float_truncate = true;
  auto cast = arrow::compute::Cast(*values, target, options);
  if (cast.ok()) return *cast;
  for (int64_t r = 0; r < values->length(); ++r) {
    auto one = arrow::compute::Cast(*values->Slice(r, 1), target, options);
    if (one.ok()) continue;
    auto scalar = values->GetScalar(r);
    return DeltaError(DeltaErrorCode::kConstraintViolation,
                      fmt::format("{}SET {} = {}: the value {} of row {} ({}) does not fit "
                                  "column '{}' of type {}",
                                  context, assignment.column, assignment.sql,
                                  scalar.ok() ? (*scalar)->ToString() : "?", r + 1,
                                  RowText(rows, r), assignment.column, target->ToString()));
  }
  return cast.status();
}

}  // namespace

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

  std::vector<Assignment> assignments;
  std::set<int> assigned;
  for (const auto& [column, sql] : assignments_) {
    ARROW_ASSIGN_OR_RAISE(auto a, BindAssignment(column, sql, *schema, context));
    if (!assigned.insert(a.index).second) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{}column '{}' is SET twice", context, a.column));
    }
    assignments.push_back(std::move(a));
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
  auto new_rows_of = [&](const std::shared_ptr<arrow::RecordBatch>& old_rows)
      -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
    auto columns = old_rows->columns();
    for (const auto& a : assignments) {
      ARROW_ASSIGN_OR_RAISE(columns[a.index],
                            EvaluateAssignment(a, *old_rows, schema->field(a.index)->type(),
                                               context));
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

  auto& rewriter = *op.rewriter;
  std::chrono::steady_clock::duration rewrite_time{};
  auto run = [&]() -> arrow::Status {
    for (size_t i = 0; i < op.candidates.size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto file, rewriter.Read(op.candidates[i]));
      ARROW_ASSIGN_OR_RAISE(auto mask, MatchMask(op, *file.rows));
      if (mask->true_count() == 0) continue;
      const auto t = std::chrono::steady_clock::now();
      ARROW_ASSIGN_OR_RAISE(auto selected, arrow::compute::Filter(file.rows, mask));
      auto new_rows = new_rows_of(selected.record_batch());
      if (!new_rows.ok()) {
        return new_rows.status().WithMessage(
            fmt::format("{} (file {})", new_rows.status().message(), op.candidate_paths[i]));
      }
      ARROW_RETURN_NOT_OK(rewriter.Update(file, *mask, *new_rows));
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
  UpdateMetrics metrics;
  metrics.num_updated_rows = outcome.updated_rows;
  metrics.num_copied_rows = outcome.copied_rows;
  metrics.num_added_files = outcome.added_files;
  metrics.num_removed_files = outcome.removed_files;
  metrics.num_deletion_vectors_added = outcome.deletion_vectors_added;
  metrics.num_deletion_vectors_removed = outcome.deletion_vectors_removed;
  metrics.num_deletion_vectors_updated = outcome.deletion_vectors_updated;
  metrics.num_added_change_files = static_cast<int64_t>(outcome.change_files.size());
  metrics.num_added_bytes = outcome.added_bytes;
  metrics.num_removed_bytes = outcome.removed_bytes;
  metrics.rewrite_time_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(rewrite_time).count();
  metrics.execution_time_ms = MillisSince(start);
  metrics.scan_time_ms = std::max<int64_t>(0, metrics.execution_time_ms - metrics.rewrite_time_ms);
  // As delta-spark: an UPDATE that changes nothing commits nothing.
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
