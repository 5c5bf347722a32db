#include "expr/to_arrow.h"

#include <arrow/array/builder_base.h>
#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>

#include <limits>

#include "deltacpp/error.h"
#include "expr/coerce.h"

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

bool IsFloating(const BoundExpr& e) { return e.type && arrow::is_floating(e.type->id()); }

// Spark compares floating-point values with NaN equal to NaN and greater than everything else,
// where IEEE (and Arrow's kernels) make every comparison with NaN false. Both operands have one
// type. The plain (non-Kleene) and/or propagate NULL like the comparison kernels do.
cp::Expression SparkFloatCompare(CompareOp op, const cp::Expression& a, const cp::Expression& b) {
  auto a_nan = cp::call("is_nan", {a});
  auto b_nan = cp::call("is_nan", {b});
  switch (op) {
    case CompareOp::kEq:
    case CompareOp::kNullSafeEq:
      return cp::call("or", {cp::call("equal", {a, b}), cp::call("and", {a_nan, b_nan})});
    case CompareOp::kNe:
      return cp::call("invert", {SparkFloatCompare(CompareOp::kEq, a, b)});
    case CompareOp::kLt:
      return cp::call("or", {cp::call("less", {a, b}),
                             cp::call("and", {cp::call("invert", {a_nan}), b_nan})});
    case CompareOp::kLe: return cp::call("or", {cp::call("less_equal", {a, b}), b_nan});
    case CompareOp::kGt:
      return cp::call("or", {cp::call("greater", {a, b}),
                             cp::call("and", {a_nan, cp::call("invert", {b_nan})})});
    case CompareOp::kGe: return cp::call("or", {cp::call("greater_equal", {a, b}), a_nan});
  }
  return cp::call("equal", {a, b});
}

// `a op b` for operands of one type, NULL when either is NULL (`<=>` is handled by the caller).
cp::Expression CompareValues(CompareOp op, bool floating, const cp::Expression& a,
                             const cp::Expression& b) {
  if (floating) return SparkFloatCompare(op, a, b);
  return cp::call(ComparisonFunction(op), {a, b});
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
  // Arrow's set lookup hashes floating-point values bitwise (-0.0 differs from 0.0), so
  // floating-point lists take the chain of Spark equalities below.
  if (all_literal && !IsFloating(value)) {
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
    auto eq = CompareValues(CompareOp::kEq, IsFloating(value), value_expr, item);
    out = out ? cp::call("or_kleene", {std::move(*out), std::move(eq)}) : std::move(eq);
  }
  return *out;
}

arrow::Result<cp::Expression> TranslateComparison(const BoundExpr& e) {
  ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
  const bool floating = IsFloating(e.children[0]);
  if (e.compare_op != CompareOp::kNullSafeEq) {
    return CompareValues(e.compare_op, floating, args[0], args[1]);
  }
  const bool left_null = IsNullLiteral(e.children[0]);
  const bool right_null = IsNullLiteral(e.children[1]);
  if (left_null && right_null) return cp::literal(true);
  if (left_null) return cp::call("is_null", {args[1]});
  if (right_null) return cp::call("is_null", {args[0]});
  // Equal when both are present; otherwise equal exactly when both are missing.
  auto both_null = cp::call("and", {cp::call("is_null", {args[0]}), cp::call("is_null", {args[1]})});
  return cp::call("coalesce",
                  {CompareValues(CompareOp::kEq, floating, args[0], args[1]),
                   std::move(both_null)});
}

arrow::Result<cp::Expression> TranslateArithmetic(const BoundExpr& e) {
  ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
  switch (e.arith_op) {
    case ArithOp::kDiv:
      // Spark 4 runs ANSI SQL by default: division by zero is an error, not NULL.
      return cp::call("divide_checked", std::move(args));
    case ArithOp::kMod: {
      // Integral only (see the binder): a - (a / b) * b, with Arrow's integer division
      // truncating toward zero, gives the remainder with the sign of the dividend, as in Spark.
      // A zero divisor is an error, as under ANSI SQL.
      auto quotient = cp::call("divide_checked", args);
      return cp::call("subtract_checked",
                      {args[0], cp::call("multiply_checked", {std::move(quotient), args[1]})});
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

std::string_view StringLiteral(const BoundExpr& e) {
  return static_cast<const arrow::BaseBinaryScalar&>(*e.literal).view();
}

int64_t IntLiteral(const BoundExpr& e) {
  return static_cast<const arrow::Int64Scalar&>(*e.literal).value;
}

// Spark's substring(s, pos[, len]): 1-based; 0 acts as 1; negative counts from the end.
cp::Expression Substring(cp::Expression s, int64_t pos, std::optional<int64_t> len) {
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  const int64_t start = pos > 0 ? pos - 1 : pos;  // Arrow: negative starts count from the end
  int64_t stop = kToEnd;
  if (len) {
    if (*len <= 0) return cp::call("utf8_slice_codeunits", {std::move(s)},
                                   cp::SliceOptions(0, 0));
    if (start >= 0) {
      stop = *len > kToEnd - start ? kToEnd : start + *len;
    } else if (start + *len < 0) {
      stop = start + *len;  // ends before the last character, counted from the end too
    }
  }
  return cp::call("utf8_slice_codeunits", {std::move(s)}, cp::SliceOptions(start, stop));
}

arrow::Result<cp::Expression> TranslateFunction(const BoundExpr& e) {
  if (e.function == "like") {
    ARROW_ASSIGN_OR_RAISE(auto value, Translate(e.children[0]));
    return cp::call("match_like", {std::move(value)},
                    cp::MatchSubstringOptions(std::string(StringLiteral(e.children[1]))));
  }
  if (e.function == "substring") {
    ARROW_ASSIGN_OR_RAISE(auto value, Translate(e.children[0]));
    std::optional<int64_t> len;
    if (e.children.size() > 2) len = IntLiteral(e.children[2]);
    return Substring(std::move(value), IntLiteral(e.children[1]), len);
  }
  if (e.function == "replace") {
    ARROW_ASSIGN_OR_RAISE(auto value, Translate(e.children[0]));
    std::string search(StringLiteral(e.children[1]));
    if (search.empty()) return value;  // Spark leaves the string unchanged
    return cp::call("replace_substring", {std::move(value)},
                    cp::ReplaceSubstringOptions(std::move(search),
                                                std::string(StringLiteral(e.children[2]))));
  }
  ARROW_ASSIGN_OR_RAISE(auto args, TranslateChildren(e));
  // Spark's trim functions remove spaces only, not other whitespace.
  if (e.function == "trim") return cp::call("utf8_trim", std::move(args), cp::TrimOptions(" "));
  if (e.function == "ltrim") return cp::call("utf8_ltrim", std::move(args), cp::TrimOptions(" "));
  if (e.function == "rtrim") return cp::call("utf8_rtrim", std::move(args), cp::TrimOptions(" "));
  if (e.function == "concat") {
    // NULL when any argument is NULL, as in Spark.
    args.push_back(cp::literal(std::make_shared<arrow::StringScalar>("")));
    return cp::call("binary_join_element_wise", std::move(args), cp::JoinOptions());
  }
  if (e.function == "year" || e.function == "month" || e.function == "day" ||
      e.function == "hour" || e.function == "minute" || e.function == "second") {
    return cp::call("cast", {cp::call(e.function, std::move(args))},
                    cp::CastOptions::Safe(arrow::int32()));
  }
  auto days = [](cp::Expression date) {
    return cp::call("cast", {std::move(date)}, cp::CastOptions::Safe(arrow::int32()));
  };
  if (e.function == "date_add" || e.function == "date_sub") {
    auto shifted = cp::call(e.function == "date_add" ? "add_checked" : "subtract_checked",
                            {days(args[0]), args[1]});
    return cp::call("cast", {std::move(shifted)}, cp::CastOptions::Safe(arrow::date32()));
  }
  if (e.function == "datediff") return cp::call("subtract_checked", {days(args[0]), days(args[1])});
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

// CAST(x AS t) as Spark runs it under ANSI SQL (its default since Spark 4): text that does not
// convert and values out of the target's range are errors; fractions are truncated toward zero
// when converting to an integral type; surrounding spaces are ignored when reading numbers,
// booleans and dates from text; a timestamp keeps its date part.
cp::Expression ExplicitCast(cp::Expression x, const arrow::DataType& from,
                            const std::shared_ptr<arrow::DataType>& to) {
  auto options = cp::CastOptions::Safe(to);
  if (IsStringType(from) && !IsStringType(*to) && !IsBinaryType(*to)) {
    x = cp::call("utf8_trim_whitespace", {std::move(x)});
  }
  if (IsStringType(from) && to->id() == arrow::Type::BOOL) {
    // Spark's words for TRUE and FALSE, case-insensitively; anything else still fails the cast.
    auto word = cp::call("utf8_lower", {x});
    auto in = [&](std::vector<std::string> words) {
      arrow::StringBuilder b;
      for (const auto& w : words) (void)b.Append(w);
      std::shared_ptr<arrow::Array> set;
      (void)b.Finish(&set);
      return cp::call("is_in", {word}, cp::SetLookupOptions(set));
    };
    x = cp::call("if_else", {in({"t", "true", "y", "yes", "1"}), cp::literal("true"),
                             cp::call("if_else", {in({"f", "false", "n", "no", "0"}),
                                                  cp::literal("false"), x})});
  }
  if (arrow::is_floating(from.id()) && IsIntegralType(*to)) {
    // Truncate first so that only an out-of-range value (or NaN) fails the checked cast.
    x = cp::call("trunc", {std::move(x)});
  }
  if (IsDecimalType(from) && IsIntegralType(*to)) options.allow_decimal_truncate = true;
  if (from.id() == arrow::Type::TIMESTAMP && to->id() == arrow::Type::DATE32) {
    options.allow_time_truncate = true;
  }
  return cp::call("cast", {std::move(x)}, std::move(options));
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
      if (e.explicit_cast) return ExplicitCast(std::move(x), *e.children[0].type, e.type);
      return cp::call("cast", {std::move(x)}, cp::CastOptions::Safe(e.type));
    }
    case BoundKind::kCase: {
      // Built from the ELSE value outwards; a NULL condition does not pick its branch.
      ARROW_ASSIGN_OR_RAISE(auto out, Translate(e.children.back()));
      for (size_t i = e.children.size() - 1; i >= 2; i -= 2) {
        ARROW_ASSIGN_OR_RAISE(auto condition, Translate(e.children[i - 2]));
        ARROW_ASSIGN_OR_RAISE(auto value, Translate(e.children[i - 1]));
        out = cp::call("if_else", {cp::call("coalesce", {std::move(condition), cp::literal(false)}),
                                   std::move(value), std::move(out)});
      }
      return out;
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
