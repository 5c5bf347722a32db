// Spark's LIKE patterns, rewritten for Arrow's `match_like` kernel.
#pragma once

#include <arrow/result.h>

#include <string>
#include <string_view>

namespace deltacpp::internal {

/// Rewrites a Spark LIKE pattern (`%` any sequence, `_` any one character, `escape` before `%`,
/// `_` or itself to match it literally) into the spelling of Arrow's `match_like`, which always
/// escapes with a backslash. As in Spark, the escape character before any other character, or
/// at the very end, is an error (kInvalidExpression naming the pattern).
arrow::Result<std::string> ToArrowLikePattern(std::string_view pattern, char escape);

}  // namespace deltacpp::internal
