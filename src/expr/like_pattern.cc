#include "expr/like_pattern.h"

#include "deltacpp/error.h"

namespace deltacpp::internal {

arrow::Result<std::string> ToArrowLikePattern(std::string_view pattern, char escape) {
  std::string out;
  out.reserve(pattern.size() + 4);
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == escape) {
      if (i + 1 == pattern.size()) {
        return DeltaError(DeltaErrorCode::kInvalidExpression,
                          "invalid LIKE pattern '" + std::string(pattern) +
                              "': it ends with the escape character");
      }
      const char next = pattern[++i];
      if (next != '%' && next != '_' && next != escape) {
        return DeltaError(DeltaErrorCode::kInvalidExpression,
                          "invalid LIKE pattern '" + std::string(pattern) +
                              "': the escape character may only precede '%', '_' or itself");
      }
      out += '\\';
      out += next;
      continue;
    }
    // A backslash that is not the escape character stands for itself.
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace deltacpp::internal
