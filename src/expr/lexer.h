// Tokenizer for the SQL expression language.
#pragma once

#include <arrow/result.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp::internal {

/// Token categories.
enum class TokenKind {
  kIdentifier,        ///< bare word (keywords included; the parser tells them apart)
  kQuotedIdentifier,  ///< `backquoted` name, text unescaped
  kNumber,            ///< numeric literal as written, e.g. `12`, `1.5e3`, `10L`, `.5`
  kString,            ///< quoted string, text unescaped
  kHexString,         ///< X'0A1B': text holds the hex digits
  kSymbol,            ///< operator or punctuation: = == != <> < <= > >= <=> + - * / % ( ) , .
  kEnd,               ///< end of input
};

/// One token with its 0-based offset in the source text.
struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  size_t position = 0;
  size_t end = 0;  ///< offset one past the token's last character
};

/// Splits `sql` into tokens, ending with a kEnd token. Unterminated quotes and characters
/// outside the language fail with kInvalidExpression naming the position.
arrow::Result<std::vector<Token>> Tokenize(std::string_view sql);

/// Builds the kInvalidExpression status used for syntax errors: names the 1-based position,
/// the offending text (or end of input) and the expression.
arrow::Status SyntaxError(std::string_view sql, size_t position, std::string_view near,
                          std::string_view message);

}  // namespace deltacpp::internal
