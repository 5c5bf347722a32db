#include "expr/ast.h"

#include <arrow/util/decimal.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "util/temporal.h"

namespace deltacpp::internal {

namespace {

// Binding strength of each node kind when printed; higher binds tighter.
enum Precedence : int {
  kPrecOr = 1,
  kPrecAnd = 2,
  kPrecNot = 3,
  kPrecPredicate = 4,
  kPrecAdditive = 5,
  kPrecMultiplicative = 6,
  kPrecUnary = 7,
  kPrecPrimary = 8,
};

int PrecedenceOf(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kOr: return kPrecOr;
    case ExprKind::kAnd: return kPrecAnd;
    case ExprKind::kNot: return kPrecNot;
    case ExprKind::kComparison:
    case ExprKind::kIsNull:
    case ExprKind::kIn:
    case ExprKind::kBetween: return kPrecPredicate;
    case ExprKind::kArithmetic:
      return e.arith_op() == ArithOp::kAdd || e.arith_op() == ArithOp::kSub ? kPrecAdditive
                                                                             : kPrecMultiplicative;
    case ExprKind::kNegate: return kPrecUnary;
    case ExprKind::kLiteral:
    case ExprKind::kColumn:
    case ExprKind::kFunction: return kPrecPrimary;
  }
  return kPrecPrimary;
}

std::string Print(const Expr& e, int min_precedence);

// cast(x, 'type'), the node CAST(x AS type) parses to.
bool IsCastCall(const Expr& e) {
  const auto& name = e.function_name();
  return e.kind() == ExprKind::kFunction && name.size() == 4 &&
         std::tolower(static_cast<unsigned char>(name[0])) == 'c' &&
         std::tolower(static_cast<unsigned char>(name[1])) == 'a' &&
         std::tolower(static_cast<unsigned char>(name[2])) == 's' &&
         std::tolower(static_cast<unsigned char>(name[3])) == 't' && e.children().size() == 2 &&
         e.children()[1]->kind() == ExprKind::kLiteral &&
         e.children()[1]->literal()->is_valid &&
         e.children()[1]->literal()->type->id() == arrow::Type::STRING;
}

std::string PrintChild(const ExprPtr& child, int min_precedence) {
  return Print(*child, min_precedence);
}

std::string PrintUnparenthesized(const Expr& e) {
  const auto& c = e.children();
  switch (e.kind()) {
    case ExprKind::kLiteral: return LiteralToSql(*e.literal());
    case ExprKind::kColumn: {
      std::string out;
      for (const auto& part : e.column_path()) {
        if (!out.empty()) out += '.';
        out += QuoteIdentifier(part);
      }
      return out;
    }
    case ExprKind::kComparison:
      return PrintChild(c[0], kPrecPredicate) + " " + CompareOpSymbol(e.compare_op()) + " " +
             PrintChild(c[1], kPrecAdditive);
    case ExprKind::kAnd:
      return PrintChild(c[0], kPrecAnd) + " AND " + PrintChild(c[1], kPrecAnd + 1);
    case ExprKind::kOr:
      return PrintChild(c[0], kPrecOr) + " OR " + PrintChild(c[1], kPrecOr + 1);
    case ExprKind::kNot: return "NOT " + PrintChild(c[0], kPrecNot);
    case ExprKind::kIsNull:
      return PrintChild(c[0], kPrecPredicate) + (e.negated() ? " IS NOT NULL" : " IS NULL");
    case ExprKind::kIn: {
      std::string out = PrintChild(c[0], kPrecPredicate) + (e.negated() ? " NOT IN (" : " IN (");
      for (size_t i = 1; i < c.size(); ++i) {
        if (i > 1) out += ", ";
        out += PrintChild(c[i], kPrecOr);
      }
      return out + ")";
    }
    case ExprKind::kBetween:
      return PrintChild(c[0], kPrecPredicate) + (e.negated() ? " NOT BETWEEN " : " BETWEEN ") +
             PrintChild(c[1], kPrecAdditive) + " AND " + PrintChild(c[2], kPrecAdditive);
    case ExprKind::kArithmetic: {
      const int prec = PrecedenceOf(e);
      return PrintChild(c[0], prec) + " " + ArithOpSymbol(e.arith_op()) + " " +
             PrintChild(c[1], prec + 1);
    }
    case ExprKind::kNegate: {
      std::string operand = PrintChild(c[0], kPrecUnary);
      return (!operand.empty() && operand[0] == '-') ? "- " + operand : "-" + operand;
    }
    case ExprKind::kFunction: {
      if (IsCastCall(e)) {
        return "CAST(" + PrintChild(c[0], kPrecOr) + " AS " +
               std::string(static_cast<const arrow::BaseBinaryScalar&>(*c[1]->literal()).view()) +
               ")";
      }
      std::string out = e.function_name() + "(";
      for (size_t i = 0; i < c.size(); ++i) {
        if (i > 0) out += ", ";
        out += PrintChild(c[i], kPrecOr);
      }
      return out + ")";
    }
  }
  return "?";
}

std::string Print(const Expr& e, int min_precedence) {
  std::string text = PrintUnparenthesized(e);
  if (PrecedenceOf(e) < min_precedence) return "(" + text + ")";
  return text;
}

template <typename T>
std::string FloatText(T value) {
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  return std::string(buf.data(), res.ptr);
}

std::string QuoteString(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "''";
    } else if (ch == '\\') {
      out += "\\\\";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

int64_t ToMicros(int64_t value, arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return value * 1'000'000LL;
    case arrow::TimeUnit::MILLI: return value * 1'000LL;
    case arrow::TimeUnit::MICRO: return value;
    case arrow::TimeUnit::NANO: return value >= 0 ? value / 1000 : -((-value + 999) / 1000);
  }
  return value;
}

}  // namespace

const char* CompareOpSymbol(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return "=";
    case CompareOp::kNe: return "!=";
    case CompareOp::kLt: return "<";
    case CompareOp::kLe: return "<=";
    case CompareOp::kGt: return ">";
    case CompareOp::kGe: return ">=";
    case CompareOp::kNullSafeEq: return "<=>";
  }
  return "?";
}

const char* ArithOpSymbol(ArithOp op) {
  switch (op) {
    case ArithOp::kAdd: return "+";
    case ArithOp::kSub: return "-";
    case ArithOp::kMul: return "*";
    case ArithOp::kDiv: return "/";
    case ArithOp::kMod: return "%";
  }
  return "?";
}

CompareOp FlipCompareOp(CompareOp op) {
  switch (op) {
    case CompareOp::kLt: return CompareOp::kGt;
    case CompareOp::kLe: return CompareOp::kGe;
    case CompareOp::kGt: return CompareOp::kLt;
    case CompareOp::kGe: return CompareOp::kLe;
    default: return op;
  }
}

bool IsReservedWord(std::string_view word) {
  static constexpr std::string_view kWords[] = {"AND", "OR",   "NOT",  "IS",   "IN",
                                                "BETWEEN", "NULL", "TRUE", "FALSE"};
  for (auto w : kWords) {
    if (w.size() != word.size()) continue;
    bool same = true;
    for (size_t i = 0; i < w.size() && same; ++i) {
      char c = word[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      same = c == w[i];
    }
    if (same) return true;
  }
  return false;
}

std::string QuoteIdentifier(const std::string& name) {
  auto plain_char = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
  };
  // Words that act as keywords only in some places are quoted too, so that text always parses.
  static constexpr std::string_view kContextual[] = {"CASE", "WHEN", "THEN", "ELSE", "END",
                                                     "LIKE", "ESCAPE", "CAST", "AS"};
  bool plain = !name.empty() && !IsReservedWord(name);
  for (auto w : kContextual) {
    if (plain && w.size() == name.size()) {
      bool same = true;
      for (size_t i = 0; i < w.size() && same; ++i) {
        same = std::toupper(static_cast<unsigned char>(name[i])) == w[i];
      }
      plain = !same;
    }
  }
  for (size_t i = 0; i < name.size() && plain; ++i) plain = plain_char(name[i], i == 0);
  if (plain) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string LiteralToSql(const arrow::Scalar& value) {
  if (!value.is_valid) return "NULL";
  switch (value.type->id()) {
    case arrow::Type::BOOL:
      return static_cast<const arrow::BooleanScalar&>(value).value ? "TRUE" : "FALSE";
    case arrow::Type::INT8:
      return std::to_string(static_cast<const arrow::Int8Scalar&>(value).value) + "Y";
    case arrow::Type::INT16:
      return std::to_string(static_cast<const arrow::Int16Scalar&>(value).value) + "S";
    case arrow::Type::INT32:
      return std::to_string(static_cast<const arrow::Int32Scalar&>(value).value);
    case arrow::Type::INT64: {
      int64_t v = static_cast<const arrow::Int64Scalar&>(value).value;
      bool fits_int = v >= INT32_MIN && v <= INT32_MAX;
      return std::to_string(v) + (fits_int ? "L" : "");
    }
    case arrow::Type::FLOAT:
      return FloatText(static_cast<const arrow::FloatScalar&>(value).value) + "F";
    case arrow::Type::DOUBLE:
      return FloatText(static_cast<const arrow::DoubleScalar&>(value).value) + "D";
    case arrow::Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Scalar&>(value);
      int32_t scale = static_cast<const arrow::Decimal128Type&>(*value.type).scale();
      return d.value.ToString(scale) + (scale == 0 ? "BD" : "");
    }
    case arrow::Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::Decimal256Scalar&>(value);
      int32_t scale = static_cast<const arrow::Decimal256Type&>(*value.type).scale();
      return d.value.ToString(scale) + (scale == 0 ? "BD" : "");
    }
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      return QuoteString(static_cast<const arrow::BaseBinaryScalar&>(value).view());
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
    case arrow::Type::FIXED_SIZE_BINARY: {
      static constexpr char kHex[] = "0123456789ABCDEF";
      std::string out = "X'";
      for (unsigned char c : static_cast<const arrow::BaseBinaryScalar&>(value).view()) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      return out + "'";
    }
    case arrow::Type::DATE32:
      return "DATE '" + FormatDate(static_cast<const arrow::Date32Scalar&>(value).value) + "'";
    case arrow::Type::DATE64: {
      int64_t ms = static_cast<const arrow::Date64Scalar&>(value).value;
      return "DATE '" + FormatDate(static_cast<int32_t>(ms / 86'400'000LL)) + "'";
    }
    case arrow::Type::TIMESTAMP: {
      const auto& type = static_cast<const arrow::TimestampType&>(*value.type);
      int64_t micros = ToMicros(static_cast<const arrow::TimestampScalar&>(value).value,
                                type.unit());
      return std::string(type.timezone().empty() ? "TIMESTAMP_NTZ '" : "TIMESTAMP '") +
             FormatTimestampMicros(micros) + "'";
    }
    default:
      if (arrow::is_integer(value.type->id())) return value.ToString();
      return QuoteString(value.ToString());
  }
}

ExprPtr Expr::MakeLiteral(std::shared_ptr<arrow::Scalar> value, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kLiteral, position));
  e->literal_ = value ? std::move(value) : std::make_shared<arrow::NullScalar>();
  return e;
}

ExprPtr Expr::MakeColumn(std::vector<std::string> path, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kColumn, position));
  e->path_ = std::move(path);
  return e;
}

ExprPtr Expr::MakeComparison(CompareOp op, ExprPtr left, ExprPtr right, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kComparison, position));
  e->compare_op_ = op;
  e->children_ = {std::move(left), std::move(right)};
  return e;
}

ExprPtr Expr::MakeAnd(ExprPtr left, ExprPtr right, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kAnd, position));
  e->children_ = {std::move(left), std::move(right)};
  return e;
}

ExprPtr Expr::MakeOr(ExprPtr left, ExprPtr right, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kOr, position));
  e->children_ = {std::move(left), std::move(right)};
  return e;
}

ExprPtr Expr::MakeNot(ExprPtr operand, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kNot, position));
  e->children_ = {std::move(operand)};
  return e;
}

ExprPtr Expr::MakeIsNull(ExprPtr operand, bool negated, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kIsNull, position));
  e->negated_ = negated;
  e->children_ = {std::move(operand)};
  return e;
}

ExprPtr Expr::MakeIn(ExprPtr value, std::vector<ExprPtr> list, bool negated, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kIn, position));
  e->negated_ = negated;
  e->children_.reserve(list.size() + 1);
  e->children_.push_back(std::move(value));
  for (auto& item : list) e->children_.push_back(std::move(item));
  return e;
}

ExprPtr Expr::MakeBetween(ExprPtr value, ExprPtr lower, ExprPtr upper, bool negated,
                          size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kBetween, position));
  e->negated_ = negated;
  e->children_ = {std::move(value), std::move(lower), std::move(upper)};
  return e;
}

ExprPtr Expr::MakeArithmetic(ArithOp op, ExprPtr left, ExprPtr right, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kArithmetic, position));
  e->arith_op_ = op;
  e->children_ = {std::move(left), std::move(right)};
  return e;
}

ExprPtr Expr::MakeNegate(ExprPtr operand, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kNegate, position));
  e->children_ = {std::move(operand)};
  return e;
}

ExprPtr Expr::MakeFunction(std::string name, std::vector<ExprPtr> args, size_t position) {
  auto e = std::shared_ptr<Expr>(new Expr(ExprKind::kFunction, position));
  e->name_ = std::move(name);
  e->children_ = std::move(args);
  return e;
}

std::string Expr::ToString() const { return Print(*this, 0); }

bool Expr::Equals(const Expr& other) const {
  if (kind_ != other.kind_ || negated_ != other.negated_ ||
      children_.size() != other.children_.size()) {
    return false;
  }
  switch (kind_) {
    case ExprKind::kLiteral:
      if (!literal_->Equals(*other.literal_)) return false;
      break;
    case ExprKind::kColumn:
      if (path_ != other.path_) return false;
      break;
    case ExprKind::kComparison:
      if (compare_op_ != other.compare_op_) return false;
      break;
    case ExprKind::kArithmetic:
      if (arith_op_ != other.arith_op_) return false;
      break;
    case ExprKind::kFunction:
      if (name_ != other.name_) return false;
      break;
    default:
      break;
  }
  for (size_t i = 0; i < children_.size(); ++i) {
    if (!children_[i]->Equals(*other.children_[i])) return false;
  }
  return true;
}

}  // namespace deltacpp::internal
