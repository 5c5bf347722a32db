// Translation of bound expressions into Arrow compute expressions for row-level evaluation.
#pragma once

#include <arrow/compute/expression.h>
#include <arrow/result.h>

#include "expr/bound_expr.h"

namespace deltacpp::internal {

/// The Arrow compute expression computing `expr` over rows of the LOGICAL schema (columns are
/// referenced by logical name; nested columns by FieldRef path). SQL semantics are kept:
/// AND/OR/NOT are Kleene (three-valued), comparisons with NULL yield NULL, `<=>` is never NULL,
/// IN yields NULL when nothing matches and the value or a list item is NULL. Errors follow
/// Spark 4's default ANSI mode: integer overflow, division (`/`, `%`) by zero and CAST of text
/// that does not convert fail the evaluation instead of giving NULL. Floating-point comparisons
/// (also in IN and `<=>`) follow Spark: NaN = NaN is true and NaN is greater than every other
/// value. Registers Arrow's compute kernels on first use.
arrow::Result<arrow::compute::Expression> ToArrowExpression(const BoundExpr& expr);

/// For row filters: a non-null boolean expression that is true exactly where the BOOLEAN
/// `predicate` is TRUE (NULL and FALSE both give false).
arrow::Result<arrow::compute::Expression> ToArrowFilter(const BoundExpr& predicate);

}  // namespace deltacpp::internal
