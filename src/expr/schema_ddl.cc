#include "expr/schema_ddl.h"

#include <fmt/core.h>

#include <set>

#include "deltacpp/schema.h"
#include "expr/lexer.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

class DdlParser {
 public:
  DdlParser(std::string_view text, std::vector<Token> tokens)
      : text_(text), tokens_(std::move(tokens)) {}

  arrow::Result<std::shared_ptr<arrow::Schema>> Columns() {
    arrow::FieldVector fields;
    std::set<std::string> seen;
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto field, Column());
      if (!seen.insert(Upper(field->name())).second) {
        return Error(fmt::format("column '{}' is defined twice", field->name()));
      }
      fields.push_back(std::move(field));
      if (!Accept(",")) break;
    }
    if (Peek().kind != TokenKind::kEnd) return Error("expected ',' or the end of the definitions");
    return arrow::schema(std::move(fields));
  }

  arrow::Result<std::shared_ptr<arrow::DataType>> TypeOnly() {
    ARROW_ASSIGN_OR_RAISE(auto type, Type());
    if (Peek().kind != TokenKind::kEnd) return Error("unexpected text after the type");
    return type;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool IsWord(std::string_view w) const {
    return Peek().kind == TokenKind::kIdentifier && EqualsIgnoreCase(Peek().text, w);
  }
  bool Accept(std::string_view sym) {
    if (Peek().kind == TokenKind::kSymbol && Peek().text == sym) {
      ++pos_;
      return true;
    }
    return false;
  }
  arrow::Status Error(std::string_view message) const {
    const Token& t = Peek();
    std::string near = t.kind == TokenKind::kEnd ? std::string() : t.text;
    return SyntaxError(text_, t.position, near, message);
  }
  arrow::Status Expect(std::string_view sym) {
    if (!Accept(sym)) return Error(fmt::format("expected '{}'", sym));
    return arrow::Status::OK();
  }
  arrow::Status ExpectWord(std::string_view w) {
    if (!IsWord(w)) return Error(fmt::format("expected {}", w));
    ++pos_;
    return arrow::Status::OK();
  }

  arrow::Result<std::string> Name() {
    const Token& t = Peek();
    if (t.kind != TokenKind::kIdentifier && t.kind != TokenKind::kQuotedIdentifier) {
      return Error("expected a column name");
    }
    ++pos_;
    return t.text;
  }

  arrow::Result<int> Integer() {
    const Token& t = Peek();
    if (t.kind != TokenKind::kNumber) return Error("expected a number");
    ++pos_;
    try {
      return std::stoi(t.text);
    } catch (...) {
      return Error("expected a small integer");
    }
  }

  arrow::Result<std::shared_ptr<arrow::DataType>> Type() {
    const Token& t = Peek();
    if (t.kind != TokenKind::kIdentifier) return Error("expected a type name");
    std::string name = Upper(t.text);
    ++pos_;
    if (name == "ARRAY") {
      ARROW_RETURN_NOT_OK(Expect("<"));
      ARROW_ASSIGN_OR_RAISE(auto element, Type());
      ARROW_RETURN_NOT_OK(Expect(">"));
      return arrow::list(arrow::field("element", element, true));
    }
    if (name == "MAP") {
      ARROW_RETURN_NOT_OK(Expect("<"));
      ARROW_ASSIGN_OR_RAISE(auto key, Type());
      ARROW_RETURN_NOT_OK(Expect(","));
      ARROW_ASSIGN_OR_RAISE(auto value, Type());
      ARROW_RETURN_NOT_OK(Expect(">"));
      return std::make_shared<arrow::MapType>(arrow::field("key", key, false),
                                              arrow::field("value", value, true));
    }
    if (name == "STRUCT") {
      ARROW_RETURN_NOT_OK(Expect("<"));
      arrow::FieldVector children;
      if (!Accept(">")) {
        while (true) {
          ARROW_ASSIGN_OR_RAISE(auto child_name, Name());
          Accept(":");
          ARROW_ASSIGN_OR_RAISE(auto child_type, Type());
          bool nullable = true;
          if (IsWord("NOT")) {
            ++pos_;
            ARROW_RETURN_NOT_OK(ExpectWord("NULL"));
            nullable = false;
          }
          children.push_back(arrow::field(child_name, child_type, nullable));
          if (Accept(",")) continue;
          ARROW_RETURN_NOT_OK(Expect(">"));
          break;
        }
      }
      return arrow::struct_(children);
    }
    if (name == "DECIMAL" || name == "DEC" || name == "NUMERIC") {
      int precision = 10, scale = 0;
      if (Accept("(")) {
        ARROW_ASSIGN_OR_RAISE(precision, Integer());
        if (Accept(",")) {
          ARROW_ASSIGN_OR_RAISE(scale, Integer());
        }
        ARROW_RETURN_NOT_OK(Expect(")"));
      }
      if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
        return SyntaxError(text_, t.position, t.text,
                           fmt::format("invalid decimal({},{}): precision must be 1..38 and "
                                       "scale 0..precision",
                                       precision, scale));
      }
      return arrow::decimal128(precision, scale);
    }
    if (name == "VARCHAR" || name == "CHAR") {
      // Delta stores these as string; the length is not enforced here.
      if (Accept("(")) {
        ARROW_RETURN_NOT_OK(Integer().status());
        ARROW_RETURN_NOT_OK(Expect(")"));
      }
      return arrow::utf8();
    }
    static const std::pair<const char*, std::shared_ptr<arrow::DataType>> kNames[] = {
        {"BYTE", arrow::int8()},       {"TINYINT", arrow::int8()},
        {"SHORT", arrow::int16()},     {"SMALLINT", arrow::int16()},
        {"INT", arrow::int32()},       {"INTEGER", arrow::int32()},
        {"LONG", arrow::int64()},      {"BIGINT", arrow::int64()},
        {"FLOAT", arrow::float32()},   {"REAL", arrow::float32()},
        {"DOUBLE", arrow::float64()},  {"STRING", arrow::utf8()},
        {"BINARY", arrow::binary()},   {"BOOLEAN", arrow::boolean()},
        {"BOOL", arrow::boolean()},    {"DATE", arrow::date32()},
        {"TIMESTAMP", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")},
        {"TIMESTAMP_LTZ", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")},
        {"TIMESTAMP_NTZ", arrow::timestamp(arrow::TimeUnit::MICRO)},
        {"VOID", arrow::null()},
    };
    for (const auto& [n, type] : kNames) {
      if (name == n) return type;
    }
    return SyntaxError(text_, t.position, t.text, "unknown type name");
  }

  arrow::Result<std::shared_ptr<arrow::Field>> Column() {
    ARROW_ASSIGN_OR_RAISE(auto name, Name());
    ARROW_ASSIGN_OR_RAISE(auto type, Type());
    bool nullable = true;
    auto metadata = std::make_shared<arrow::KeyValueMetadata>();
    while (true) {
      if (IsWord("NOT")) {
        ++pos_;
        ARROW_RETURN_NOT_OK(ExpectWord("NULL"));
        nullable = false;
      } else if (IsWord("GENERATED")) {
        ++pos_;
        ARROW_RETURN_NOT_OK(ExpectWord("ALWAYS"));
        ARROW_RETURN_NOT_OK(ExpectWord("AS"));
        const Token& open = Peek();
        ARROW_RETURN_NOT_OK(Expect("("));
        int depth = 1;
        size_t start = open.end;
        size_t stop = start;
        while (depth > 0) {
          const Token& tok = Peek();
          if (tok.kind == TokenKind::kEnd) return Error("unterminated generation expression");
          if (tok.kind == TokenKind::kSymbol && tok.text == "(") ++depth;
          if (tok.kind == TokenKind::kSymbol && tok.text == ")") --depth;
          stop = tok.position;
          ++pos_;
        }
        std::string expr(text_.substr(start, stop - start));
        auto b = expr.find_first_not_of(" \t\n");
        auto e = expr.find_last_not_of(" \t\n");
        if (b == std::string::npos) return Error("empty generation expression");
        metadata->Append("delta.generationExpression", JsonString(expr.substr(b, e - b + 1)));
      } else if (IsWord("COMMENT")) {
        ++pos_;
        const Token& c = Peek();
        if (c.kind != TokenKind::kString) return Error("expected a quoted comment");
        ++pos_;
        metadata->Append("comment", JsonString(c.text));
      } else {
        break;
      }
    }
    return arrow::field(name, type, nullable, metadata->size() > 0 ? metadata : nullptr);
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

arrow::Result<std::shared_ptr<arrow::Schema>> ParseColumnDefinitions(std::string_view ddl) {
  ARROW_ASSIGN_OR_RAISE(auto tokens, Tokenize(ddl));
  return DdlParser(ddl, std::move(tokens)).Columns();
}

arrow::Result<std::shared_ptr<arrow::DataType>> ParseTypeName(std::string_view text) {
  ARROW_ASSIGN_OR_RAISE(auto tokens, Tokenize(text));
  return DdlParser(text, std::move(tokens)).TypeOnly();
}

}  // namespace deltacpp::internal

namespace deltacpp {
arrow::Result<std::shared_ptr<arrow::Schema>> SchemaFromDdl(std::string_view ddl) {
  return internal::ParseColumnDefinitions(ddl);
}
}  // namespace deltacpp
