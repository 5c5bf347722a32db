#include "expr/to_arrow.h"

#include <arrow/array/builder_base.h>
#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>

#include "deltacpp/error.h"

namespace deltacpp::internal {

namespace {

namespace cp = arrow::compute;

arrow::Status EnsureComputeRegistered() {
  static const arrow::Status status = cp::Initialize();
  return status;
}

const char* ComparisonFunction(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
    case CompareOp::kNullSafeEq: return "equal";
    case CompareOp::kNe: return "not_equal";
    case CompareOp::kLt: return "less";
    case CompareOp::kLe: return "less_equal";
    case CompareOp::kGt: return "greater";
    case CompareOp::kGe: return "greater_equal";
  }
  return "equal";
}

bool IsNullLiteral(const BoundExpr& e) {
  return e.kind == BoundKind::kLiteral && !e.literal->is_valid;
}

arrow::Result<cp::Expression> Translate(const BoundExpr& e);

arrow::Result<std::vector<cp::Expression>> TranslateChildren(const BoundExpr& e) {
  std::vector<cp::Expression> out;
  out.reserve(e.children.size());
  for (const auto& child : e.children) {
    ARROW_ASSIGN_OR_RAISE(auto x, Translate(child));
    out.push_back(std::move(x));
  }
  return out;
}

arrow::Result<cp::Expression> TranslateIn(const BoundExpr& e) {
  const BoundExpr& value = e.children[0];
  ARROW_ASSIGN_OR_RAISE(auto value_expr, Translate(value));
  bool all_literal = true;
  for (size_t i = 1; i < e.children.size(); ++i) {
    all_literal = all_literal && e.children[i].kind == BoundKind::kLiteral;
  }
  if (all_literal) {
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), value.type, &builder));
    for (size_t i = 1; i < e.children.size(); ++i) {
      ARROW_RETURN_NOT_OK(builder->AppendScalar(*e.children[i].literal));
    }
    ARROW_ASSIGN_OR_RAISE(auto value_set, builder->Finish());
    return cp::call("is_in", {std::move(value_expr)},
                    cp::SetLookupOptions(value_set, cp::SetLookupOptions::INCONCLUSIVE));
  }
  // Non-constant list: a chain of equalities gives the same three-valued result.
  std::optional<cp::Expression> out;
  for (size_t i = 1; i < e.children.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto item, Translate(e.children[i]));
    auto eq = cp::call("equal", {value_expr, std::move(item)});
    out = out ? cp::call("or_kleene", {std::move(*out), std::move(eq)}) : std::move(eq);
  }
  return *out;
}

arrow::Result<cp::Expression> TranslateComparison(const BoundExpr& e) {
  ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
  if (e.compare_op != CompareOp::kNullSafeEq) {
    return cp::call(ComparisonFunction(e.compare_op), std::move(args));
  }
  const bool left_null = IsNullLiteral(e.children[0]);
  const bool right_null = IsNullLiteral(e.children[1]);
  if (left_null && right_null) return cp::literal(true);
  if (left_null) return cp::call("is_null", {args[1]});
  if (right_null) return cp::call("is_null", {args[0]});
  // Equal when both are present; otherwise equal exactly when both are missing.
  auto both_null = cp::call("and", {cp::call("is_null", {args[0]}), cp::call("is_null", {args[1]})});
  return cp::call("coalesce", {cp::call("equal", args), std::move(both_null)});
}

arrow::Result<cp::Expression> TranslateArithmetic(const BoundExpr& e) {
  ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
  switch (e.arith_op) {
    case ArithOp::kDiv: {
      // Division by zero yields NULL, as in Spark.
      auto zero = cp::call("equal", {args[1], cp::literal(0.0)});
      auto quotient = cp::call("divide", args);
      return cp::call("if_else", {std::move(zero), cp::literal(arrow::MakeNullScalar(e.type)),
                                  std::move(quotient)});
    }
    case ArithOp::kAdd:
    case ArithOp::kSub:
    case ArithOp::kMul: {
      const char* fn = e.arith_op == ArithOp::kAdd   ? "add_checked"
                       : e.arith_op == ArithOp::kSub ? "subtract_checked"
                                                     : "multiply_checked";
      auto out = cp::call(fn, std::move(args));
      if (arrow::is_decimal(e.type->id())) {
        return cp::call("cast", {std::move(out)}, cp::CastOptions::Safe(e.type));
      }
      return out;
    }
  }
  return arrow::Status::Invalid("unknown arithmetic operator");
}

arrow::Result<cp::Expression> TranslateFunction(const BoundExpr& e) {
  ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
  if (e.function == "lower") return cp::call("utf8_lower", std::move(args));
  if (e.function == "upper") return cp::call("utf8_upper", std::move(args));
  if (e.function == "abs") return cp::call("abs_checked", std::move(args));
  if (e.function == "coalesce") return cp::call("coalesce", std::move(args));
  if (e.function == "length") {
    return cp::call("cast", {cp::call("utf8_length", std::move(args))},
                    cp::CastOptions::Safe(arrow::int32()));
  }
  return DeltaError(DeltaErrorCode::kInvalidExpression,
                    "function '" + e.function + "' cannot be evaluated");
}

arrow::Result<cp::Expression> Translate(const BoundExpr& e) {
  switch (e.kind) {
    case BoundKind::kLiteral: return cp::literal(arrow::Datum(e.literal));
    case BoundKind::kColumn: {
      std::vector<arrow::FieldRef> refs(e.column.logical_path.begin(),
                                        e.column.logical_path.end());
      return cp::field_ref(arrow::FieldRef(std::move(refs)));
    }
    case BoundKind::kCast: {
      ARROW_ASSIGN_OR_RAISE(auto x, Translate(e.children[0]));
      return cp::call("cast", {std::move(x)}, cp::CastOptions::Safe(e.type));
    }
    case BoundKind::kComparison: return TranslateComparison(e);
    case BoundKind::kAnd:
    case BoundKind::kOr: {
      ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
      return cp::call(e.kind == BoundKind::kAnd ? "and_kleene" : "or_kleene", std::move(args));
    }
    case BoundKind::kNot: {
      ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
      return cp::call("invert", std::move(args));
    }
    case BoundKind::kIsNull:
    case BoundKind::kIsNotNull: {
      ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
      return cp::call(e.kind == BoundKind::kIsNull ? "is_null" : "is_valid", std::move(args));
    }
    case BoundKind::kIn: return TranslateIn(e);
    case BoundKind::kArithmetic: return TranslateArithmetic(e);
    case BoundKind::kNegate: {
      ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
      return cp::call("negate_checked", std::move(args));
    }
    case BoundKind::kFunction: return TranslateFunction(e);
  }
  return arrow::Status::Invalid("unknown bound expression kind");
}

}  // namespace

arrow::Result<cp::Expression> ToArrowExpression(const BoundExpr& expr) {
  ARROW_RETURN_NOT_OK(EnsureComputeRegistered());
  return Translate(expr);
}

arrow::Result<cp::Expression> ToArrowFilter(const BoundExpr& predicate) {
  if (!predicate.type || predicate.type->id() != arrow::Type::BOOL) {
    return DeltaError(DeltaErrorCode::kInvalidExpression,
                      "a filter must be BOOLEAN: " + predicate.ToString());
  }
  ARROW_ASSIGN_OR_RAISE(auto expr, ToArrowExpression(predicate));
  return cp::call("coalesce", {std::move(expr), cp::literal(false)});
}

}  // namespace deltacpp::internal
