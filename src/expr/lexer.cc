#include "expr/lexer.h"

#include <cctype>

#include "deltacpp/error.h"

namespace deltacpp::internal {

namespace {

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view sql) : sql_(sql) {}

  arrow::Result<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      while (pos_ < sql_.size() && IsSpace(sql_[pos_])) ++pos_;
      if (pos_ >= sql_.size()) break;
      ARROW_ASSIGN_OR_RAISE(Token t, Next(tokens));
      t.end = pos_;
      tokens.push_back(std::move(t));
    }
    tokens.push_back(Token{TokenKind::kEnd, "", sql_.size(), sql_.size()});
    return tokens;
  }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  arrow::Result<Token> Next(const std::vector<Token>& previous) {
    const size_t start = pos_;
    const char c = sql_[pos_];
    if ((c == 'x' || c == 'X') && pos_ + 1 < sql_.size() && sql_[pos_ + 1] == '\'') {
      return HexString();
    }
    if (IsIdentStart(c)) {
      while (pos_ < sql_.size() && IsIdentChar(sql_[pos_])) ++pos_;
      return Token{TokenKind::kIdentifier, std::string(sql_.substr(start, pos_ - start)), start, 0};
    }
    if (c == '`') return QuotedIdentifier();
    if (c == '\'' || c == '"') return String(c);
    // A '.' directly after a name or ')' is a field separator, otherwise it may start a number.
    bool dot_is_separator =
        !previous.empty() && (previous.back().kind == TokenKind::kIdentifier ||
                              previous.back().kind == TokenKind::kQuotedIdentifier ||
                              (previous.back().kind == TokenKind::kSymbol &&
                               previous.back().text == ")"));
    if (IsDigit(c) || (c == '.' && !dot_is_separator && pos_ + 1 < sql_.size() &&
                       IsDigit(sql_[pos_ + 1]))) {
      return Number();
    }
    static constexpr std::string_view kSymbols[] = {"<=>", "==", "!=", "<>", "<=", ">=", "=",
                                                    "<",   ">",  "+",  "-",  "*",  "/",  "(",
                                                    ")",   ",",  ".",  ":",  "%"};
    for (auto sym : kSymbols) {
      if (sql_.substr(pos_, sym.size()) == sym) {
        pos_ += sym.size();
        return Token{TokenKind::kSymbol, std::string(sym), start, 0};
      }
    }
    return SyntaxError(sql_, start, sql_.substr(start, 1), "unexpected character");
  }

  arrow::Result<Token> Number() {
    const size_t start = pos_;
    while (pos_ < sql_.size() && IsDigit(sql_[pos_])) ++pos_;
    if (pos_ < sql_.size() && sql_[pos_] == '.') {
      ++pos_;
      while (pos_ < sql_.size() && IsDigit(sql_[pos_])) ++pos_;
    }
    if (pos_ < sql_.size() && (sql_[pos_] == 'e' || sql_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < sql_.size() && (sql_[p] == '+' || sql_[p] == '-')) ++p;
      if (p < sql_.size() && IsDigit(sql_[p])) {
        pos_ = p;
        while (pos_ < sql_.size() && IsDigit(sql_[pos_])) ++pos_;
      }
    }
    // Optional type suffix (L, S, Y, D, F, BD); anything else glued on is an error.
    const size_t suffix_start = pos_;
    while (pos_ < sql_.size() && IsIdentChar(sql_[pos_])) ++pos_;
    std::string suffix(sql_.substr(suffix_start, pos_ - suffix_start));
    for (auto& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (!suffix.empty() && suffix != "L" && suffix != "S" && suffix != "Y" && suffix != "D" &&
        suffix != "F" && suffix != "BD") {
      return SyntaxError(sql_, start, sql_.substr(start, pos_ - start), "malformed number");
    }
    return Token{TokenKind::kNumber, std::string(sql_.substr(start, pos_ - start)), start, 0};
  }

  arrow::Result<Token> QuotedIdentifier() {
    const size_t start = pos_++;
    std::string text;
    while (true) {
      if (pos_ >= sql_.size()) {
        return SyntaxError(sql_, start, sql_.substr(start), "unterminated quoted identifier");
      }
      char c = sql_[pos_++];
      if (c == '`') {
        if (pos_ < sql_.size() && sql_[pos_] == '`') {
          text += '`';
          ++pos_;
          continue;
        }
        break;
      }
      text += c;
    }
    if (text.empty()) return SyntaxError(sql_, start, "``", "empty quoted identifier");
    return Token{TokenKind::kQuotedIdentifier, std::move(text), start, 0};
  }

  arrow::Result<Token> String(char quote) {
    const size_t start = pos_++;
    std::string text;
    while (true) {
      if (pos_ >= sql_.size()) {
        return SyntaxError(sql_, start, sql_.substr(start), "unterminated string literal");
      }
      char c = sql_[pos_++];
      if (c == quote) {
        if (pos_ < sql_.size() && sql_[pos_] == quote) {  // doubled quote
          text += quote;
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\\' && pos_ < sql_.size()) {
        char e = sql_[pos_++];
        switch (e) {
          case 'n': text += '\n'; break;
          case 't': text += '\t'; break;
          case 'r': text += '\r'; break;
          case 'b': text += '\b'; break;
          case '0': text += '\0'; break;
          case 'u': {
            if (pos_ + 4 > sql_.size()) {
              return SyntaxError(sql_, pos_ - 2, sql_.substr(pos_ - 2), "bad \\u escape");
            }
            uint32_t cp = 0;
            for (int i = 0; i < 4; ++i) {
              char h = sql_[pos_ + i];
              if (!IsHexDigit(h)) {
                return SyntaxError(sql_, pos_ - 2, sql_.substr(pos_ - 2, 6), "bad \\u escape");
              }
              cp = cp * 16 + static_cast<uint32_t>(IsDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
            }
            pos_ += 4;
            AppendUtf8(cp, &text);
            break;
          }
          default: text += e; break;  // \' \" \\ and any other character stand for themselves
        }
        continue;
      }
      text += c;
    }
    return Token{TokenKind::kString, std::move(text), start, 0};
  }

  arrow::Result<Token> HexString() {
    const size_t start = pos_;
    pos_ += 2;
    std::string digits;
    while (pos_ < sql_.size() && sql_[pos_] != '\'') {
      if (!IsHexDigit(sql_[pos_])) {
        return SyntaxError(sql_, pos_, sql_.substr(pos_, 1), "invalid hex digit in binary literal");
      }
      digits += sql_[pos_++];
    }
    if (pos_ >= sql_.size()) {
      return SyntaxError(sql_, start, sql_.substr(start), "unterminated binary literal");
    }
    ++pos_;
    if (digits.size() % 2 != 0) {
      return SyntaxError(sql_, start, sql_.substr(start, pos_ - start),
                         "binary literal needs an even number of hex digits");
    }
    return Token{TokenKind::kHexString, std::move(digits), start, 0};
  }

  std::string_view sql_;
  size_t pos_ = 0;
};

}  // namespace

arrow::Status SyntaxError(std::string_view sql, size_t position, std::string_view near,
                          std::string_view message) {
  std::string msg = "syntax error at position " + std::to_string(position + 1);
  if (near.empty()) {
    msg += " (end of input)";
  } else {
    msg += " near '" + std::string(near.substr(0, 40)) + "'";
  }
  msg += ": " + std::string(message) + " in expression \"" + std::string(sql) + "\"";
  return DeltaError(DeltaErrorCode::kInvalidExpression, std::move(msg));
}

arrow::Result<std::vector<Token>> Tokenize(std::string_view sql) { return Lexer(sql).Run(); }

}  // namespace deltacpp::internal
