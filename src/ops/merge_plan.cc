#include "ops/merge_plan.h"

#include <fmt/core.h>

#include <functional>

#include "deltacpp/error.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

// `expr` rebuilt with every column node replaced by `column(node)`.
using ColumnMap = std::function<arrow::Result<ExprPtr>(const Expr&)>;

arrow::Result<ExprPtr> MapColumns(const ExprPtr& expr, const ColumnMap& column) {
  if (expr->kind() == ExprKind::kColumn) return column(*expr);
  if (expr->kind() == ExprKind::kLiteral) return expr;
  std::vector<ExprPtr> c;
  for (const auto& child : expr->children()) {
    ARROW_ASSIGN_OR_RAISE(auto mapped, MapColumns(child, column));
    c.push_back(std::move(mapped));
  }
  const size_t pos = expr->position();
  switch (expr->kind()) {
    case ExprKind::kComparison: return Expr::MakeComparison(expr->compare_op(), c[0], c[1], pos);
    case ExprKind::kAnd: return Expr::MakeAnd(c[0], c[1], pos);
    case ExprKind::kOr: return Expr::MakeOr(c[0], c[1], pos);
    case ExprKind::kNot: return Expr::MakeNot(c[0], pos);
    case ExprKind::kIsNull: return Expr::MakeIsNull(c[0], expr->negated(), pos);
    case ExprKind::kIn: {
      std::vector<ExprPtr> list(c.begin() + 1, c.end());
      return Expr::MakeIn(c[0], std::move(list), expr->negated(), pos);
    }
    case ExprKind::kBetween: return Expr::MakeBetween(c[0], c[1], c[2], expr->negated(), pos);
    case ExprKind::kArithmetic: return Expr::MakeArithmetic(expr->arith_op(), c[0], c[1], pos);
    case ExprKind::kNegate: return Expr::MakeNegate(c[0], pos);
    case ExprKind::kFunction: return Expr::MakeFunction(expr->function_name(), std::move(c), pos);
    default: break;
  }
  return arrow::Status::Invalid("unexpected expression node ", expr->ToString());
}

bool HasColumn(const arrow::Schema& schema, const std::string& name) {
  for (const auto& f : schema.fields()) {
    if (EqualsIgnoreCase(f->name(), name)) return true;
  }
  return false;
}

std::string ColumnList(const arrow::Schema& schema) {
  std::string out;
  for (const auto& f : schema.fields()) out += (out.empty() ? "" : ", ") + f->name();
  return out.empty() ? "(none)" : out;
}

}  // namespace

arrow::Result<MergeSides> MergeSides::Make(std::string target_alias, std::string source_alias,
                                           std::shared_ptr<arrow::Schema> target,
                                           std::shared_ptr<arrow::Schema> source) {
  if (target_alias.empty() || source_alias.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "an empty alias");
  }
  if (EqualsIgnoreCase(target_alias, source_alias)) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("the target and the source have the same alias '{}'",
                                  target_alias));
  }
  for (const auto& alias : {target_alias, source_alias}) {
    if (HasColumn(*target, alias)) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("the alias '{}' is also a column of the table; choose "
                                    "another alias",
                                    alias));
    }
  }
  MergeSides out;
  out.target_alias = std::move(target_alias);
  out.source_alias = std::move(source_alias);
  out.target = std::move(target);
  out.source = std::move(source);
  out.pair = arrow::schema(
      {arrow::field(out.target_alias, arrow::struct_(out.target->fields())),
       arrow::field(out.source_alias, arrow::struct_(out.source->fields()))});
  auto fields = out.target->fields();
  for (const auto& f : out.pair->fields()) fields.push_back(f);
  out.assign = arrow::schema(std::move(fields));
  return out;
}

arrow::Result<ExprPtr> QualifyColumns(const ExprPtr& expr, const MergeSides& sides,
                                      MergeScope scope, const std::string& what) {
  const bool target_visible = scope != MergeScope::kSourceOnly;
  const bool source_visible = scope != MergeScope::kTargetOnly;
  auto invalid = [&](const std::string& message) {
    return DeltaError(DeltaErrorCode::kInvalidExpression, fmt::format("{}: {}", what, message));
  };
  return MapColumns(expr, [&](const Expr& column) -> arrow::Result<ExprPtr> {
    const auto& path = column.column_path();
    std::string shown;
    for (const auto& p : path) shown += (shown.empty() ? "" : ".") + p;
    if (path.size() >= 2) {
      for (const bool target : {true, false}) {
        const std::string& alias = target ? sides.target_alias : sides.source_alias;
        if (!EqualsIgnoreCase(path[0], alias)) continue;
        if (!(target ? target_visible : source_visible)) {
          return invalid(fmt::format("column {} names the {}, which this clause cannot see",
                                     shown, target ? "target" : "source"));
        }
        std::vector<std::string> qualified = path;
        qualified[0] = alias;
        return Expr::MakeColumn(std::move(qualified), column.position());
      }
    }
    const bool in_target = target_visible && HasColumn(*sides.target, path[0]);
    const bool in_source = source_visible && HasColumn(*sides.source, path[0]);
    if (in_target && in_source) {
      return invalid(fmt::format("column {} is ambiguous: both the target and the source have "
                                 "it; write {}.{} or {}.{}",
                                 shown, sides.target_alias, shown, sides.source_alias, shown));
    }
    if (!in_target && !in_source) {
      std::string available;
      if (target_visible) {
        available += fmt::format("target {} ({})", sides.target_alias, ColumnList(*sides.target));
      }
      if (source_visible) {
        available += fmt::format("{}source {} ({})", available.empty() ? "" : "; ",
                                 sides.source_alias, ColumnList(*sides.source));
      }
      return invalid(fmt::format("cannot resolve column {}; available: {}", shown, available));
    }
    std::vector<std::string> qualified;
    qualified.push_back(in_target ? sides.target_alias : sides.source_alias);
    qualified.insert(qualified.end(), path.begin(), path.end());
    return Expr::MakeColumn(std::move(qualified), column.position());
  });
}

arrow::Result<ExprPtr> StripAlias(const ExprPtr& expr) {
  return MapColumns(expr, [](const Expr& column) -> arrow::Result<ExprPtr> {
    const auto& path = column.column_path();
    if (path.size() < 2) return arrow::Status::Invalid("an unqualified column");
    return Expr::MakeColumn(std::vector<std::string>(path.begin() + 1, path.end()),
                            column.position());
  });
}

void SidesNamed(const Expr& expr, const MergeSides& sides, bool* target, bool* source) {
  if (expr.kind() == ExprKind::kColumn) {
    const auto& first = expr.column_path()[0];
    if (first == sides.target_alias) *target = true;
    if (first == sides.source_alias) *source = true;
    return;
  }
  for (const auto& c : expr.children()) SidesNamed(*c, sides, target, source);
}

std::vector<ExprPtr> SplitConjuncts(const ExprPtr& expr) {
  if (expr->kind() != ExprKind::kAnd) return {expr};
  auto left = SplitConjuncts(expr->children()[0]);
  auto right = SplitConjuncts(expr->children()[1]);
  left.insert(left.end(), right.begin(), right.end());
  return left;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> PairRows(
    const MergeSides& sides, const std::shared_ptr<arrow::RecordBatch>& target,
    const std::shared_ptr<arrow::RecordBatch>& source, int64_t num_rows) {
  arrow::ArrayVector columns;
  for (int side = 0; side < 2; ++side) {
    const auto& rows = side == 0 ? target : source;
    const auto& type = sides.pair->field(side)->type();
    if (!rows) {
      ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(type, num_rows));
      columns.push_back(std::move(nulls));
      continue;
    }
    if (rows->num_rows() != num_rows) {
      return arrow::Status::Invalid("merge rows of ", rows->num_rows(), " and ", num_rows,
                                    " rows");
    }
    ARROW_ASSIGN_OR_RAISE(auto structs,
                          arrow::StructArray::Make(rows->columns(), type->fields()));
    columns.push_back(std::move(structs));
  }
  return arrow::RecordBatch::Make(sides.pair, num_rows, std::move(columns));
}

}  // namespace deltacpp::internal
