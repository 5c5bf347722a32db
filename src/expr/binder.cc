#include "expr/binder.h"

#include "util/uri.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>

#include "deltacpp/error.h"
#include "expr/coerce.h"
#include "expr/like_pattern.h"
#include "expr/schema_ddl.h"
#include "expr/physical_name.h"

namespace deltacpp::internal {

namespace {

constexpr int32_t kMaxDecimalPrecision = 38;

std::string JoinNames(const arrow::FieldVector& fields) {
  constexpr size_t kMaxListed = 50;
  std::string out;
  for (size_t i = 0; i < fields.size() && i < kMaxListed; ++i) {
    if (i > 0) out += ", ";
    out += fields[i]->name();
  }
  if (fields.size() > kMaxListed) out += ", ...";
  if (fields.empty()) out = "(none)";
  return out;
}

std::string JoinPath(const std::vector<std::string>& parts, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < parts.size(); ++i) {
    if (i > 0) out += '.';
    out += parts[i];
  }
  return out;
}

BoundExpr MakeLiteral(std::shared_ptr<arrow::Scalar> value) {
  BoundExpr e;
  e.kind = BoundKind::kLiteral;
  e.type = value->type;
  e.literal = std::move(value);
  return e;
}

BoundExpr MakeNode(BoundKind kind, std::shared_ptr<arrow::DataType> type,
                   std::vector<BoundExpr> children) {
  BoundExpr e;
  e.kind = kind;
  e.type = std::move(type);
  e.children = std::move(children);
  return e;
}

BoundExpr MakeCast(BoundExpr operand, std::shared_ptr<arrow::DataType> type) {
  std::vector<BoundExpr> children;
  children.push_back(std::move(operand));
  return MakeNode(BoundKind::kCast, std::move(type), std::move(children));
}

// "STRING column 's'", "INT literal 5", "BIGINT expression (a + 1)".
std::string Describe(const BoundExpr& e) {
  std::string type = SqlTypeName(*e.type);
  switch (e.kind) {
    case BoundKind::kColumn: return type + " column '" + e.column.LogicalName() + "'";
    case BoundKind::kLiteral:
      if (!e.literal->is_valid) return "NULL";
      return type + " literal " + LiteralToSql(*e.literal);
    default: return type + " expression " + e.ToString();
  }
}

class Binder {
 public:
  Binder(const arrow::Schema& schema, bool allow_current_time)
      : schema_(schema), allow_current_time_(allow_current_time) {}

  arrow::Result<BoundExpr> Visit(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kLiteral: return MakeLiteral(e.literal());
      case ExprKind::kColumn: return BindColumn(e);
      case ExprKind::kComparison: return BindComparison(e);
      case ExprKind::kAnd:
      case ExprKind::kOr: return BindLogical(e);
      case ExprKind::kNot: {
        ARROW_ASSIGN_OR_RAISE(auto operand, Visit(*e.children()[0]));
        ARROW_ASSIGN_OR_RAISE(operand, RequireBoolean(std::move(operand), e, "NOT needs a BOOLEAN operand"));
        std::vector<BoundExpr> children;
        children.push_back(std::move(operand));
        return MakeNode(BoundKind::kNot, arrow::boolean(), std::move(children));
      }
      case ExprKind::kIsNull: {
        ARROW_ASSIGN_OR_RAISE(auto operand, Visit(*e.children()[0]));
        if (operand.type->id() == arrow::Type::NA) {
          operand = MakeLiteral(arrow::MakeNullScalar(arrow::boolean()));
        }
        std::vector<BoundExpr> children;
        children.push_back(std::move(operand));
        return MakeNode(e.negated() ? BoundKind::kIsNotNull : BoundKind::kIsNull, arrow::boolean(),
                        std::move(children));
      }
      case ExprKind::kIn: return BindIn(e);
      case ExprKind::kBetween: return BindBetween(e);
      case ExprKind::kArithmetic: return BindArithmetic(e);
      case ExprKind::kNegate: return BindNegate(e);
      case ExprKind::kFunction: return BindFunction(e);
    }
    return Error(e, "unsupported expression");
  }

  arrow::Result<BoundExpr> RequireBoolean(BoundExpr operand, const Expr& at,
                                          std::string_view context) {
    if (operand.type->id() == arrow::Type::BOOL) return operand;
    if (operand.kind == BoundKind::kLiteral && !operand.literal->is_valid) {
      return MakeLiteral(arrow::MakeNullScalar(arrow::boolean()));
    }
    return Error(at, std::string(context) + ", got " + Describe(operand));
  }

 private:
  arrow::Status Error(const Expr& at, std::string message) const {
    message += " (at position " + std::to_string(at.position() + 1) + ")";
    return DeltaError(DeltaErrorCode::kInvalidExpression, std::move(message));
  }

  arrow::Result<BoundExpr> BindColumn(const Expr& e) {
    const auto& path = e.column_path();
    BoundColumn column;
    const arrow::FieldVector* fields = &schema_.fields();
    std::shared_ptr<arrow::Field> field;
    bool nullable = false;
    for (size_t i = 0; i < path.size(); ++i) {
      std::vector<std::shared_ptr<arrow::Field>> matches;
      for (const auto& f : *fields) {
        if (EqualsIgnoreCase(f->name(), path[i])) matches.push_back(f);
      }
      if (matches.empty()) {
        if (i == 0) {
          return Error(e, "column '" + JoinPath(path, path.size()) + "' not found; available: " +
                              JoinNames(*fields));
        }
        return Error(e, "column '" + JoinPath(path, path.size()) + "' not found: struct '" +
                            JoinPath(column.logical_path, i) + "' has no field '" + path[i] +
                            "'; available: " + JoinNames(*fields));
      }
      if (matches.size() > 1) {
        std::string names;
        for (const auto& m : matches) names += (names.empty() ? "'" : ", '") + m->name() + "'";
        return Error(e, "column reference '" + JoinPath(path, i + 1) +
                            "' is ambiguous: it matches " + names);
      }
      field = matches[0];
      column.logical_path.push_back(field->name());
      column.physical_path.push_back(PhysicalFieldName(*field));
      nullable = nullable || field->nullable();
      if (i + 1 < path.size()) {
        if (field->type()->id() != arrow::Type::STRUCT) {
          return Error(e, "cannot resolve '" + JoinPath(path, path.size()) + "': '" +
                              JoinPath(column.logical_path, i + 1) + "' is " +
                              SqlTypeName(*field->type()) + ", not a struct");
        }
        fields = &field->type()->fields();
      }
    }
    column.type = field->type();
    column.nullable = nullable;
    BoundExpr out;
    out.kind = BoundKind::kColumn;
    out.type = column.type;
    out.column = std::move(column);
    return out;
  }

  // Brings all operands to one type for comparing (or choosing between) them. Literals are
  // converted when the conversion is exact; other operands are wrapped in casts.
  arrow::Result<std::vector<BoundExpr>> CoerceToCommon(std::vector<BoundExpr> ops, const Expr& at) {
    auto is_literal = [](const BoundExpr& b) { return b.kind == BoundKind::kLiteral; };
    std::vector<std::shared_ptr<arrow::DataType>> candidates;
    for (const auto& op : ops) {
      if (!is_literal(op)) {
        candidates.push_back(op.type);
        break;
      }
    }
    for (const auto& op : ops) {
      if (is_literal(op) && op.literal->is_valid) candidates.push_back(op.type);
    }
    std::shared_ptr<arrow::DataType> target;
    arrow::Status first_failure;
    for (const auto& candidate : candidates) {
      bool fits = true;
      for (const auto& op : ops) {
        if (is_literal(op)) {
          auto converted = ConvertLiteral(op.literal, candidate);
          if (!converted.ok()) {
            // Why text did not parse is worth reporting; other failures are plain mismatches.
            if (first_failure.ok() && IsStringType(*op.type)) first_failure = converted.status();
            fits = false;
            break;
          }
        } else if (!op.type->Equals(*candidate)) {
          fits = false;
          break;
        }
      }
      if (fits) {
        target = candidate;
        break;
      }
    }
    if (!target) {
      target = arrow::null();
      for (size_t i = 0; i < ops.size(); ++i) {
        auto next = CommonType(target, ops[i].type);
        if (!next) {
          // Name the first operand whose type does not mix with the others.
          const BoundExpr* other = nullptr;
          for (size_t j = 0; j < ops.size(); ++j) {
            if (j != i && ops[j].type->id() != arrow::Type::NA) {
              other = &ops[j];
              break;
            }
          }
          std::string msg = "type mismatch in " + at.ToString() + ": cannot compare " +
                            (other ? Describe(*other) : SqlTypeName(*target)) + " with " +
                            Describe(ops[i]);
          if (!first_failure.ok()) msg += " (" + first_failure.message() + ")";
          return Error(at, msg);
        }
        target = next;
      }
    }
    if (target->id() == arrow::Type::NA) target = arrow::boolean();
    std::vector<BoundExpr> out;
    out.reserve(ops.size());
    for (auto& op : ops) {
      if (is_literal(op)) {
        auto converted = ConvertLiteral(op.literal, target);
        if (!converted.ok()) {
          return Error(at, "type mismatch in " + at.ToString() + ": " +
                               converted.status().message());
        }
        out.push_back(MakeLiteral(*converted));
      } else if (!op.type->Equals(*target)) {
        out.push_back(MakeCast(std::move(op), target));
      } else {
        out.push_back(std::move(op));
      }
    }
    return out;
  }

  arrow::Result<BoundExpr> MakeComparison(CompareOp op, BoundExpr left, BoundExpr right,
                                          const Expr& at) {
    std::vector<BoundExpr> ops;
    ops.push_back(std::move(left));
    ops.push_back(std::move(right));
    ARROW_ASSIGN_OR_RAISE(ops, CoerceToCommon(std::move(ops), at));
    if (!IsComparableType(*ops[0].type)) {
      return Error(at, "cannot compare values of type " + SqlTypeName(*ops[0].type) + " in " +
                           at.ToString());
    }
    BoundExpr out = MakeNode(BoundKind::kComparison, arrow::boolean(), std::move(ops));
    out.compare_op = op;
    return out;
  }

  arrow::Result<BoundExpr> BindComparison(const Expr& e) {
    ARROW_ASSIGN_OR_RAISE(auto left, Visit(*e.children()[0]));
    ARROW_ASSIGN_OR_RAISE(auto right, Visit(*e.children()[1]));
    return MakeComparison(e.compare_op(), std::move(left), std::move(right), e);
  }

  arrow::Result<BoundExpr> BindLogical(const Expr& e) {
    const char* name = e.kind() == ExprKind::kAnd ? "AND needs BOOLEAN operands"
                                                  : "OR needs BOOLEAN operands";
    ARROW_ASSIGN_OR_RAISE(auto left, Visit(*e.children()[0]));
    ARROW_ASSIGN_OR_RAISE(left, RequireBoolean(std::move(left), *e.children()[0], name));
    ARROW_ASSIGN_OR_RAISE(auto right, Visit(*e.children()[1]));
    ARROW_ASSIGN_OR_RAISE(right, RequireBoolean(std::move(right), *e.children()[1], name));
    std::vector<BoundExpr> children;
    children.push_back(std::move(left));
    children.push_back(std::move(right));
    return MakeNode(e.kind() == ExprKind::kAnd ? BoundKind::kAnd : BoundKind::kOr,
                    arrow::boolean(), std::move(children));
  }

  arrow::Result<BoundExpr> BindIn(const Expr& e) {
    std::vector<BoundExpr> ops;
    for (const auto& child : e.children()) {
      ARROW_ASSIGN_OR_RAISE(auto bound, Visit(*child));
      ops.push_back(std::move(bound));
    }
    ARROW_ASSIGN_OR_RAISE(ops, CoerceToCommon(std::move(ops), e));
    if (!IsComparableType(*ops[0].type)) {
      return Error(e, "cannot compare values of type " + SqlTypeName(*ops[0].type) + " in " +
                          e.ToString());
    }
    BoundExpr in = MakeNode(BoundKind::kIn, arrow::boolean(), std::move(ops));
    if (!e.negated()) return in;
    std::vector<BoundExpr> children;
    children.push_back(std::move(in));
    return MakeNode(BoundKind::kNot, arrow::boolean(), std::move(children));
  }

  arrow::Result<BoundExpr> BindBetween(const Expr& e) {
    ARROW_ASSIGN_OR_RAISE(auto value, Visit(*e.children()[0]));
    ARROW_ASSIGN_OR_RAISE(auto lower, Visit(*e.children()[1]));
    ARROW_ASSIGN_OR_RAISE(auto upper, Visit(*e.children()[2]));
    ARROW_ASSIGN_OR_RAISE(auto ge, MakeComparison(CompareOp::kGe, value, std::move(lower), e));
    ARROW_ASSIGN_OR_RAISE(auto le, MakeComparison(CompareOp::kLe, std::move(value),
                                                  std::move(upper), e));
    std::vector<BoundExpr> children;
    children.push_back(std::move(ge));
    children.push_back(std::move(le));
    BoundExpr both = MakeNode(BoundKind::kAnd, arrow::boolean(), std::move(children));
    if (!e.negated()) return both;
    std::vector<BoundExpr> negated;
    negated.push_back(std::move(both));
    return MakeNode(BoundKind::kNot, arrow::boolean(), std::move(negated));
  }

  arrow::Status RequireNumeric(const BoundExpr& operand, const Expr& at) {
    if (IsNumericType(*operand.type) || operand.type->id() == arrow::Type::NA) {
      return arrow::Status::OK();
    }
    return Error(at, "arithmetic needs numeric operands, got " + Describe(operand) + " in " +
                         at.ToString());
  }

  // Converts `operand` to `type`: literals directly, other expressions through a cast.
  arrow::Result<BoundExpr> ConvertTo(BoundExpr operand, const std::shared_ptr<arrow::DataType>& type,
                                     const Expr& at) {
    if (operand.type->Equals(*type)) return operand;
    if (operand.kind == BoundKind::kLiteral) {
      auto converted = ConvertLiteral(operand.literal, type);
      if (!converted.ok()) {
        // Arithmetic may round (e.g. a BIGINT literal in DOUBLE arithmetic); keep the value.
        return MakeCast(std::move(operand), type);
      }
      return MakeLiteral(*converted);
    }
    return MakeCast(std::move(operand), type);
  }

  // A DECIMAL type with just enough digits for an integral literal.
  static std::shared_ptr<arrow::DataType> MinimalDecimalFor(const arrow::Scalar& literal) {
    std::string digits = literal.ToString();
    if (!digits.empty() && digits[0] == '-') digits.erase(0, 1);
    return arrow::decimal128(std::max<int32_t>(1, static_cast<int32_t>(digits.size())), 0);
  }

  static std::shared_ptr<arrow::DataType> DecimalResultType(ArithOp op,
                                                            const arrow::DecimalType& a,
                                                            const arrow::DecimalType& b) {
    int32_t precision, scale;
    if (op == ArithOp::kMul) {
      precision = a.precision() + b.precision() + 1;
      scale = a.scale() + b.scale();
    } else {
      scale = std::max(a.scale(), b.scale());
      precision = std::max(a.precision() - a.scale(), b.precision() - b.scale()) + scale + 1;
    }
    if (precision > kMaxDecimalPrecision) {
      const int32_t int_digits = precision - scale;
      const int32_t min_scale = std::min(scale, 6);
      scale = std::max(kMaxDecimalPrecision - int_digits, min_scale);
      precision = kMaxDecimalPrecision;
    }
    return arrow::decimal128(precision, scale);
  }

  arrow::Result<BoundExpr> BindArithmetic(const Expr& e) {
    ARROW_ASSIGN_OR_RAISE(auto left, Visit(*e.children()[0]));
    ARROW_ASSIGN_OR_RAISE(auto right, Visit(*e.children()[1]));
    ARROW_RETURN_NOT_OK(RequireNumeric(left, e));
    ARROW_RETURN_NOT_OK(RequireNumeric(right, e));
    std::shared_ptr<arrow::DataType> result_type;
    if (e.arith_op() == ArithOp::kDiv) {
      result_type = arrow::float64();
      ARROW_ASSIGN_OR_RAISE(left, ConvertTo(std::move(left), result_type, e));
      ARROW_ASSIGN_OR_RAISE(right, ConvertTo(std::move(right), result_type, e));
    } else {
      // Integral literals next to a decimal take the fewest digits they need.
      auto narrow = [&](BoundExpr& lit, const BoundExpr& other) -> arrow::Status {
        if (lit.kind == BoundKind::kLiteral && lit.literal->is_valid &&
            IsIntegralType(*lit.type) && IsDecimalType(*other.type)) {
          ARROW_ASSIGN_OR_RAISE(auto d, ConvertLiteral(lit.literal, MinimalDecimalFor(*lit.literal)));
          lit = MakeLiteral(d);
        }
        return arrow::Status::OK();
      };
      ARROW_RETURN_NOT_OK(narrow(left, right));
      ARROW_RETURN_NOT_OK(narrow(right, left));
      auto common = CommonType(left.type, right.type);
      if (common->id() == arrow::Type::NA) common = arrow::int32();
      if (IsDecimalType(*common)) {
        // Each side keeps its own precision and scale; integral sides become DECIMAL(n, 0).
        for (BoundExpr* side : {&left, &right}) {
          if (!IsDecimalType(*side->type)) {
            auto t = side->type->id() == arrow::Type::NA
                         ? arrow::decimal128(1, 0)
                         : CommonType(side->type, arrow::decimal128(1, 0));
            ARROW_ASSIGN_OR_RAISE(*side, ConvertTo(std::move(*side), t, e));
          }
        }
        if (left.type->id() == arrow::Type::DECIMAL256 || right.type->id() == arrow::Type::DECIMAL256) {
          return Error(e, "arithmetic on DECIMAL wider than 38 digits is not supported");
        }
        result_type = DecimalResultType(e.arith_op(),
                                        static_cast<const arrow::DecimalType&>(*left.type),
                                        static_cast<const arrow::DecimalType&>(*right.type));
      } else {
        result_type = common;
        ARROW_ASSIGN_OR_RAISE(left, ConvertTo(std::move(left), common, e));
        ARROW_ASSIGN_OR_RAISE(right, ConvertTo(std::move(right), common, e));
      }
      if (e.arith_op() == ArithOp::kMod && !IsIntegralType(*result_type)) {
        return Error(e, "% is supported on integral operands only, got " + Describe(left) +
                            " and " + Describe(right));
      }
    }
    std::vector<BoundExpr> children;
    children.push_back(std::move(left));
    children.push_back(std::move(right));
    BoundExpr out = MakeNode(BoundKind::kArithmetic, result_type, std::move(children));
    out.arith_op = e.arith_op();
    return out;
  }

  // A NULL literal standing where a value of `type` is expected becomes a NULL of that type.
  static void TypeNull(BoundExpr* operand, const std::shared_ptr<arrow::DataType>& type) {
    if (operand->type->id() == arrow::Type::NA) {
      *operand = MakeLiteral(arrow::MakeNullScalar(type));
    }
  }

  // value LIKE pattern [ESCAPE escape], the pattern and escape constant.
  arrow::Result<BoundExpr> BindLike(std::vector<BoundExpr> args, const Expr& e) {
    if (args.size() != 2 && args.size() != 3) {
      return Error(e, "LIKE takes a value, a pattern and an optional escape character");
    }
    BoundExpr value = std::move(args[0]);
    const BoundExpr& pattern = args[1];
    TypeNull(&value, arrow::utf8());
    if (!IsStringType(*value.type)) {
      return Error(e, "LIKE needs a STRING operand, got " + Describe(value));
    }
    auto is_text_literal = [](const BoundExpr& b) {
      return b.kind == BoundKind::kLiteral &&
             (IsStringType(*b.type) || b.type->id() == arrow::Type::NA);
    };
    if (!is_text_literal(pattern)) {
      return Error(e, "the pattern of LIKE must be a STRING literal, got " + Describe(pattern));
    }
    char escape = '\\';
    if (args.size() == 3) {
      const BoundExpr& esc = args[2];
      if (!is_text_literal(esc) || !esc.literal->is_valid ||
          static_cast<const arrow::BaseBinaryScalar&>(*esc.literal).view().size() != 1) {
        return Error(e, "the escape of LIKE must be a one-character STRING literal, got " +
                            Describe(esc));
      }
      escape = static_cast<const arrow::BaseBinaryScalar&>(*esc.literal).view()[0];
    }
    if (!pattern.literal->is_valid) return MakeLiteral(arrow::MakeNullScalar(arrow::boolean()));
    auto text = static_cast<const arrow::BaseBinaryScalar&>(*pattern.literal).view();
    auto arrow_pattern = ToArrowLikePattern(text, escape);
    if (!arrow_pattern.ok()) return Error(e, arrow_pattern.status().message());
    std::vector<BoundExpr> children;
    children.push_back(std::move(value));
    children.push_back(MakeLiteral(std::make_shared<arrow::StringScalar>(*arrow_pattern)));
    BoundExpr like = MakeNode(BoundKind::kFunction, arrow::boolean(), std::move(children));
    like.function = "like";
    return like;
  }

  // CASE over bound conditions; `values` holds one value per condition and then the ELSE value.
  arrow::Result<BoundExpr> MakeCaseNode(std::vector<BoundExpr> conditions,
                                        std::vector<BoundExpr> values, const Expr& at) {
    ARROW_ASSIGN_OR_RAISE(values, CoerceToCommon(std::move(values), at));
    auto type = values[0].type;
    std::vector<BoundExpr> children;
    for (size_t i = 0; i < conditions.size(); ++i) {
      children.push_back(std::move(conditions[i]));
      children.push_back(std::move(values[i]));
    }
    children.push_back(std::move(values.back()));
    return MakeNode(BoundKind::kCase, std::move(type), std::move(children));
  }

  // The conversions CAST supports, with Spark's results (see to_arrow.cc for how they run).
  static bool CastSupported(const arrow::DataType& from, const arrow::DataType& to) {
    const bool from_string = IsStringType(from);
    const bool from_bool = from.id() == arrow::Type::BOOL;
    const bool from_date = from.id() == arrow::Type::DATE32;
    const bool from_ts = from.id() == arrow::Type::TIMESTAMP;
    if (IsNumericType(to)) return IsNumericType(from) || from_string || from_bool;
    if (IsStringType(to)) {
      return from_string || IsIntegralType(from) || IsDecimalType(from) || from_bool || from_date;
    }
    if (to.id() == arrow::Type::BOOL) return from_bool || IsNumericType(from) || from_string;
    if (to.id() == arrow::Type::DATE32) return from_date || from_ts || from_string;
    if (to.id() == arrow::Type::TIMESTAMP) return from_date || from_ts || from_string;
    if (IsBinaryType(to)) return from_string || IsBinaryType(from);
    return false;
  }

  // CAST(x AS t), parsed as cast(x, 't').
  arrow::Result<BoundExpr> BindCast(std::vector<BoundExpr> args, const Expr& e) {
    if (args.size() != 2 || args[1].kind != BoundKind::kLiteral ||
        !IsStringType(*args[1].type) || !args[1].literal->is_valid) {
      return Error(e, "CAST takes a value and a type: CAST(x AS type)");
    }
    auto target =
        ParseTypeName(static_cast<const arrow::BaseBinaryScalar&>(*args[1].literal).view());
    if (!target.ok()) return Error(e, "invalid type in CAST: " + target.status().message());
    BoundExpr operand = std::move(args[0]);
    if (operand.type->id() == arrow::Type::NA) return MakeLiteral(arrow::MakeNullScalar(*target));
    if (operand.type->Equals(**target)) return operand;
    if (!CastSupported(*operand.type, **target)) {
      return Error(e, "CAST from " + SqlTypeName(*operand.type) + " to " + SqlTypeName(**target) +
                          " is not supported (" + Describe(operand) + ")");
    }
    BoundExpr out = MakeCast(std::move(operand), *target);
    out.explicit_cast = true;
    return out;
  }

  arrow::Result<BoundExpr> BindNegate(const Expr& e) {
    ARROW_ASSIGN_OR_RAISE(auto operand, Visit(*e.children()[0]));
    ARROW_RETURN_NOT_OK(RequireNumeric(operand, e));
    if (operand.type->id() == arrow::Type::NA) {
      return MakeLiteral(arrow::MakeNullScalar(arrow::int32()));
    }
    auto type = operand.type;
    std::vector<BoundExpr> children;
    children.push_back(std::move(operand));
    return MakeNode(BoundKind::kNegate, type, std::move(children));
  }

  arrow::Result<BoundExpr> BindFunction(const Expr& e) {
    const std::string name = AsciiLower(e.function_name());
    std::vector<BoundExpr> args;
    for (const auto& child : e.children()) {
      ARROW_ASSIGN_OR_RAISE(auto bound, Visit(*child));
      args.push_back(std::move(bound));
    }
    auto arity = [&](size_t n) -> arrow::Status {
      if (args.size() == n) return arrow::Status::OK();
      return Error(e, "function " + name + " takes " + std::to_string(n) + " argument" +
                          (n == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    };
    auto finish = [&](std::string fn, std::shared_ptr<arrow::DataType> type) {
      BoundExpr out = MakeNode(BoundKind::kFunction, std::move(type), std::move(args));
      out.function = std::move(fn);
      return out;
    };
    if (name == "lower" || name == "upper" || name == "length" || name == "char_length" ||
        name == "character_length") {
      ARROW_RETURN_NOT_OK(arity(1));
      if (args[0].type->id() == arrow::Type::NA) {
        args[0] = MakeLiteral(arrow::MakeNullScalar(arrow::utf8()));
      }
      if (!IsStringType(*args[0].type)) {
        return Error(e, "function " + name + " needs a STRING argument, got " + Describe(args[0]));
      }
      if (name == "lower" || name == "upper") {
        auto type = args[0].type;
        return finish(name, type);
      }
      return finish("length", arrow::int32());
    }
    if (name == "abs") {
      ARROW_RETURN_NOT_OK(arity(1));
      ARROW_RETURN_NOT_OK(RequireNumeric(args[0], e));
      if (args[0].type->id() == arrow::Type::NA) {
        args[0] = MakeLiteral(arrow::MakeNullScalar(arrow::int32()));
      }
      auto type = args[0].type;
      return finish(name, type);
    }
    if (name == "coalesce") {
      if (args.empty()) return Error(e, "function coalesce needs at least one argument");
      ARROW_ASSIGN_OR_RAISE(args, CoerceToCommon(std::move(args), e));
      auto type = args[0].type;
      return finish(name, type);
    }
    if (name == "like") return BindLike(std::move(args), e);
    if (name == "cast") return BindCast(std::move(args), e);
    if (name == "nvl" || name == "ifnull") {
      ARROW_RETURN_NOT_OK(arity(2));
      ARROW_ASSIGN_OR_RAISE(args, CoerceToCommon(std::move(args), e));
      auto type = args[0].type;
      return finish("coalesce", type);
    }
    if (name == "if") {
      ARROW_RETURN_NOT_OK(arity(3));
      ARROW_ASSIGN_OR_RAISE(auto condition, RequireBoolean(std::move(args[0]), e,
                                                           "the condition of if must be BOOLEAN"));
      std::vector<BoundExpr> conditions, values;
      conditions.push_back(std::move(condition));
      values.push_back(std::move(args[1]));
      values.push_back(std::move(args[2]));
      return MakeCaseNode(std::move(conditions), std::move(values), e);
    }
    auto require_string = [&](size_t i) -> arrow::Status {
      TypeNull(&args[i], arrow::utf8());
      if (IsStringType(*args[i].type)) return arrow::Status::OK();
      return Error(e, "function " + name + " needs STRING arguments, got " + Describe(args[i]));
    };
    // Arguments that configure the kernel must be constants; NULL ones make the result NULL.
    auto require_literal = [&](size_t i, bool integral) -> arrow::Result<bool> {
      const BoundExpr& a = args[i];
      const bool type_ok = a.type->id() == arrow::Type::NA ||
                           (integral ? IsIntegralType(*a.type) : IsStringType(*a.type));
      if (a.kind != BoundKind::kLiteral || !type_ok) {
        return Error(e, "argument " + std::to_string(i + 1) + " of " + name + " must be " +
                            (integral ? "an integer" : "a STRING") + " literal, got " +
                            Describe(a));
      }
      return a.literal->is_valid;
    };
    if (name == "trim" || name == "ltrim" || name == "rtrim") {
      ARROW_RETURN_NOT_OK(arity(1));
      ARROW_RETURN_NOT_OK(require_string(0));
      auto type = args[0].type;
      return finish(name, type);
    }
    if (name == "substring" || name == "substr") {
      if (args.size() != 2 && args.size() != 3) {
        return Error(e, "function " + name + " takes 2 or 3 arguments, got " +
                            std::to_string(args.size()));
      }
      ARROW_RETURN_NOT_OK(require_string(0));
      auto type = args[0].type;
      for (size_t i = 1; i < args.size(); ++i) {
        ARROW_ASSIGN_OR_RAISE(bool present, require_literal(i, true));
        if (!present) return MakeLiteral(arrow::MakeNullScalar(type));
        ARROW_ASSIGN_OR_RAISE(auto wide, ConvertLiteral(args[i].literal, arrow::int64()));
        args[i] = MakeLiteral(wide);
      }
      return finish("substring", type);
    }
    if (name == "concat") {
      if (args.empty()) return MakeLiteral(std::make_shared<arrow::StringScalar>(""));
      for (size_t i = 0; i < args.size(); ++i) {
        ARROW_RETURN_NOT_OK(require_string(i));
        ARROW_ASSIGN_OR_RAISE(args[i], ConvertTo(std::move(args[i]), arrow::utf8(), e));
      }
      return finish("concat", arrow::utf8());
    }
    if (name == "replace") {
      if (args.size() != 2 && args.size() != 3) {
        return Error(e, "function replace takes 2 or 3 arguments, got " +
                            std::to_string(args.size()));
      }
      ARROW_RETURN_NOT_OK(require_string(0));
      auto type = args[0].type;
      for (size_t i = 1; i < args.size(); ++i) {
        ARROW_ASSIGN_OR_RAISE(bool present, require_literal(i, false));
        if (!present) return MakeLiteral(arrow::MakeNullScalar(type));
      }
      if (args.size() == 2) args.push_back(MakeLiteral(std::make_shared<arrow::StringScalar>("")));
      return finish("replace", type);
    }
    auto require_date = [&](size_t i) -> arrow::Status {
      TypeNull(&args[i], arrow::date32());
      if (args[i].type->id() == arrow::Type::TIMESTAMP) {
        // Spark takes the date part of a timestamp argument.
        BoundExpr cast = MakeCast(std::move(args[i]), arrow::date32());
        cast.explicit_cast = true;
        args[i] = std::move(cast);
      }
      if (args[i].type->id() == arrow::Type::DATE32) return arrow::Status::OK();
      return Error(e, "function " + name + " needs a DATE or TIMESTAMP argument, got " +
                          Describe(args[i]));
    };
    if (name == "year" || name == "month" || name == "day" || name == "dayofmonth") {
      ARROW_RETURN_NOT_OK(arity(1));
      ARROW_RETURN_NOT_OK(require_date(0));
      return finish(name == "dayofmonth" ? "day" : name, arrow::int32());
    }
    if (name == "to_date") {
      // to_date(x) without a format is CAST(x AS DATE) in Spark.
      ARROW_RETURN_NOT_OK(arity(1));
      args.push_back(MakeLiteral(std::make_shared<arrow::StringScalar>("DATE")));
      return BindCast(std::move(args), e);
    }
    if (name == "hour" || name == "minute" || name == "second") {
      ARROW_RETURN_NOT_OK(arity(1));
      TypeNull(&args[0], arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
      if (args[0].type->id() == arrow::Type::DATE32) {
        args[0] = MakeCast(std::move(args[0]), arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
      }
      if (args[0].type->id() != arrow::Type::TIMESTAMP) {
        return Error(e, "function " + name + " needs a TIMESTAMP argument, got " +
                            Describe(args[0]));
      }
      return finish(name, arrow::int32());
    }
    if (name == "date_add" || name == "date_sub") {
      ARROW_RETURN_NOT_OK(arity(2));
      ARROW_RETURN_NOT_OK(require_date(0));
      TypeNull(&args[1], arrow::int32());
      if (!IsIntegralType(*args[1].type) || args[1].type->id() == arrow::Type::INT64) {
        return Error(e, "function " + name + " needs an INT number of days, got " +
                            Describe(args[1]));
      }
      ARROW_ASSIGN_OR_RAISE(args[1], ConvertTo(std::move(args[1]), arrow::int32(), e));
      return finish(name, arrow::date32());
    }
    if (name == "datediff") {
      ARROW_RETURN_NOT_OK(arity(2));
      ARROW_RETURN_NOT_OK(require_date(0));
      ARROW_RETURN_NOT_OK(require_date(1));
      return finish(name, arrow::int32());
    }
    if (name == "current_date" || name == "current_timestamp" || name == "now") {
      ARROW_RETURN_NOT_OK(arity(0));
      if (!allow_current_time_) {
        return Error(e, "function " + name + " is not deterministic and cannot be used here");
      }
      // One value for the whole statement, as in Spark; dates are taken in UTC.
      const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
      if (name == "current_date") {
        constexpr int64_t kMicrosPerDay = 86'400'000'000LL;
        const int64_t days = micros >= 0 ? micros / kMicrosPerDay
                                         : -((-micros + kMicrosPerDay - 1) / kMicrosPerDay);
        return MakeLiteral(std::make_shared<arrow::Date32Scalar>(static_cast<int32_t>(days)));
      }
      return MakeLiteral(std::make_shared<arrow::TimestampScalar>(
          micros, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
    }
    return Error(e, "unknown function '" + e.function_name() +
                        "'; supported: abs, coalesce, concat, current_date, current_timestamp, "
                        "date_add, date_sub, datediff, day, hour, if, length, lower, ltrim, "
                        "minute, month, nvl, replace, rtrim, second, substring, to_date, trim, "
                        "upper, year");
  }

  const arrow::Schema& schema_;
  const bool allow_current_time_;
};

}  // namespace

arrow::Result<BoundExpr> Bind(const ExprPtr& expr, const arrow::Schema& logical_schema,
                              bool allow_current_time) {
  if (!expr) return DeltaError(DeltaErrorCode::kInvalidExpression, "no expression to bind");
  return Binder(logical_schema, allow_current_time).Visit(*expr);
}

arrow::Result<BoundExpr> BindPredicate(const ExprPtr& expr, const arrow::Schema& logical_schema,
                                       bool allow_current_time) {
  if (!expr) return DeltaError(DeltaErrorCode::kInvalidExpression, "no expression to bind");
  Binder binder(logical_schema, allow_current_time);
  ARROW_ASSIGN_OR_RAISE(auto bound, binder.Visit(*expr));
  return binder.RequireBoolean(std::move(bound), *expr, "a predicate must be BOOLEAN");
}

}  // namespace deltacpp::internal
