// Resolves column names and checks/coerces types of a parsed expression against a schema.
#pragma once

#include <arrow/result.h>
#include <arrow/type.h>

#include "expr/ast.h"
#include "expr/bound_expr.h"

namespace deltacpp::internal {

/// Binds `expr` to `logical_schema` (the table's logical Arrow schema; fields may carry the
/// "delta.columnMapping.physicalName" metadata).
///
/// Column names resolve case-insensitively as in Spark (a name matching several fields is
/// ambiguous); `a.b` descends into struct fields. Literals are converted to the type of the
/// column they are compared with when that is exact (INT literal vs BIGINT column, '2021-01-01'
/// vs DATE, 5 vs DECIMAL(10,2), ...); otherwise both sides are widened to a common type, making
/// the conversion of the column explicit as a kCast node. BETWEEN becomes two comparisons and
/// NOT IN becomes NOT (IN). `/` always yields DOUBLE; `%` takes integral operands only. LIKE
/// needs a constant pattern (rewritten for Arrow's match_like); CASE / if() become kCase;
/// CAST(x AS t) is a kCast with explicit_cast set; CASE x WHEN v is x = v. Supported functions:
/// abs, coalesce, nvl/ifnull, if, lower, upper, length, trim, ltrim, rtrim, substring/substr
/// (constant position and length), concat, replace (constant search and replacement), year,
/// month, day/dayofmonth, hour, minute, second, to_date (one argument: CAST AS DATE), date_add,
/// date_sub, datediff, current_date, current_timestamp (fixed at binding, UTC).
///
/// Errors (kInvalidExpression) name the column or sub-expression, its position and the cause:
/// unknown or ambiguous columns, type mismatches, non-boolean operands of AND/OR/NOT, unknown
/// functions.
///
/// current_date() / current_timestamp() / now() are taken once, at binding; they bind only with
/// `allow_current_time` (a query condition), never in stored rules such as generation
/// expressions or CHECK constraints, which must be deterministic.
arrow::Result<BoundExpr> Bind(const ExprPtr& expr, const arrow::Schema& logical_schema,
                              bool allow_current_time = false);

/// Bind() and additionally require a BOOLEAN result (a bare NULL becomes a BOOLEAN NULL):
/// the entry point for filters and conditions.
arrow::Result<BoundExpr> BindPredicate(const ExprPtr& expr, const arrow::Schema& logical_schema,
                                       bool allow_current_time = false);

}  // namespace deltacpp::internal
