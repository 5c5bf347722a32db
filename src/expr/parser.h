// Recursive-descent parser for the Spark SQL expression subset deltacpp accepts.
#pragma once

#include <arrow/result.h>

#include <string_view>

#include "expr/ast.h"

namespace deltacpp::internal {

/// Parses a SQL boolean/scalar expression such as `a.b > 5 AND name IN ('x', 'y')`.
///
/// Grammar, loosest binding first: OR; AND; NOT; comparisons (= == != <> < <= > >= <=>),
/// IS [NOT] NULL, [NOT] IN (...), [NOT] BETWEEN x AND y; + -; * /; unary - +; then literals,
/// column references (`a.b.c`, `` `odd name` ``), function calls `f(x, ...)` and parentheses.
/// Keywords are case-insensitive. Literals: NULL, TRUE, FALSE, integers (INT, BIGINT when
/// larger, DECIMAL beyond BIGINT; suffixes Y S L), decimals `1.50`, doubles `1e3` / `1.5D`,
/// floats `1.5F`, `1.5BD` decimals, 'strings' and "strings" ('' or \' escapes a quote; adjacent
/// strings concatenate), X'hex' binary, DATE 'yyyy-mm-dd', TIMESTAMP '...' (zone-less means UTC,
/// a zone suffix is converted to UTC) and TIMESTAMP_NTZ '...'.
///
/// Errors are kInvalidExpression naming the 1-based position and the offending token.
arrow::Result<ExprPtr> ParseExpression(std::string_view sql);

}  // namespace deltacpp::internal
