#include "expr/parser.h"

#include <arrow/util/decimal.h>

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "deltacpp/error.h"
#include "expr/lexer.h"
#include "expr/schema_ddl.h"
#include "util/temporal.h"

namespace deltacpp::internal {

namespace {

constexpr int kMaxDepth = 500;
constexpr int32_t kMaxDecimalPrecision = 38;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Builds a DECIMAL literal from digits like "-12.50" or "1e3"; nullopt when it does not fit.
std::optional<std::shared_ptr<arrow::Scalar>> MakeDecimalLiteral(const std::string& body) {
  arrow::Decimal128 value;
  int32_t precision = 0, scale = 0;
  if (!arrow::Decimal128::FromString(body, &value, &precision, &scale).ok()) return std::nullopt;
  if (scale < 0) {
    value = value.IncreaseScaleBy(-scale);
    precision += -scale;
    scale = 0;
  }
  precision = std::max({precision, scale, 1});
  if (precision > kMaxDecimalPrecision) return std::nullopt;
  return std::make_shared<arrow::Decimal128Scalar>(value, arrow::decimal128(precision, scale));
}

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens)
      : sql_(sql), tokens_(std::move(tokens)) {}

  arrow::Result<ExprPtr> ParseAll() {
    ARROW_ASSIGN_OR_RAISE(auto e, ParseOr());
    if (Peek().kind != TokenKind::kEnd) return Unexpected(Peek(), "expected end of expression");
    return e;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(index_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& Advance() {
    const Token& t = tokens_[index_];
    if (index_ + 1 < tokens_.size()) ++index_;
    return t;
  }
  bool IsKeyword(const Token& t, std::string_view word) const {
    return t.kind == TokenKind::kIdentifier && EqualsIgnoreCase(t.text, word);
  }
  bool IsSymbol(const Token& t, std::string_view sym) const {
    return t.kind == TokenKind::kSymbol && t.text == sym;
  }
  std::string_view SourceOf(const Token& t) const {
    return sql_.substr(t.position, t.end - t.position);
  }
  arrow::Status Unexpected(const Token& t, std::string_view message) const {
    return SyntaxError(sql_, t.position, SourceOf(t), message);
  }
  arrow::Status Expect(std::string_view sym, std::string_view what) {
    if (!IsSymbol(Peek(), sym)) return Unexpected(Peek(), "expected " + std::string(what));
    Advance();
    return arrow::Status::OK();
  }

  // Guards recursion so hostile input cannot exhaust the stack.
  class DepthGuard {
   public:
    explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
    ~DepthGuard() { --*depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    int* depth_;
  };

  arrow::Result<ExprPtr> ParseOr() {
    DepthGuard guard(&depth_);
    if (depth_ > kMaxDepth) return Unexpected(Peek(), "expression nested too deeply");
    ARROW_ASSIGN_OR_RAISE(auto left, ParseAnd());
    while (IsKeyword(Peek(), "OR")) {
      size_t pos = Advance().position;
      ARROW_ASSIGN_OR_RAISE(auto right, ParseAnd());
      left = Expr::MakeOr(std::move(left), std::move(right), pos);
    }
    return left;
  }

  arrow::Result<ExprPtr> ParseAnd() {
    ARROW_ASSIGN_OR_RAISE(auto left, ParseNot());
    while (IsKeyword(Peek(), "AND")) {
      size_t pos = Advance().position;
      ARROW_ASSIGN_OR_RAISE(auto right, ParseNot());
      left = Expr::MakeAnd(std::move(left), std::move(right), pos);
    }
    return left;
  }

  arrow::Result<ExprPtr> ParseNot() {
    if (IsKeyword(Peek(), "NOT")) {
      DepthGuard guard(&depth_);
      if (depth_ > kMaxDepth) return Unexpected(Peek(), "expression nested too deeply");
      size_t pos = Advance().position;
      ARROW_ASSIGN_OR_RAISE(auto operand, ParseNot());
      return Expr::MakeNot(std::move(operand), pos);
    }
    return ParsePredicate();
  }

  static std::optional<CompareOp> ComparisonOf(const Token& t) {
    if (t.kind != TokenKind::kSymbol) return std::nullopt;
    if (t.text == "=" || t.text == "==") return CompareOp::kEq;
    if (t.text == "!=" || t.text == "<>") return CompareOp::kNe;
    if (t.text == "<") return CompareOp::kLt;
    if (t.text == "<=") return CompareOp::kLe;
    if (t.text == ">") return CompareOp::kGt;
    if (t.text == ">=") return CompareOp::kGe;
    if (t.text == "<=>") return CompareOp::kNullSafeEq;
    return std::nullopt;
  }

  arrow::Result<ExprPtr> ParsePredicate() {
    ARROW_ASSIGN_OR_RAISE(auto left, ParseAdditive());
    while (true) {
      const Token& t = Peek();
      if (auto op = ComparisonOf(t)) {
        size_t pos = Advance().position;
        ARROW_ASSIGN_OR_RAISE(auto right, ParseAdditive());
        left = Expr::MakeComparison(*op, std::move(left), std::move(right), pos);
        continue;
      }
      if (IsKeyword(t, "IS")) {
        size_t pos = Advance().position;
        bool negated = false;
        if (IsKeyword(Peek(), "NOT")) {
          Advance();
          negated = true;
        }
        if (!IsKeyword(Peek(), "NULL")) {
          return Unexpected(Peek(), negated ? "expected NULL after IS NOT" : "expected NULL after IS");
        }
        Advance();
        left = Expr::MakeIsNull(std::move(left), negated, pos);
        continue;
      }
      bool negated = false;
      size_t pos = t.position;
      if (IsKeyword(t, "NOT") && (IsKeyword(Peek(1), "IN") || IsKeyword(Peek(1), "BETWEEN") ||
                                  IsKeyword(Peek(1), "LIKE"))) {
        Advance();
        negated = true;
      }
      if (IsKeyword(Peek(), "IN")) {
        Advance();
        ARROW_RETURN_NOT_OK(Expect("(", "'(' after IN"));
        if (IsSymbol(Peek(), ")")) return Unexpected(Peek(), "IN list must not be empty");
        std::vector<ExprPtr> items;
        while (true) {
          ARROW_ASSIGN_OR_RAISE(auto item, ParseOr());
          items.push_back(std::move(item));
          if (IsSymbol(Peek(), ",")) {
            Advance();
            continue;
          }
          ARROW_RETURN_NOT_OK(Expect(")", "',' or ')' in IN list"));
          break;
        }
        left = Expr::MakeIn(std::move(left), std::move(items), negated, pos);
        continue;
      }
      if (IsKeyword(Peek(), "LIKE")) {
        Advance();
        ARROW_ASSIGN_OR_RAISE(auto pattern, ParseAdditive());
        std::vector<ExprPtr> args{std::move(left), std::move(pattern)};
        if (IsKeyword(Peek(), "ESCAPE")) {
          Advance();
          const Token& esc = Peek();
          if (esc.kind != TokenKind::kString || esc.text.size() != 1) {
            return Unexpected(esc, "expected a one-character string after ESCAPE");
          }
          args.push_back(Expr::MakeLiteral(std::make_shared<arrow::StringScalar>(esc.text),
                                           esc.position));
          Advance();
        }
        left = Expr::MakeFunction("like", std::move(args), pos);
        if (negated) left = Expr::MakeNot(std::move(left), pos);
        continue;
      }
      if (IsKeyword(Peek(), "BETWEEN")) {
        Advance();
        ARROW_ASSIGN_OR_RAISE(auto lower, ParseAdditive());
        if (!IsKeyword(Peek(), "AND")) return Unexpected(Peek(), "expected AND in BETWEEN");
        Advance();
        ARROW_ASSIGN_OR_RAISE(auto upper, ParseAdditive());
        left = Expr::MakeBetween(std::move(left), std::move(lower), std::move(upper), negated, pos);
        continue;
      }
      return left;
    }
  }

  arrow::Result<ExprPtr> ParseAdditive() {
    ARROW_ASSIGN_OR_RAISE(auto left, ParseMultiplicative());
    while (IsSymbol(Peek(), "+") || IsSymbol(Peek(), "-")) {
      const Token& t = Advance();
      ArithOp op = t.text == "+" ? ArithOp::kAdd : ArithOp::kSub;
      ARROW_ASSIGN_OR_RAISE(auto right, ParseMultiplicative());
      left = Expr::MakeArithmetic(op, std::move(left), std::move(right), t.position);
    }
    return left;
  }

  arrow::Result<ExprPtr> ParseMultiplicative() {
    ARROW_ASSIGN_OR_RAISE(auto left, ParseUnary());
    while (IsSymbol(Peek(), "*") || IsSymbol(Peek(), "/") || IsSymbol(Peek(), "%")) {
      const Token& t = Advance();
      ArithOp op = t.text == "*" ? ArithOp::kMul : t.text == "/" ? ArithOp::kDiv : ArithOp::kMod;
      ARROW_ASSIGN_OR_RAISE(auto right, ParseUnary());
      left = Expr::MakeArithmetic(op, std::move(left), std::move(right), t.position);
    }
    return left;
  }

  arrow::Result<ExprPtr> ParseUnary() {
    DepthGuard guard(&depth_);
    if (depth_ > kMaxDepth) return Unexpected(Peek(), "expression nested too deeply");
    if (IsSymbol(Peek(), "-")) {
      size_t pos = Advance().position;
      if (Peek().kind == TokenKind::kNumber) {
        // A minus sign directly before a number is part of the literal, so that the smallest
        // INT / BIGINT values are literals of those types.
        const Token& number = Advance();
        ARROW_ASSIGN_OR_RAISE(auto value, NumberLiteral(number, /*negative=*/true));
        return Expr::MakeLiteral(std::move(value), pos);
      }
      ARROW_ASSIGN_OR_RAISE(auto operand, ParseUnary());
      return Expr::MakeNegate(std::move(operand), pos);
    }
    if (IsSymbol(Peek(), "+")) {
      Advance();
      return ParseUnary();
    }
    return ParsePrimary();
  }

  arrow::Result<std::shared_ptr<arrow::Scalar>> NumberLiteral(const Token& t, bool negative) {
    std::string_view text = t.text;
    std::string suffix;
    for (std::string_view s : {"BD", "L", "S", "Y", "D", "F"}) {
      if (text.size() > s.size() && EqualsIgnoreCase(text.substr(text.size() - s.size()), s)) {
        suffix = std::string(s);
        text.remove_suffix(s.size());
        break;
      }
    }
    const bool integral = text.find_first_of(".eE") == std::string_view::npos;
    std::string body = negative ? "-" : "";
    body += text;
    auto out_of_range = [&](std::string_view type) {
      return SyntaxError(sql_, t.position, SourceOf(t),
                         "numeric literal out of range for " + std::string(type));
    };
    if (!integral && (suffix == "L" || suffix == "S" || suffix == "Y")) {
      return SyntaxError(sql_, t.position, SourceOf(t), "integer suffix on a non-integer literal");
    }
    if (suffix == "D" || suffix == "F" || (suffix.empty() && !integral &&
                                            text.find_first_of("eE") != std::string_view::npos)) {
      double value = 0;
      auto res = std::from_chars(body.data(), body.data() + body.size(), value);
      if (res.ec != std::errc() || res.ptr != body.data() + body.size()) {
        return out_of_range(suffix == "F" ? "FLOAT" : "DOUBLE");
      }
      if (suffix == "F") return std::make_shared<arrow::FloatScalar>(static_cast<float>(value));
      return std::make_shared<arrow::DoubleScalar>(value);
    }
    if (suffix == "BD" || !integral) {
      auto d = MakeDecimalLiteral(body);
      if (!d) return out_of_range("DECIMAL(38)");
      return *d;
    }
    int64_t v = 0;
    auto res = std::from_chars(body.data(), body.data() + body.size(), v);
    const bool parsed = res.ec == std::errc() && res.ptr == body.data() + body.size();
    if (suffix == "Y") {
      if (!parsed || v < INT8_MIN || v > INT8_MAX) return out_of_range("TINYINT");
      return std::make_shared<arrow::Int8Scalar>(static_cast<int8_t>(v));
    }
    if (suffix == "S") {
      if (!parsed || v < INT16_MIN || v > INT16_MAX) return out_of_range("SMALLINT");
      return std::make_shared<arrow::Int16Scalar>(static_cast<int16_t>(v));
    }
    if (suffix == "L") {
      if (!parsed) return out_of_range("BIGINT");
      return std::make_shared<arrow::Int64Scalar>(v);
    }
    if (parsed) {
      if (v >= INT32_MIN && v <= INT32_MAX) {
        return std::make_shared<arrow::Int32Scalar>(static_cast<int32_t>(v));
      }
      return std::make_shared<arrow::Int64Scalar>(v);
    }
    auto d = MakeDecimalLiteral(body);
    if (!d) return out_of_range("DECIMAL(38)");
    return *d;
  }

  arrow::Result<ExprPtr> TypedLiteral(const Token& keyword) {
    const Token& str = Advance();
    const std::string& text = str.text;
    auto invalid = [&](std::string_view what) {
      return SyntaxError(sql_, str.position, SourceOf(str), std::string(what));
    };
    if (IsKeyword(keyword, "DATE")) {
      auto days = ParseDate(text);
      if (!days) return invalid("invalid DATE literal, expected 'yyyy-mm-dd'");
      return Expr::MakeLiteral(std::make_shared<arrow::Date32Scalar>(*days), keyword.position);
    }
    auto ts = ParseTimestamp(text);
    if (!ts) return invalid("invalid TIMESTAMP literal, expected 'yyyy-mm-dd hh:mm:ss[.ffffff][zone]'");
    if (IsKeyword(keyword, "TIMESTAMP_NTZ")) {
      if (ts->has_zone) return invalid("a TIMESTAMP_NTZ literal cannot carry a time zone");
      return Expr::MakeLiteral(
          std::make_shared<arrow::TimestampScalar>(ts->micros, arrow::timestamp(arrow::TimeUnit::MICRO)),
          keyword.position);
    }
    return Expr::MakeLiteral(std::make_shared<arrow::TimestampScalar>(
                                 ts->micros, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                             keyword.position);
  }

  arrow::Result<ExprPtr> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kEnd:
        return Unexpected(t, "expected an operand");
      case TokenKind::kNumber: {
        Advance();
        ARROW_ASSIGN_OR_RAISE(auto value, NumberLiteral(t, /*negative=*/false));
        return Expr::MakeLiteral(std::move(value), t.position);
      }
      case TokenKind::kString: {
        size_t pos = t.position;
        std::string text = Advance().text;
        while (Peek().kind == TokenKind::kString) text += Advance().text;
        return Expr::MakeLiteral(std::make_shared<arrow::StringScalar>(std::move(text)), pos);
      }
      case TokenKind::kHexString: {
        Advance();
        std::string bytes;
        for (size_t i = 0; i + 1 < t.text.size(); i += 2) {
          bytes += static_cast<char>(std::stoi(t.text.substr(i, 2), nullptr, 16));
        }
        return Expr::MakeLiteral(std::make_shared<arrow::BinaryScalar>(std::move(bytes)), t.position);
      }
      case TokenKind::kSymbol: {
        if (t.text == "(") {
          Advance();
          ARROW_ASSIGN_OR_RAISE(auto inner, ParseOr());
          ARROW_RETURN_NOT_OK(Expect(")", "')'"));
          return inner;
        }
        return Unexpected(t, "expected an operand");
      }
      case TokenKind::kQuotedIdentifier:
      case TokenKind::kIdentifier:
        break;
    }
    if (t.kind == TokenKind::kIdentifier) {
      if (IsKeyword(t, "NULL")) {
        Advance();
        return Expr::MakeLiteral(std::make_shared<arrow::NullScalar>(), t.position);
      }
      if (IsKeyword(t, "TRUE") || IsKeyword(t, "FALSE")) {
        Advance();
        return Expr::MakeLiteral(std::make_shared<arrow::BooleanScalar>(IsKeyword(t, "TRUE")),
                                 t.position);
      }
      if ((IsKeyword(t, "DATE") || IsKeyword(t, "TIMESTAMP") || IsKeyword(t, "TIMESTAMP_NTZ") ||
           IsKeyword(t, "TIMESTAMP_LTZ")) &&
          Peek(1).kind == TokenKind::kString) {
        const Token& keyword = Advance();
        return TypedLiteral(keyword);
      }
      if (IsKeyword(t, "CASE") && StartsOperand(Peek(1))) return ParseCase();
      if (IsKeyword(t, "CAST") && IsSymbol(Peek(1), "(")) return ParseCast();
      if (IsReservedWord(t.text)) {
        return Unexpected(t, "expected an operand, found keyword (use `backquotes` for a column "
                             "with this name)");
      }
    }
    const Token& first = Advance();
    if (IsSymbol(Peek(), "(")) {
      Advance();
      std::vector<ExprPtr> args;
      if (!IsSymbol(Peek(), ")")) {
        while (true) {
          ARROW_ASSIGN_OR_RAISE(auto arg, ParseOr());
          args.push_back(std::move(arg));
          if (IsSymbol(Peek(), ",")) {
            Advance();
            continue;
          }
          break;
        }
      }
      ARROW_RETURN_NOT_OK(Expect(")", "',' or ')' in argument list"));
      return Expr::MakeFunction(first.text, std::move(args), first.position);
    }
    std::vector<std::string> path{first.text};
    while (IsSymbol(Peek(), ".")) {
      Advance();
      const Token& part = Peek();
      if (part.kind != TokenKind::kIdentifier && part.kind != TokenKind::kQuotedIdentifier) {
        return Unexpected(part, "expected a field name after '.'");
      }
      path.push_back(Advance().text);
    }
    return Expr::MakeColumn(std::move(path), first.position);
  }

  // Whether `t` can begin an operand (so that `CASE` before it is the keyword, not a column).
  bool StartsOperand(const Token& t) const {
    if (t.kind == TokenKind::kEnd) return false;
    if (t.kind == TokenKind::kSymbol) {
      return t.text == "(" || t.text == "-" || t.text == "+";
    }
    if (t.kind == TokenKind::kIdentifier) {
      return !IsKeyword(t, "AND") && !IsKeyword(t, "OR") && !IsKeyword(t, "IS") &&
             !IsKeyword(t, "IN") && !IsKeyword(t, "BETWEEN") && !IsKeyword(t, "LIKE") &&
             !IsKeyword(t, "THEN") && !IsKeyword(t, "ELSE") && !IsKeyword(t, "END");
    }
    return true;
  }

  arrow::Result<ExprPtr> ParseCase() {
    const size_t pos = Advance().position;
    ExprPtr operand;
    if (!IsKeyword(Peek(), "WHEN")) {
      ARROW_ASSIGN_OR_RAISE(operand, ParseOr());
    }
    std::vector<std::pair<ExprPtr, ExprPtr>> branches;
    while (IsKeyword(Peek(), "WHEN")) {
      Advance();
      ARROW_ASSIGN_OR_RAISE(auto when, ParseOr());
      if (!IsKeyword(Peek(), "THEN")) return Unexpected(Peek(), "expected THEN in CASE");
      Advance();
      ARROW_ASSIGN_OR_RAISE(auto then, ParseOr());
      branches.emplace_back(std::move(when), std::move(then));
    }
    if (branches.empty()) return Unexpected(Peek(), "expected WHEN in CASE");
    ExprPtr else_value;
    if (IsKeyword(Peek(), "ELSE")) {
      Advance();
      ARROW_ASSIGN_OR_RAISE(else_value, ParseOr());
    }
    if (!IsKeyword(Peek(), "END")) return Unexpected(Peek(), "expected WHEN, ELSE or END in CASE");
    Advance();
    // if(c1, t1, if(c2, t2, else)): a NULL condition, like a FALSE one, passes to the next.
    ExprPtr out = else_value ? std::move(else_value)
                             : Expr::MakeLiteral(std::make_shared<arrow::NullScalar>(), pos);
    for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
      ExprPtr condition = operand ? Expr::MakeComparison(CompareOp::kEq, operand, it->first,
                                                         it->first->position())
                                  : it->first;
      out = Expr::MakeFunction("if", {std::move(condition), it->second, std::move(out)}, pos);
    }
    return out;
  }

  arrow::Result<ExprPtr> ParseCast() {
    const size_t pos = Advance().position;
    Advance();  // (
    ARROW_ASSIGN_OR_RAISE(auto operand, ParseOr());
    if (!IsKeyword(Peek(), "AS")) return Unexpected(Peek(), "expected AS in CAST");
    Advance();
    // The type runs to the ')' that closes the CAST; parentheses inside it (DECIMAL(10,2))
    // and angle brackets (ARRAY<INT>) are left to the type parser.
    const Token& first = Peek();
    size_t last_end = first.position;
    int depth = 0;
    while (Peek().kind != TokenKind::kEnd && !(depth == 0 && IsSymbol(Peek(), ")"))) {
      if (IsSymbol(Peek(), "(")) ++depth;
      if (IsSymbol(Peek(), ")")) --depth;
      last_end = Advance().end;
    }
    if (last_end == first.position) return Unexpected(Peek(), "expected a type name in CAST");
    std::string_view type_text = sql_.substr(first.position, last_end - first.position);
    auto type = ParseTypeName(type_text);
    if (!type.ok()) {
      return SyntaxError(sql_, first.position, type_text,
                         "invalid type in CAST: " + type.status().message());
    }
    ARROW_RETURN_NOT_OK(Expect(")", "')' after the type in CAST"));
    auto type_literal =
        Expr::MakeLiteral(std::make_shared<arrow::StringScalar>(std::string(type_text)),
                          first.position);
    return Expr::MakeFunction("cast", {std::move(operand), std::move(type_literal)}, pos);
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t index_ = 0;
  int depth_ = 0;
};

}  // namespace

arrow::Result<ExprPtr> ParseExpression(std::string_view sql) {
  ARROW_ASSIGN_OR_RAISE(auto tokens, Tokenize(sql));
  if (tokens.size() == 1) {
    return SyntaxError(sql, 0, "", "empty expression");
  }
  return Parser(sql, std::move(tokens)).ParseAll();
}

}  // namespace deltacpp::internal
