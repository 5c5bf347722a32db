#include "scan/stats_prefilter.h"

#include <arrow/compute/api.h>

#include <string>

namespace deltacpp::internal {

namespace {

void Conjuncts(const BoundExpr& e, std::vector<const BoundExpr*>* out) {
  if (e.kind == BoundKind::kAnd) {
    for (const auto& c : e.children) Conjuncts(c, out);
    return;
  }
  out->push_back(&e);
}

bool BoundsAreExact(const arrow::DataType& type) {
  // Integer and date statistics are exact bounds; floating point (NaN), strings (truncated),
  // timestamps (truncated to milliseconds) and the rest are left to the file-by-file rules.
  return arrow::is_integer(type.id()) || type.id() == arrow::Type::DATE32;
}

// The leaf `path` (dot-joined) of the struct `array`, or null.
std::shared_ptr<arrow::Array> Leaf(const std::shared_ptr<arrow::Array>& array,
                                   const std::vector<std::string>& path) {
  std::shared_ptr<arrow::Array> node = array;
  for (const auto& name : path) {
    if (!node || node->type_id() != arrow::Type::STRUCT) return nullptr;
    node = static_cast<const arrow::StructArray&>(*node).GetFieldByName(name);
  }
  return node;
}

arrow::Result<std::shared_ptr<arrow::Array>> Compare(const char* function,
                                                     const std::shared_ptr<arrow::Array>& bound,
                                                     const std::shared_ptr<arrow::Scalar>& literal) {
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::compute::CallFunction(function, {bound, literal}));
  return out.make_array();
}

}  // namespace

arrow::Result<std::vector<bool>> SkippedByBounds(const BoundExpr& predicate,
                                                 const arrow::StructArray& stats) {
  std::vector<const BoundExpr*> conjuncts;
  Conjuncts(predicate, &conjuncts);
  const auto mins = stats.GetFieldByName("minValues");
  const auto maxes = stats.GetFieldByName("maxValues");
  std::vector<bool> skip;
  for (const BoundExpr* c : conjuncts) {
    if (c->kind != BoundKind::kComparison || c->children.size() != 2) continue;
    const BoundExpr* column = &c->children[0];
    const BoundExpr* literal = &c->children[1];
    CompareOp op = c->compare_op;
    if (column->kind == BoundKind::kLiteral) {
      std::swap(column, literal);
      op = FlipCompareOp(op);
    }
    if (column->kind != BoundKind::kColumn || literal->kind != BoundKind::kLiteral) continue;
    if (!literal->literal || !literal->literal->is_valid) continue;
    if (!BoundsAreExact(*column->column.type)) continue;
    auto min = Leaf(mins, column->column.physical_path);
    auto max = Leaf(maxes, column->column.physical_path);
    if (!min || !max || !min->type()->Equals(*literal->literal->type) ||
        !max->type()->Equals(*literal->literal->type)) {
      continue;
    }
    // The rows where the conjunct is false for every value in [min, max].
    // (a bound, the comparison with the literal that proves it) per operator.
    const char* on_min = nullptr;  // min <fn> literal proves the conjunct false everywhere
    const char* on_max = nullptr;  // max <fn> literal proves it
    if (op == CompareOp::kEq) {
      on_min = "greater";
      on_max = "less";
    } else if (op == CompareOp::kLt) {
      on_min = "greater_equal";
    } else if (op == CompareOp::kLe) {
      on_min = "greater";
    } else if (op == CompareOp::kGt) {
      on_max = "less_equal";
    } else if (op == CompareOp::kGe) {
      on_max = "less";
    } else {
      continue;
    }
    std::shared_ptr<arrow::Array> none;
    if (on_min) {
      ARROW_ASSIGN_OR_RAISE(none, Compare(on_min, min, literal->literal));
    }
    if (on_max) {
      ARROW_ASSIGN_OR_RAISE(auto by_max, Compare(on_max, max, literal->literal));
      if (none) {
        ARROW_ASSIGN_OR_RAISE(auto either, arrow::compute::Or(none, by_max));
        none = either.make_array();
      } else {
        none = by_max;
      }
    }
    if (skip.empty()) skip.assign(static_cast<size_t>(stats.length()), false);
    const auto& flags = static_cast<const arrow::BooleanArray&>(*none);
    for (int64_t i = 0; i < flags.length(); ++i) {
      // A null comparison (an unknown bound) proves nothing; nor does a row without statistics,
      // whose child values are placeholders.
      if (flags.IsValid(i) && flags.Value(i) && stats.IsValid(i)) skip[i] = true;
    }
  }
  return skip;
}

}  // namespace deltacpp::internal
