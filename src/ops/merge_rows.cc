// MERGE: the source is read into memory and indexed by the ON condition's equality keys; each
// candidate target file is joined to it, its rows go through the WHEN MATCHED / NOT MATCHED BY
// SOURCE clauses into the row rewriter, and unmatched source rows through the WHEN NOT MATCHED
// clauses into new files.
#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

#include "deltacpp/error.h"
#include "deltacpp/ops/merge.h"
#include "deltacpp/scan.h"
#include "expr/assignment.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "ops/data_writer_settings.h"
#include "ops/generated_columns.h"
#include "ops/identity_columns.h"
#include "ops/merge_join.h"
#include "ops/merge_plan.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "ops/row_constraints.h"
#include "ops/row_level_op.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "util/uri.h"
#include "write/change_data_writer.h"
#include "write/string_validation.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

std::vector<std::pair<std::string, int64_t>> MergeMetrics::Named() const {
  return {
      {"numSourceRows", num_source_rows},
      {"numTargetRowsInserted", num_target_rows_inserted},
      {"numTargetRowsUpdated", num_target_rows_updated},
      {"numTargetRowsDeleted", num_target_rows_deleted},
      {"numTargetRowsCopied", num_target_rows_copied},
      {"numTargetRowsMatchedUpdated", num_target_rows_matched_updated},
      {"numTargetRowsMatchedDeleted", num_target_rows_matched_deleted},
      {"numTargetRowsNotMatchedBySourceUpdated", num_target_rows_not_matched_by_source_updated},
      {"numTargetRowsNotMatchedBySourceDeleted", num_target_rows_not_matched_by_source_deleted},
      {"numOutputRows", num_output_rows},
      {"numTargetFilesAdded", num_target_files_added},
      {"numTargetFilesRemoved", num_target_files_removed},
      {"numTargetBytesAdded", num_target_bytes_added},
      {"numTargetBytesRemoved", num_target_bytes_removed},
      {"numTargetDeletionVectorsAdded", num_target_deletion_vectors_added},
      {"numTargetDeletionVectorsRemoved", num_target_deletion_vectors_removed},
      {"numTargetDeletionVectorsUpdated", num_target_deletion_vectors_updated},
      {"numTargetChangeFilesAdded", num_target_change_files_added},
      {"executionTimeMs", execution_time_ms},
      {"scanTimeMs", scan_time_ms},
      {"rewriteTimeMs", rewrite_time_ms},
  };
}

namespace {

using Kind = MergeClause::Kind;
using Action = MergeClause::Action;

// Pairs (and source rows) are joined and evaluated this many at a time.
constexpr int64_t kChunkRows = 64 * 1024;

const char* KindText(Kind kind) {
  switch (kind) {
    case Kind::kMatched: return "WHEN MATCHED";
    case Kind::kNotMatched: return "WHEN NOT MATCHED";
    case Kind::kNotMatchedBySource: return "WHEN NOT MATCHED BY SOURCE";
  }
  return "WHEN";
}

const char* ActionText(Action action) {
  switch (action) {
    case Action::kUpdate: return "UPDATE";
    case Action::kUpdateAll: return "UPDATE SET *";
    case Action::kDelete: return "DELETE";
    case Action::kInsert: return "INSERT";
    case Action::kInsertAll: return "INSERT *";
  }
  return "";
}

// delta-spark's actionType of a clause in operationParameters.
const char* ActionType(Action action) {
  switch (action) {
    case Action::kUpdate:
    case Action::kUpdateAll: return "update";
    case Action::kDelete: return "delete";
    case Action::kInsert:
    case Action::kInsertAll: return "insert";
  }
  return "";
}

bool IsUpdate(Action a) { return a == Action::kUpdate || a == Action::kUpdateAll; }
bool IsInsert(Action a) { return a == Action::kInsert || a == Action::kInsertAll; }

// One WHEN clause bound to the pair rows.
struct BoundClause {
  Kind kind = Kind::kMatched;
  Action action = Action::kUpdate;
  std::string description;  // e.g. "WHEN MATCHED clause 2 (UPDATE)"
  /// TRUE exactly where the clause's condition is TRUE; nullopt: no condition.
  std::optional<arrow::compute::Expression> condition;
  std::vector<BoundAssignment> assignments;
  /// Target columns the clause assigns.
  std::vector<bool> assigned;
  /// Target columns that enter as NULL and are computed (generated columns not assigned).
  std::vector<bool> regenerated;
  std::optional<GeneratedColumns> generated;
};

// An equality of the ON condition usable as a join key.
struct JoinKey {
  arrow::compute::Expression target;  // bound to {target alias: struct}
  arrow::compute::Expression source;  // bound to {source alias: struct}
  /// The target column when the target side is one, for pruning by the source's range.
  std::optional<std::string> target_column;
};

struct MergePlan {
  MergeSides sides;
  arrow::compute::Expression on_match;  // TRUE where ON is TRUE, bound to sides.pair
  std::vector<JoinKey> keys;
  /// True when ON is the key equalities and nothing else: rows with equal keys match, no
  /// further check of the pairs.
  bool on_is_keys = false;
  /// ON conjuncts over target columns alone, as SQL over the table's columns.
  std::vector<std::string> target_only;
  std::vector<BoundClause> clauses;
  std::optional<RowConstraints> constraints;
  /// The identity columns inserted rows get values for (tables with identity columns that
  /// have insert clauses): one sequence for every insert clause.
  std::optional<IdentityColumns> identity;
};

arrow::Result<std::shared_ptr<arrow::Array>> Evaluate(const arrow::compute::Expression& bound,
                                                      const arrow::RecordBatch& rows) {
  ARROW_ASSIGN_OR_RAISE(auto value, arrow::compute::ExecuteScalarExpression(
                                        bound, arrow::compute::ExecBatch(rows)));
  if (value.is_array()) return value.make_array();
  return arrow::MakeArrayFromScalar(*value.scalar(), rows.num_rows());
}

// Rows of a one-column schema: `rows` as the struct column of one side.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> SideRows(
    const std::shared_ptr<arrow::Field>& side, const std::shared_ptr<arrow::RecordBatch>& rows) {
  ARROW_ASSIGN_OR_RAISE(auto structs,
                        arrow::StructArray::Make(rows->columns(), side->type()->fields()));
  return arrow::RecordBatch::Make(arrow::schema({side}), rows->num_rows(), {structs});
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> TakeRows(
    const std::shared_ptr<arrow::RecordBatch>& rows, const std::vector<int64_t>& indices) {
  arrow::Int64Builder b;
  ARROW_RETURN_NOT_OK(b.AppendValues(indices));
  ARROW_ASSIGN_OR_RAISE(auto idx, b.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(rows, idx));
  return taken.record_batch();
}

arrow::Result<std::shared_ptr<arrow::BooleanArray>> MaskOf(const std::vector<bool>& values) {
  arrow::BooleanBuilder b;
  ARROW_RETURN_NOT_OK(b.Reserve(static_cast<int64_t>(values.size())));
  for (bool v : values) b.UnsafeAppend(v);
  ARROW_ASSIGN_OR_RAISE(auto out, b.Finish());
  return std::static_pointer_cast<arrow::BooleanArray>(out);
}

// JSON of the clauses of one kind, as delta-spark's operationParameters.
std::string ClausePredicates(const std::vector<MergeClause>& clauses, Kind kind) {
  std::string out = "[";
  for (const auto& c : clauses) {
    if (c.kind != kind) continue;
    if (out.size() > 1) out += ",";
    out += "{";
    if (c.condition) out += "\"predicate\":" + JsonQuote(*c.condition) + ",";
    out += fmt::format("\"actionType\":\"{}\"}}", ActionType(c.action));
  }
  return out + "]";
}

// Whether the ON condition's pruning can use the source's range of a column of `type`.
bool RangePrunable(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::STRING:
    case arrow::Type::DATE32:
    case arrow::Type::TIMESTAMP:
      return true;
    default:
      return false;
  }
}

// The clauses of the builder, checked and bound over the pair rows of `sides`. With
// `schema_evolution`, UPDATE SET * keeps and INSERT * leaves NULL the target columns the source
// lacks (delta-spark's rule under schema evolution); without it they are an error.
arrow::Result<std::vector<BoundClause>> BindClauses(const std::vector<MergeClause>& clauses,
                                                   const MergeSides& sides,
                                                   bool schema_evolution,
                                                   const std::string& context) {
  const auto& schema = sides.target;
  const auto generated_fields =
      GeneratedColumns::MissingFrom(*schema, arrow::Schema(arrow::FieldVector{}));
  const auto identity_fields =
      IdentityColumns::MissingFrom(*schema, arrow::Schema(arrow::FieldVector{}));
  auto is_in = [](const arrow::FieldVector& fields, const std::string& name) {
    for (const auto& f : fields) {
      if (f->name() == name) return true;
    }
    return false;
  };
  std::vector<BoundClause> out;
  std::map<Kind, int> numbers;
  for (const auto& clause : clauses) {
    BoundClause bound;
    bound.kind = clause.kind;
    bound.action = clause.action;
    bound.description = fmt::format("{} clause {} ({})", KindText(clause.kind),
                                    ++numbers[clause.kind], ActionText(clause.action));
    const std::string where = context + bound.description;
    const MergeScope scope = clause.kind == Kind::kMatched      ? MergeScope::kBoth
                             : clause.kind == Kind::kNotMatched ? MergeScope::kSourceOnly
                                                                : MergeScope::kTargetOnly;
    if (clause.condition) {
      auto condition = [&]() -> arrow::Result<arrow::compute::Expression> {
        ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(*clause.condition));
        ARROW_ASSIGN_OR_RAISE(auto qualified,
                              QualifyColumns(parsed, sides, scope, "the condition"));
        ARROW_ASSIGN_OR_RAISE(auto b, BindPredicate(qualified, *sides.pair, true));
        ARROW_ASSIGN_OR_RAISE(auto filter, ToArrowFilter(b));
        return filter.Bind(*sides.pair);
      }();
      if (!condition.ok()) {
        return condition.status().WithMessage(fmt::format(
            "{} condition ({}): {}", where, *clause.condition, condition.status().message()));
      }
      bound.condition = std::move(*condition);
    }
    // (column, value) pairs: as given, or one per target column for the `*` forms.
    std::vector<std::pair<std::string, ExprPtr>> values;
    if (clause.action == Action::kUpdate || clause.action == Action::kInsert) {
      if (clause.assignments.empty()) {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("{}: no column to {}", where,
                                      clause.action == Action::kUpdate ? "SET" : "INSERT"));
      }
      for (const auto& [column, sql] : clause.assignments) {
        std::string name = column;
        const std::string prefix = sides.target_alias + ".";
        if (name.size() > prefix.size() &&
            EqualsIgnoreCase(name.substr(0, prefix.size()), prefix)) {
          name = name.substr(prefix.size());
        }
        auto parsed = ParseExpression(sql);
        if (!parsed.ok()) {
          return parsed.status().WithMessage(fmt::format("{}: {} = {}: {}", where, column, sql,
                                                         parsed.status().message()));
        }
        auto qualified = QualifyColumns(*parsed, sides, scope, fmt::format("{} = {}", column, sql));
        if (!qualified.ok()) {
          return qualified.status().WithMessage(
              fmt::format("{}: {}", where, qualified.status().message()));
        }
        values.emplace_back(std::move(name), std::move(*qualified));
      }
    } else if (clause.action == Action::kUpdateAll || clause.action == Action::kInsertAll) {
      for (const auto& f : schema->fields()) {
        if (clause.action == Action::kUpdateAll && is_in(identity_fields, f->name())) continue;
        std::optional<std::string> source_name;
        for (const auto& s : sides.source->fields()) {
          if (EqualsIgnoreCase(s->name(), f->name())) source_name = s->name();
        }
        if (!source_name) {
          if (schema_evolution) continue;
          if (is_in(generated_fields, f->name())) continue;
          if (is_in(identity_fields, f->name())) continue;  // values are generated
          std::string names;
          for (const auto& s : sides.source->fields()) {
            names += (names.empty() ? "" : ", ") + s->name();
          }
          return DeltaError(DeltaErrorCode::kInvalidExpression,
                            fmt::format("{}: the source has no column '{}' for the target column "
                                        "of that name (source columns: {})",
                                        where, f->name(), names.empty() ? "(none)" : names));
        }
        values.emplace_back(f->name(), Expr::MakeColumn({sides.source_alias, *source_name}));
      }
    }
    std::vector<bool> assigned(schema->num_fields(), false);
    arrow::FieldVector assigned_fields;
    for (const auto& [column, value] : values) {
      auto a = BindAssignment(column, value, *sides.assign);
      if (a.ok() && a->field_index >= schema->num_fields()) {
        a = DeltaError(DeltaErrorCode::kInvalidExpression,
                       fmt::format("cannot assign '{}': it is an alias, not a column", column));
      }
      if (!a.ok()) {
        return a.status().WithMessage(fmt::format("{}: {}", where, a.status().message()));
      }
      if (assigned[a->field_index]) {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("{}: column '{}' is assigned twice", where,
                                      a->target->name()));
      }
      assigned[a->field_index] = true;
      assigned_fields.push_back(a->target);
      bound.assignments.push_back(std::move(*a));
    }
    bound.assigned = assigned;
    if (IsUpdate(clause.action)) {
      auto identity = IdentityColumns::Make(schema, arrow::Schema(assigned_fields));
      if (!identity.ok()) {
        return identity.status().WithMessage(
            fmt::format("{}: {} (an identity column GENERATED ALWAYS cannot be SET)", where,
                        identity.status().message()));
      }
    }
    if (IsUpdate(clause.action) || IsInsert(clause.action)) {
      // Generated columns the clause does not assign are computed from the new row; the ones
      // it assigns are checked against their expressions.
      arrow::FieldVector supplied;
      bound.regenerated.assign(schema->num_fields(), false);
      for (int i = 0; i < schema->num_fields(); ++i) {
        const auto& f = schema->field(i);
        if (is_in(generated_fields, f->name()) && !assigned[i]) {
          bound.regenerated[i] = true;
        } else {
          supplied.push_back(f);
        }
      }
      ARROW_ASSIGN_OR_RAISE(bound.generated,
                            GeneratedColumns::Make(schema, arrow::Schema(supplied)));
    }
    out.push_back(std::move(bound));
  }
  return out;
}

// Everything the merge evaluates, bound to the snapshot's schema and the source's.
arrow::Result<MergePlan> Prepare(const Snapshot& snapshot,
                                 const std::shared_ptr<arrow::Schema>& target_schema,
                                 const std::string& target_alias,
                                 const std::string& source_alias, const std::string& on,
                                 const std::vector<MergeClause>& clauses,
                                 const std::shared_ptr<arrow::Schema>& source_schema,
                                 bool schema_evolution, const std::string& context) {
  MergePlan plan;
  auto sides = MergeSides::Make(target_alias, source_alias, target_schema, source_schema);
  if (!sides.ok()) return sides.status().WithMessage(context + sides.status().message());
  plan.sides = std::move(*sides);
  const auto& s = plan.sides;
  auto on_error = [&](const arrow::Status& st) {
    return st.WithMessage(fmt::format("{}ON ({}): {}", context, on, st.message()));
  };
  auto parsed = ParseExpression(on);
  if (!parsed.ok()) return on_error(parsed.status());
  auto qualified = QualifyColumns(*parsed, s, MergeScope::kBoth, "the condition");
  if (!qualified.ok()) return on_error(qualified.status());
  {
    auto bound = BindPredicate(*qualified, *s.pair, /*allow_current_time=*/true);
    if (!bound.ok()) return on_error(bound.status());
    ARROW_ASSIGN_OR_RAISE(auto filter, ToArrowFilter(*bound));
    ARROW_ASSIGN_OR_RAISE(plan.on_match, filter.Bind(*s.pair));
  }
  const auto target_side = arrow::schema({s.pair->field(0)});
  const auto source_side = arrow::schema({s.pair->field(1)});
  const auto conjuncts = SplitConjuncts(*qualified);
  for (const auto& conjunct : conjuncts) {
    bool target = false;
    bool source = false;
    SidesNamed(*conjunct, s, &target, &source);
    if (target && !source) {
      ARROW_ASSIGN_OR_RAISE(auto stripped, StripAlias(conjunct));
      plan.target_only.push_back(stripped->ToString());
      continue;
    }
    if (conjunct->kind() != ExprKind::kComparison || conjunct->compare_op() != CompareOp::kEq) {
      continue;
    }
    bool left_t = false, left_s = false, right_t = false, right_s = false;
    SidesNamed(*conjunct->children()[0], s, &left_t, &left_s);
    SidesNamed(*conjunct->children()[1], s, &right_t, &right_s);
    const bool target_left = left_t && !left_s && right_s && !right_t;
    const bool target_right = right_t && !right_s && left_s && !left_t;
    if (!target_left && !target_right) continue;
    auto bound = BindPredicate(conjunct, *s.pair, true);
    if (!bound.ok()) return on_error(bound.status());
    if (bound->kind != BoundKind::kComparison || bound->children.size() != 2 ||
        !bound->children[0].type->Equals(*bound->children[1].type) ||
        !IsJoinKeyType(*bound->children[0].type)) {
      continue;
    }
    const BoundExpr& t = bound->children[target_left ? 0 : 1];
    const BoundExpr& src = bound->children[target_left ? 1 : 0];
    JoinKey key;
    ARROW_ASSIGN_OR_RAISE(auto te, ToArrowExpression(t));
    ARROW_ASSIGN_OR_RAISE(key.target, te.Bind(*target_side));
    ARROW_ASSIGN_OR_RAISE(auto se, ToArrowExpression(src));
    ARROW_ASSIGN_OR_RAISE(key.source, se.Bind(*source_side));
    if (t.kind == BoundKind::kColumn && t.column.logical_path.size() == 2 &&
        RangePrunable(*t.type)) {
      key.target_column = t.column.logical_path[1];
    }
    plan.keys.push_back(std::move(key));
  }
  plan.on_is_keys = !plan.keys.empty() && plan.keys.size() == conjuncts.size();
  ARROW_ASSIGN_OR_RAISE(plan.clauses, BindClauses(clauses, s, schema_evolution, context));
  // Inserted rows get identity values from one sequence, so every insert clause must leave out
  // the same identity columns.
  const auto identity_fields =
      IdentityColumns::MissingFrom(*s.target, arrow::Schema(arrow::FieldVector{}));
  const BoundClause* first_insert = nullptr;
  for (const auto& c : plan.clauses) {
    if (!IsInsert(c.action) || identity_fields.empty()) continue;
    if (!first_insert) {
      first_insert = &c;
      continue;
    }
    for (int i = 0; i < s.target->num_fields(); ++i) {
      bool identity = false;
      for (const auto& f : identity_fields) identity |= f->name() == s.target->field(i)->name();
      if (identity && c.assigned[i] != first_insert->assigned[i]) {
        return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                          fmt::format("{}{} and {} differ in whether they give the identity "
                                      "column '{}' a value; MERGE supports insert clauses that "
                                      "agree",
                                      context, first_insert->description, c.description,
                                      s.target->field(i)->name()));
      }
    }
  }
  if (first_insert) {
    arrow::FieldVector supplied;
    for (int i = 0; i < s.target->num_fields(); ++i) {
      if (first_insert->assigned[i]) supplied.push_back(s.target->field(i));
    }
    auto identity = IdentityColumns::Make(s.target, arrow::Schema(supplied));
    if (!identity.ok()) {
      return identity.status().WithMessage(fmt::format("{}{}: {}", context,
                                                       first_insert->description,
                                                       identity.status().message()));
    }
    plan.identity = std::move(*identity);
  }
  ARROW_ASSIGN_OR_RAISE(plan.constraints,
                        RowConstraints::Make(target_schema, snapshot.metadata().configuration,
                                             std::nullopt));
  return plan;
}

// The scan filter of the candidate target files: the ON conjuncts over the target alone and,
// per key on a target column, the source's range of values. nullopt: every file.
arrow::Result<std::optional<std::string>> CandidateFilter(
    const MergePlan& plan, const std::vector<std::shared_ptr<arrow::Array>>& source_keys) {
  std::vector<std::string> conjuncts;
  for (const auto& t : plan.target_only) conjuncts.push_back("(" + t + ")");
  for (size_t k = 0; k < plan.keys.size(); ++k) {
    const auto& key = source_keys[k];
    if (key->null_count() == key->length()) return std::optional<std::string>("false");
    if (!plan.keys[k].target_column) continue;
    auto min_max = arrow::compute::MinMax(key);
    if (!min_max.ok()) continue;
    const auto& pair = static_cast<const arrow::StructScalar&>(*min_max->scalar());
    if (!pair.value[0]->is_valid || !pair.value[1]->is_valid) continue;
    const std::string column = QuoteIdentifier(*plan.keys[k].target_column);
    conjuncts.push_back(fmt::format("{} >= {} AND {} <= {}", column,
                                    LiteralToSql(*pair.value[0]), column,
                                    LiteralToSql(*pair.value[1])));
  }
  if (conjuncts.empty()) return std::optional<std::string>();
  std::string out;
  for (const auto& c : conjuncts) out += (out.empty() ? "" : " AND ") + c;
  return std::optional<std::string>(out);
}

// For each row of `pair`, the clause of kind `kind` that acts on it (index in plan.clauses),
// or -1: the first whose condition is TRUE. A row's later conditions are not evaluated once an
// earlier clause took it.
arrow::Result<std::vector<int>> ChooseClauses(const MergePlan& plan, Kind kind,
                                              const std::shared_ptr<arrow::RecordBatch>& pair) {
  const int64_t n = pair->num_rows();
  std::vector<int> choice(n, -1);
  std::vector<int64_t> remaining(n);
  std::iota(remaining.begin(), remaining.end(), int64_t{0});
  auto rows = pair;
  for (size_t k = 0; k < plan.clauses.size() && !remaining.empty(); ++k) {
    const auto& clause = plan.clauses[k];
    if (clause.kind != kind) continue;
    if (!clause.condition) {
      for (int64_t r : remaining) choice[r] = static_cast<int>(k);
      remaining.clear();
      break;
    }
    auto mask_array = Evaluate(*clause.condition, *rows);
    if (!mask_array.ok()) {
      return mask_array.status().WithMessage(fmt::format(
          "{} condition: {}", clause.description, mask_array.status().message()));
    }
    const auto& mask = static_cast<const arrow::BooleanArray&>(**mask_array);
    std::vector<int64_t> still;
    std::vector<int64_t> still_rows;
    for (int64_t i = 0; i < static_cast<int64_t>(remaining.size()); ++i) {
      if (mask.IsValid(i) && mask.Value(i)) {
        choice[remaining[i]] = static_cast<int>(k);
      } else {
        still.push_back(remaining[i]);
        still_rows.push_back(i);
      }
    }
    if (still.size() != remaining.size() && !still.empty()) {
      ARROW_ASSIGN_OR_RAISE(rows, TakeRows(rows, still_rows));
    }
    remaining = std::move(still);
  }
  return choice;
}

// The rows an UPDATE or INSERT clause makes of `pair` (rows it acts on): `base` (the old
// target rows for an update, nullptr for an insert) with the assigned columns replaced and the
// generated ones computed, checked against the table's rules.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> NewRows(
    const MergePlan& plan, const BoundClause& clause,
    const std::shared_ptr<arrow::RecordBatch>& pair,
    const std::shared_ptr<arrow::RecordBatch>& base, IdentityColumns* identity,
    const Snapshot& snapshot, const std::string& context) {
  const auto& schema = plan.sides.target;
  const int64_t n = pair->num_rows();
  arrow::ArrayVector columns;
  for (int i = 0; i < schema->num_fields(); ++i) {
    if (base && !clause.regenerated[i]) {
      columns.push_back(base->column(i));
    } else {
      ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(schema->field(i)->type(), n));
      columns.push_back(std::move(nulls));
    }
  }
  const std::string where = fmt::format("{}{}", context, clause.description);
  for (const auto& a : clause.assignments) {
    ARROW_ASSIGN_OR_RAISE(columns[a.field_index], EvaluateAssignment(a, pair, 0, where));
  }
  auto rows = arrow::RecordBatch::Make(schema, n, std::move(columns));
  if (identity) {
    auto assigned = identity->Assign(rows);
    if (!assigned.ok()) {
      return assigned.status().WithMessage(
          fmt::format("{}: {}", where, assigned.status().message()));
    }
    rows = std::move(*assigned);
  }
  if (clause.generated && !clause.generated->empty()) {
    ARROW_ASSIGN_OR_RAISE(rows, clause.generated->Apply(rows));
  }
  ARROW_RETURN_NOT_OK(CheckStringsAreUtf8(*rows, 0, where + ": ", snapshot.partition_columns()));
  auto checked = plan.constraints->Check(*rows);
  if (!checked.ok()) {
    return checked.WithMessage(fmt::format("{}: {}", where, checked.message()));
  }
  return rows;
}

// The new rows of inserts, written to their own files (the row rewriter writes those of
// updates); kept in memory too (they come from the source) for the change data.
class InsertWriter {
 public:
  InsertWriter(std::shared_ptr<DeltaTable> table, std::shared_ptr<const Snapshot> snapshot,
               std::shared_ptr<arrow::Schema> schema)
      : table_(std::move(table)), snapshot_(std::move(snapshot)), schema_(std::move(schema)) {}
  ~InsertWriter() = default;

  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& rows) {
    if (rows->num_rows() == 0) return arrow::Status::OK();
    if (!writer_) {
      ARROW_ASSIGN_OR_RAISE(options_, WriterOptionsFor(table_->root(),
                                                       table_->store()->filesystem(),
                                                       schema_, snapshot_->metadata(), ""));
      ARROW_RETURN_NOT_OK(IndexClusteringColumns(*snapshot_, schema_, &options_));
      options_.table_schema = schema_;
      ARROW_ASSIGN_OR_RAISE(writer_, DataWriter::Make(options_));
    }
    rows_.push_back(rows);
    return writer_->Write(rows);
  }

  /// Closes the files; writes the inserted rows as change data too when `with_change_data`.
  arrow::Status Finish(bool with_change_data, std::vector<AddFile>* adds,
                       std::vector<CdcFile>* change_files) {
    if (!writer_) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(*adds, writer_->Finish());
    if (with_change_data) {
      ARROW_ASSIGN_OR_RAISE(change_data_, ChangeDataWriter::Make(options_));
      for (const auto& r : rows_) ARROW_RETURN_NOT_OK(change_data_->Write(r, "insert"));
      ARROW_ASSIGN_OR_RAISE(*change_files, change_data_->Finish());
    }
    return arrow::Status::OK();
  }

  int64_t rows() const {
    int64_t n = 0;
    for (const auto& r : rows_) n += r->num_rows();
    return n;
  }

  void Abort() {
    if (writer_) (void)writer_->Abort();
    if (change_data_) (void)change_data_->Abort();
  }

 private:
  std::shared_ptr<DeltaTable> table_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::shared_ptr<arrow::Schema> schema_;  ///< the rows' logical schema
  DataWriterOptions options_;
  std::unique_ptr<DataWriter> writer_;
  std::unique_ptr<ChangeDataWriter> change_data_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> rows_;
};

// The type `target` becomes when `source`'s fields it lacks are added: struct fields by
// name (case-insensitively), recursively; new fields nullable, at the end, without metadata.
std::shared_ptr<arrow::DataType> WithSourceFields(const std::shared_ptr<arrow::DataType>& target,
                                                  const std::shared_ptr<arrow::DataType>& source) {
  if (target->id() != arrow::Type::STRUCT || source->id() != arrow::Type::STRUCT) return target;
  arrow::FieldVector fields = target->fields();
  for (const auto& sf : source->fields()) {
    bool found = false;
    for (auto& tf : fields) {
      if (!EqualsIgnoreCase(tf->name(), sf->name())) continue;
      found = true;
      auto merged = WithSourceFields(tf->type(), sf->type());
      if (merged != tf->type()) tf = tf->WithType(merged);
    }
    if (!found) fields.push_back(arrow::field(sf->name(), sf->type(), /*nullable=*/true));
  }
  return arrow::struct_(fields);
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Schema>> MergeBuilder::EvolvedTargetSchema(
    const Snapshot& snapshot, const arrow::Schema& source, const std::string& context) const {
  const auto& schema = snapshot.schema();
  const bool star = std::any_of(clauses_.begin(), clauses_.end(), [](const MergeClause& c) {
    return c.action == Action::kUpdateAll || c.action == Action::kInsertAll;
  });
  if (!schema_evolution_ || !star) return schema;
  auto as_struct = [](const arrow::Schema& s) { return arrow::struct_(s.fields()); };
  auto merged = WithSourceFields(as_struct(*schema), as_struct(source));
  if (merged->Equals(*as_struct(*schema))) return schema;
  if (snapshot.column_mapping_mode() != ColumnMappingMode::kNone) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      context + "schema evolution of a table with column mapping (the source "
                                "has columns the table lacks)");
  }
  // Existing fields keep their metadata (comments, generation expressions, identity); the
  // struct rebuild above kept them, top-level ones are taken from the table.
  arrow::FieldVector fields;
  for (int i = 0; i < merged->num_fields(); ++i) {
    const auto& f = merged->field(i);
    if (i < schema->num_fields()) {
      fields.push_back(schema->field(i)->WithType(f->type()));
    } else {
      fields.push_back(f);
    }
  }
  return arrow::schema(std::move(fields), schema->metadata());
}

arrow::Result<MergeMetrics> MergeBuilder::Execute() const {
  const auto start = std::chrono::steady_clock::now();
  const std::string where = table_ ? table_->root() : location_;
  const std::string prefix = fmt::format("MERGE on table {}: ", where);
  auto invalid = [&](const std::string& message) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, prefix + message);
  };
  if (!source_ && !source_snapshot_) return invalid("no source");
  if (!on_) return invalid("no ON condition");
  if (clauses_.empty()) return invalid("no WHEN clause");
  ARROW_RETURN_NOT_OK(CheckOptionText(*on_, prefix, "the ON condition"));
  ARROW_RETURN_NOT_OK(CheckOptionText(target_alias_, prefix, "the target alias"));
  ARROW_RETURN_NOT_OK(CheckOptionText(source_alias_, prefix, "the source alias"));
  if (txn_) {
    ARROW_RETURN_NOT_OK(CheckOptionText(txn_->first, prefix, "the txn app id (txnAppId)"));
    if (txn_->second < 0) return invalid(fmt::format("txn version {} is negative", txn_->second));
  }
  std::map<Kind, int> numbers;
  for (size_t i = 0; i < clauses_.size(); ++i) {
    const auto& c = clauses_[i];
    const int number = ++numbers[c.kind];
    const std::string clause = fmt::format("{} clause {} ({})", KindText(c.kind), number,
                                           ActionText(c.action));
    if (c.condition) ARROW_RETURN_NOT_OK(CheckOptionText(*c.condition, prefix, clause));
    for (const auto& [column, sql] : c.assignments) {
      ARROW_RETURN_NOT_OK(CheckOptionText(column, prefix, clause));
      ARROW_RETURN_NOT_OK(CheckOptionText(sql, prefix, clause));
    }
    // delta-spark: only the last clause of a kind may omit its condition.
    if (!c.condition) {
      for (size_t j = i + 1; j < clauses_.size(); ++j) {
        if (clauses_[j].kind != c.kind) continue;
        return invalid(fmt::format("{} has no condition but is not the last {} clause; only the "
                                   "last clause of a kind may omit its condition",
                                   clause, KindText(c.kind)));
      }
    }
  }
  auto has = [&](Kind kind) {
    return std::any_of(clauses_.begin(), clauses_.end(),
                       [&](const MergeClause& c) { return c.kind == kind; });
  };
  const bool has_matched = has(Kind::kMatched);
  const bool has_not_matched = has(Kind::kNotMatched);
  const bool has_by_source = has(Kind::kNotMatchedBySource);
  // delta-spark: several source rows may match one target row only when the single WHEN
  // MATCHED clause deletes unconditionally (every such pair deletes the row).
  int matched_count = 0;
  bool unconditional_delete = false;
  for (const auto& c : clauses_) {
    if (c.kind != Kind::kMatched) continue;
    ++matched_count;
    unconditional_delete = c.action == Action::kDelete && !c.condition;
  }
  const bool duplicates_allowed = matched_count == 1 && unconditional_delete;

  std::shared_ptr<DeltaTable> table = table_;
  if (!table) {
    ARROW_ASSIGN_OR_RAISE(table, DeltaTable::Open(location_));
  }

  // The source, whole: memory follows the source, which MERGE expects to be the small side.
  std::shared_ptr<arrow::Table> source_table;
  if (source_) {
    ARROW_ASSIGN_OR_RAISE(source_table, source_->ToTable());
  } else {
    auto read = [&]() -> arrow::Result<std::shared_ptr<arrow::Table>> {
      ARROW_ASSIGN_OR_RAISE(auto scan, source_snapshot_->NewScan().Build());
      return scan->ToTable();
    }();
    if (!read.ok()) {
      return read.status().WithMessage(fmt::format("{}reading the source table {} version {}: {}",
                                                   prefix, source_snapshot_->table_root(),
                                                   source_snapshot_->version(),
                                                   read.status().message()));
    }
    source_table = std::move(*read);
  }
  std::shared_ptr<arrow::RecordBatch> source;
  ARROW_ASSIGN_OR_RAISE(source, source_table->CombineChunksToBatch());
  const int64_t num_source = source->num_rows();

  // The plan binds to the snapshot the operation runs on; when the table moved between the
  // look and the start, look again.
  MergePlan plan;
  RowLevelOperation op;
  std::vector<std::shared_ptr<arrow::Array>> source_keys;
  for (int attempt = 0;; ++attempt) {
    ARROW_ASSIGN_OR_RAISE(auto latest, table->Latest());
    const std::string context = fmt::format("MERGE on table {} version {}: ",
                                            latest->table_root(), latest->version());
    ARROW_ASSIGN_OR_RAISE(auto target_schema,
                          EvolvedTargetSchema(*latest, *source->schema(), context));
    ARROW_ASSIGN_OR_RAISE(plan, Prepare(*latest, target_schema, target_alias_, source_alias_,
                                        *on_, clauses_, source->schema(), schema_evolution_,
                                        context));
    ARROW_ASSIGN_OR_RAISE(auto source_side, SideRows(plan.sides.pair->field(1), source));
    source_keys.clear();
    for (const auto& key : plan.keys) {
      auto values = Evaluate(key.source, *source_side);
      if (!values.ok()) {
        return values.status().WithMessage(
            fmt::format("{}ON ({}): {}", context, *on_, values.status().message()));
      }
      source_keys.push_back(std::move(*values));
    }
    std::optional<std::string> filter;
    if (!has_by_source) {
      ARROW_ASSIGN_OR_RAISE(filter, CandidateFilter(plan, source_keys));
    }
    ARROW_ASSIGN_OR_RAISE(op, StartRowLevelOperation(table, "", "MERGE", filter, options_,
                                                     plan.sides.target));
    op.parallelism = parallelism_;
    if (op.snapshot->version() == latest->version()) break;
    (void)op.rewriter->Abort();
    if (attempt == 2) {
      return DeltaError(DeltaErrorCode::kConcurrentTransaction,
                        prefix + "the table kept changing while the merge started");
    }
  }
  const Snapshot& snapshot = *op.snapshot;
  if (txn_) {
    const auto recorded = snapshot.txn_version(txn_->first);
    if (recorded && *recorded >= txn_->second) {
      (void)op.rewriter->Abort();
      MergeMetrics skipped;
      skipped.skipped = true;
      skipped.num_source_rows = num_source;
      return skipped;
    }
    op.txn->SetTxn(txn_->first, txn_->second);
  }
  const std::string context =
      fmt::format("MERGE on table {} version {}: ", snapshot.table_root(), snapshot.version());
  ARROW_ASSIGN_OR_RAISE(auto index, JoinKeyIndex::Build(source_keys, num_source));

  MergeMetrics metrics;
  metrics.num_source_rows = num_source;
  InsertWriter inserts(table, op.snapshot, plan.sides.target);
  std::chrono::steady_clock::duration rewrite_time{};
  const auto& target_field = plan.sides.pair->field(0);
  std::vector<size_t> all(op.candidates.size());
  std::iota(all.begin(), all.end(), size_t{0});
  // Files are joined and changed in lanes (ForEachCandidateInLanes); what the per-file work
  // accumulates is kept per lane and combined after.
  struct LaneState {
    std::vector<uint8_t> source_matched;  // 1: the source row matched a target row
    MergeMetrics counts;                  // the rows each kind of clause updated and deleted
    std::chrono::steady_clock::duration rewrite_time{};
  };
  const int lanes = ChooseLanes(op, all);
  std::vector<LaneState> lane_states(lanes);
  for (auto& l : lane_states) l.source_matched.assign(num_source, 0);

  auto merge_file = [&](int lane, size_t i, FileRows file) -> arrow::Status {
    const int64_t n = file.rows->num_rows();
    if (n == 0) return arrow::Status::OK();
    auto& rewriter = op.rewriter->lane(lane);
    auto& source_matched = lane_states[lane].source_matched;
    auto& counts = lane_states[lane].counts;
    auto& lane_rewrite_time = lane_states[lane].rewrite_time;
    const std::string& path = op.candidate_paths[i];
    ARROW_ASSIGN_OR_RAISE(auto target_side, SideRows(target_field, file.rows));
    std::vector<std::shared_ptr<arrow::Array>> target_keys;
    for (const auto& key : plan.keys) {
      ARROW_ASSIGN_OR_RAISE(auto values, Evaluate(key.target, *target_side));
      target_keys.push_back(std::move(values));
    }
    // The pairs where the whole ON condition is TRUE, in target row order. Pairs with equal
    // keys are evaluated a chunk at a time, so that a condition with few or no equalities
    // never holds every pair at once.
    std::vector<int64_t> match_t;
    std::vector<int64_t> match_s;
    std::vector<int64_t> ct;
    std::vector<int64_t> cs;
    auto flush = [&]() -> arrow::Status {
      if (ct.empty()) return arrow::Status::OK();
      if (plan.on_is_keys) {
        match_t.insert(match_t.end(), ct.begin(), ct.end());
        match_s.insert(match_s.end(), cs.begin(), cs.end());
        ct.clear();
        cs.clear();
        return arrow::Status::OK();
      }
      ARROW_ASSIGN_OR_RAISE(auto t_rows, TakeRows(file.rows, ct));
      ARROW_ASSIGN_OR_RAISE(auto s_rows, TakeRows(source, cs));
      ARROW_ASSIGN_OR_RAISE(auto pairs, PairRows(plan.sides, t_rows, s_rows,
                                                 static_cast<int64_t>(ct.size())));
      auto mask_array = Evaluate(plan.on_match, *pairs);
      if (!mask_array.ok()) {
        return mask_array.status().WithMessage(fmt::format(
            "{}ON ({}) on file {}: {}", context, *on_, path, mask_array.status().message()));
      }
      const auto& mask = static_cast<const arrow::BooleanArray&>(**mask_array);
      for (size_t k = 0; k < ct.size(); ++k) {
        if (mask.IsValid(k) && mask.Value(k)) {
          match_t.push_back(ct[k]);
          match_s.push_back(cs[k]);
        }
      }
      ct.clear();
      cs.clear();
      return arrow::Status::OK();
    };
    arrow::Status flushed;
    ARROW_RETURN_NOT_OK(index.Probe(target_keys, n, [&](int64_t t, int64_t s) {
      if (!flushed.ok()) return;
      ct.push_back(t);
      cs.push_back(s);
      if (static_cast<int64_t>(ct.size()) >= kChunkRows) flushed = flush();
    }));
    ARROW_RETURN_NOT_OK(flushed);
    ARROW_RETURN_NOT_OK(flush());
    std::vector<int32_t> matches(n, 0);
    for (size_t k = 0; k < match_t.size(); ++k) {
      ++matches[match_t[k]];
      source_matched[match_s[k]] = 1;
    }
    if (!has_matched && !has_by_source) return arrow::Status::OK();
    if (has_matched && !duplicates_allowed) {
      for (size_t k = 0; k < match_t.size(); ++k) {
        if (matches[match_t[k]] < 2) continue;
        return DeltaError(
            DeltaErrorCode::kInvalidArgument,
            fmt::format("{}cannot perform MERGE as multiple source rows matched and attempted to "
                        "modify the same target row ({}) of file {} under the ON condition ({}); "
                        "this could change the table in ambiguous ways: deduplicate the source "
                        "or make the condition match one source row per target row",
                        context, RowText(*file.rows, match_t[k]), path, *on_));
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    // The clause acting on each target row (-1: none) and, per clause, the rows it takes with
    // the pair rows they come from.
    std::vector<int> clause_of(n, -1);
    struct Taken {
      std::vector<int64_t> target_rows;
      std::vector<int64_t> pair_rows;
      std::shared_ptr<arrow::RecordBatch> pairs;
    };
    std::map<int, Taken> taken;
    auto choose = [&](Kind kind, const std::vector<int64_t>& t_rows,
                      const std::shared_ptr<arrow::RecordBatch>& pairs) -> arrow::Status {
      auto choice = ChooseClauses(plan, kind, pairs);
      if (!choice.ok()) {
        return choice.status().WithMessage(
            fmt::format("{}{} (file {})", context, choice.status().message(), path));
      }
      for (size_t r = 0; r < t_rows.size(); ++r) {
        const int k = (*choice)[r];
        if (k < 0) continue;
        clause_of[t_rows[r]] = k;
        auto& entry = taken[k];
        entry.target_rows.push_back(t_rows[r]);
        entry.pair_rows.push_back(static_cast<int64_t>(r));
        entry.pairs = pairs;
      }
      return arrow::Status::OK();
    };
    if (has_matched && !match_t.empty()) {
      // One pair per matched target row (with duplicates only deletes act, alike for each).
      std::vector<int64_t> mt;
      std::vector<int64_t> ms;
      for (size_t k = 0; k < match_t.size(); ++k) {
        if (!mt.empty() && mt.back() == match_t[k]) continue;
        mt.push_back(match_t[k]);
        ms.push_back(match_s[k]);
      }
      ARROW_ASSIGN_OR_RAISE(auto t_rows, TakeRows(file.rows, mt));
      ARROW_ASSIGN_OR_RAISE(auto s_rows, TakeRows(source, ms));
      ARROW_ASSIGN_OR_RAISE(auto pairs, PairRows(plan.sides, t_rows, s_rows,
                                                 static_cast<int64_t>(mt.size())));
      ARROW_RETURN_NOT_OK(choose(Kind::kMatched, mt, pairs));
    }
    if (has_by_source) {
      std::vector<int64_t> unmatched;
      for (int64_t r = 0; r < n; ++r) {
        if (matches[r] == 0) unmatched.push_back(r);
      }
      if (!unmatched.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto t_rows, TakeRows(file.rows, unmatched));
        ARROW_ASSIGN_OR_RAISE(auto pairs, PairRows(plan.sides, t_rows, nullptr,
                                                   static_cast<int64_t>(unmatched.size())));
        ARROW_RETURN_NOT_OK(choose(Kind::kNotMatchedBySource, unmatched, pairs));
      }
    }
    if (taken.empty()) {
      lane_rewrite_time += std::chrono::steady_clock::now() - t0;
      return arrow::Status::OK();
    }
    std::vector<bool> drop(n, false);
    std::vector<bool> replace(n, false);
    arrow::RecordBatchVector updated;
    std::vector<int64_t> updated_rows;  // target row of each row of `updated`, in order
    for (auto& [k, entry] : taken) {
      const auto& clause = plan.clauses[k];
      const bool by_source = clause.kind == Kind::kNotMatchedBySource;
      const auto count = static_cast<int64_t>(entry.target_rows.size());
      if (clause.action == Action::kDelete) {
        for (int64_t r : entry.target_rows) drop[r] = true;
        (by_source ? counts.num_target_rows_not_matched_by_source_deleted
                   : counts.num_target_rows_matched_deleted) += count;
        continue;
      }
      for (int64_t r : entry.target_rows) replace[r] = true;
      (by_source ? counts.num_target_rows_not_matched_by_source_updated
                 : counts.num_target_rows_matched_updated) += count;
      ARROW_ASSIGN_OR_RAISE(auto pairs, TakeRows(entry.pairs, entry.pair_rows));
      ARROW_ASSIGN_OR_RAISE(auto base, TakeRows(file.rows, entry.target_rows));
      auto rows = NewRows(plan, clause, pairs, base, nullptr, snapshot, context);
      if (!rows.ok()) {
        return rows.status().WithMessage(
            fmt::format("{} (file {})", rows.status().message(), path));
      }
      updated.push_back(std::move(*rows));
      updated_rows.insert(updated_rows.end(), entry.target_rows.begin(), entry.target_rows.end());
    }
    ARROW_ASSIGN_OR_RAISE(auto drop_mask, MaskOf(drop));
    ARROW_ASSIGN_OR_RAISE(auto replace_mask, MaskOf(replace));
    if (updated.empty()) {
      ARROW_RETURN_NOT_OK(rewriter.Delete(file, *drop_mask));
    } else {
      // The rewriter takes the new rows in the order of the rows they replace.
      ARROW_ASSIGN_OR_RAISE(auto changed,
                            arrow::Table::FromRecordBatches(rewriter.schema(), updated));
      ARROW_ASSIGN_OR_RAISE(auto combined, changed->CombineChunksToBatch());
      std::vector<int64_t> order(updated_rows.size());
      std::iota(order.begin(), order.end(), int64_t{0});
      std::sort(order.begin(), order.end(),
                [&](int64_t a, int64_t b) { return updated_rows[a] < updated_rows[b]; });
      ARROW_ASSIGN_OR_RAISE(auto new_rows, TakeRows(combined, order));
      ARROW_RETURN_NOT_OK(rewriter.Change(file, *drop_mask, *replace_mask, new_rows));
    }
    lane_rewrite_time += std::chrono::steady_clock::now() - t0;
    return arrow::Status::OK();
  };

  IdentityColumns* identity = plan.identity ? &*plan.identity : nullptr;
  auto insert_unmatched = [&]() -> arrow::Status {
    if (!has_not_matched) return arrow::Status::OK();
    std::vector<int64_t> unmatched;
    for (int64_t r = 0; r < num_source; ++r) {
      bool matched = false;
      for (const auto& l : lane_states) matched = matched || l.source_matched[r];
      if (!matched) unmatched.push_back(r);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t from = 0; from < unmatched.size(); from += kChunkRows) {
      const size_t to = std::min(unmatched.size(), from + static_cast<size_t>(kChunkRows));
      std::vector<int64_t> chunk(unmatched.begin() + from, unmatched.begin() + to);
      ARROW_ASSIGN_OR_RAISE(auto s_rows, TakeRows(source, chunk));
      ARROW_ASSIGN_OR_RAISE(auto pairs, PairRows(plan.sides, nullptr, s_rows,
                                                 static_cast<int64_t>(chunk.size())));
      auto choice = ChooseClauses(plan, Kind::kNotMatched, pairs);
      if (!choice.ok()) {
        return choice.status().WithMessage(context + choice.status().message());
      }
      std::map<int, std::vector<int64_t>> by_clause;
      for (size_t r = 0; r < chunk.size(); ++r) {
        if ((*choice)[r] >= 0) by_clause[(*choice)[r]].push_back(static_cast<int64_t>(r));
      }
      for (const auto& [k, rows_of] : by_clause) {
        ARROW_ASSIGN_OR_RAISE(auto clause_pairs, TakeRows(pairs, rows_of));
        ARROW_ASSIGN_OR_RAISE(auto rows, NewRows(plan, plan.clauses[k], clause_pairs, nullptr,
                                                 identity, snapshot, context));
        ARROW_RETURN_NOT_OK(inserts.Write(rows));
      }
    }
    rewrite_time += std::chrono::steady_clock::now() - t0;
    return arrow::Status::OK();
  };

  auto run = [&]() -> arrow::Status {
    if (num_source > 0 || has_by_source) {
      ARROW_RETURN_NOT_OK(ForEachCandidateInLanes(op, all, lanes, merge_file));
    }
    // The lanes' rewrite time ran side by side: the time of an average lane counts, so that
    // scan and rewrite times add up to the execution time.
    std::chrono::steady_clock::duration lanes_time{};
    for (const auto& l : lane_states) {
      lanes_time += l.rewrite_time;
      metrics.num_target_rows_matched_updated += l.counts.num_target_rows_matched_updated;
      metrics.num_target_rows_matched_deleted += l.counts.num_target_rows_matched_deleted;
      metrics.num_target_rows_not_matched_by_source_updated +=
          l.counts.num_target_rows_not_matched_by_source_updated;
      metrics.num_target_rows_not_matched_by_source_deleted +=
          l.counts.num_target_rows_not_matched_by_source_deleted;
    }
    rewrite_time += lanes_time / lanes;
    return insert_unmatched();
  };
  auto run_status = run();
  if (!run_status.ok()) inserts.Abort();
  ARROW_ASSIGN_OR_RAISE(auto outcome, FinishRewrite(op, run_status, &rewrite_time));
  {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<AddFile> insert_adds;
    std::vector<CdcFile> insert_changes;
    // A commit with cdc files must describe every change in them: the inserts too.
    auto st = inserts.Finish(!outcome.change_files.empty(), &insert_adds, &insert_changes);
    if (!st.ok()) {
      inserts.Abort();
      (void)op.rewriter->Abort();
      return st;
    }
    metrics.num_target_rows_inserted = inserts.rows();
    metrics.num_target_files_added = outcome.added_files + static_cast<int64_t>(insert_adds.size());
    metrics.num_target_bytes_added = outcome.added_bytes;
    for (const auto& a : insert_adds) metrics.num_target_bytes_added += a.size;
    for (auto& a : insert_adds) outcome.adds.push_back(std::move(a));
    for (auto& c : insert_changes) outcome.change_files.push_back(std::move(c));
    rewrite_time += std::chrono::steady_clock::now() - t0;
  }
  metrics.num_target_rows_updated = metrics.num_target_rows_matched_updated +
                                    metrics.num_target_rows_not_matched_by_source_updated;
  metrics.num_target_rows_deleted = metrics.num_target_rows_matched_deleted +
                                    metrics.num_target_rows_not_matched_by_source_deleted;
  metrics.num_target_rows_copied = outcome.copied_rows;
  metrics.num_output_rows = metrics.num_target_rows_inserted + metrics.num_target_rows_updated +
                            metrics.num_target_rows_copied;
  metrics.num_target_files_removed = outcome.removed_files;
  metrics.num_target_bytes_removed = outcome.removed_bytes;
  metrics.num_target_deletion_vectors_added = outcome.deletion_vectors_added;
  metrics.num_target_deletion_vectors_removed = outcome.deletion_vectors_removed;
  metrics.num_target_deletion_vectors_updated = outcome.deletion_vectors_updated;
  metrics.num_target_change_files_added = static_cast<int64_t>(outcome.change_files.size());
  metrics.rewrite_time_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(rewrite_time).count();
  metrics.execution_time_ms = MillisSince(start);
  metrics.scan_time_ms = std::max<int64_t>(0, metrics.execution_time_ms - metrics.rewrite_time_ms);
  const std::map<std::string, std::string> parameters = {
      {"predicate", JsonStringArray({*on_})},
      {"matchedPredicates", ClausePredicates(clauses_, Kind::kMatched)},
      {"notMatchedPredicates", ClausePredicates(clauses_, Kind::kNotMatched)},
      {"notMatchedBySourcePredicates", ClausePredicates(clauses_, Kind::kNotMatchedBySource)},
  };
  // The schema to commit: evolved by the source's new columns, and with the high-water marks
  // generated identity values moved.
  const bool evolved = !plan.sides.target->Equals(*snapshot.schema(), /*check_metadata=*/true);
  std::shared_ptr<arrow::Schema> committed_schema = evolved ? plan.sides.target : nullptr;
  if (identity) {
    auto with_hwm = identity->UpdatedSchema(plan.sides.target);
    if (!with_hwm.ok()) {
      inserts.Abort();
      (void)op.rewriter->Abort();
      return with_hwm.status();
    }
    if (*with_hwm) committed_schema = *with_hwm;
  }
  if (committed_schema) {
    auto schema_string = SchemaToDeltaJson(*committed_schema);
    if (!schema_string.ok()) {
      inserts.Abort();
      (void)op.rewriter->Abort();
      return schema_string.status();
    }
    Metadata metadata = snapshot.metadata();
    metadata.schema_string = std::move(*schema_string);
    // New columns may use types the protocol does not support yet (timestamp_ntz, say):
    // raise it with the metadata, never lower it.
    auto required = RequiredProtocol(*committed_schema, metadata.configuration, {});
    if (!required.ok()) {
      inserts.Abort();
      (void)op.rewriter->Abort();
      return required.status();
    }
    const Protocol raised = MergeProtocols(snapshot.protocol(), *required);
    if (!SameProtocol(raised, snapshot.protocol())) op.txn->UpdateProtocol(raised);
    op.txn->UpdateMetadata(std::move(metadata));
  }
  auto committed = CommitUnlessUnchanged(op, std::move(outcome), parameters, metrics.Named());
  if (!committed.ok()) {
    if (!IsDeltaError(committed.status(), DeltaErrorCode::kCommitStateUnknown)) inserts.Abort();
    return committed.status();
  }
  metrics.version = *committed;
  return metrics;
}

}  // namespace deltacpp
