#include "expr/bound_expr.h"

#include "expr/coerce.h"

namespace deltacpp::internal {

namespace {

std::string JoinPath(const std::vector<std::string>& parts, bool quote) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += '.';
    out += quote ? QuoteIdentifier(p) : p;
  }
  return out;
}

void CollectColumns(const BoundExpr& e, std::vector<BoundColumn>* out) {
  if (e.kind == BoundKind::kColumn) {
    for (const auto& c : *out) {
      if (c.logical_path == e.column.logical_path) return;
    }
    out->push_back(e.column);
    return;
  }
  for (const auto& child : e.children) CollectColumns(child, out);
}

}  // namespace

std::string BoundColumn::LogicalName() const { return JoinPath(logical_path, false); }
std::string BoundColumn::PhysicalName() const { return JoinPath(physical_path, false); }

std::string BoundExpr::ToString() const {
  auto child = [&](size_t i) { return children[i].ToString(); };
  switch (kind) {
    case BoundKind::kLiteral: return LiteralToSql(*literal);
    case BoundKind::kColumn: return JoinPath(column.logical_path, true);
    case BoundKind::kCast: return "CAST(" + child(0) + " AS " + SqlTypeName(*type) + ")";
    case BoundKind::kComparison:
      return "(" + child(0) + " " + CompareOpSymbol(compare_op) + " " + child(1) + ")";
    case BoundKind::kAnd: return "(" + child(0) + " AND " + child(1) + ")";
    case BoundKind::kOr: return "(" + child(0) + " OR " + child(1) + ")";
    case BoundKind::kNot: return "(NOT " + child(0) + ")";
    case BoundKind::kIsNull: return "(" + child(0) + " IS NULL)";
    case BoundKind::kIsNotNull: return "(" + child(0) + " IS NOT NULL)";
    case BoundKind::kIn: {
      std::string out = "(" + child(0) + " IN (";
      for (size_t i = 1; i < children.size(); ++i) {
        if (i > 1) out += ", ";
        out += child(i);
      }
      return out + "))";
    }
    case BoundKind::kArithmetic:
      return "(" + child(0) + " " + ArithOpSymbol(arith_op) + " " + child(1) + ")";
    case BoundKind::kNegate: return "(- " + child(0) + ")";
    case BoundKind::kCase: {
      std::string out = "CASE";
      for (size_t i = 0; i + 1 < children.size(); i += 2) {
        out += " WHEN " + child(i) + " THEN " + child(i + 1);
      }
      return out + " ELSE " + children.back().ToString() + " END";
    }
    case BoundKind::kFunction: {
      std::string out = function + "(";
      for (size_t i = 0; i < children.size(); ++i) {
        if (i > 0) out += ", ";
        out += child(i);
      }
      return out + ")";
    }
  }
  return "?";
}

std::vector<BoundColumn> ReferencedColumns(const BoundExpr& expr) {
  std::vector<BoundColumn> out;
  CollectColumns(expr, &out);
  return out;
}

}  // namespace deltacpp::internal
