// `SET column = value`: binding a value to a target column and storing it under Spark's ANSI
// store-assignment rules.
#pragma once

#include <arrow/compute/expression.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/type.h>

#include <memory>
#include <string>

#include "expr/ast.h"
#include "expr/bound_expr.h"

namespace deltacpp::internal {

/// `SET column = value` bound to the target column of a logical table schema.
struct BoundAssignment {
  /// Position of the target among the top-level fields of the schema.
  int field_index = -1;
  /// The target field (exact name, type, nullability).
  std::shared_ptr<arrow::Field> target;
  /// The value, bound to the schema; its type is converted to the target's on evaluation.
  BoundExpr value;
  /// `value` as an (unbound) Arrow expression over rows of the schema's fields, by name.
  arrow::compute::Expression expression;
};

/// Binds `SET column = value` to `schema` (the table's logical schema).
///
/// The column name resolves case-insensitively among the top-level fields; nested targets
/// (`a.b`) are refused (UnsupportedFeature): assign the whole struct instead. The value binds as
/// in Bind() and must be store-assignable to the column as in Spark's default ANSI policy
/// (spark.sql.storeAssignmentPolicy=ANSI): numeric to any numeric type (checked per value when
/// stored), any atomic type to STRING, DATE / TIMESTAMP / TIMESTAMP_NTZ to one another, equal
/// types, and NULL to anything (NOT NULL is the constraints' business, not this one's).
/// STRING to a number, date or boolean, and BOOLEAN to or from a number are refused.
///
/// Errors: InvalidExpression naming the column for an unknown or ambiguous column, a value that
/// does not bind, or a value type the column cannot take; UnsupportedFeature for a nested target
/// and for the conversions Spark allows that deltacpp does not store yet (FLOAT/DOUBLE and
/// TIMESTAMP to STRING, nested types that differ from the column's).
arrow::Result<BoundAssignment> BindAssignment(const std::string& column, const ExprPtr& value,
                                              const arrow::Schema& schema,
                                              bool allow_current_time = true);

/// The assignment's value for every row of `rows` (a batch with the fields of the bound schema),
/// converted to the target column's type as Spark stores it under ANSI rules: integral and
/// decimal values that do not fit the target fail; fractions are truncated toward zero when
/// stored in an integral column; decimals are rounded half up (away from zero) to the target
/// scale; values stored in FLOAT/DOUBLE are rounded to the nearest representable value (a DOUBLE
/// too large for FLOAT becomes infinity); timestamps keep their date part (in UTC) in a DATE.
///
/// `first_row` is the position of rows[0] within the operation, `context` (table, version, file)
/// prefixes the messages. Errors name the column, the offending value and its 1-based row number
/// (first_row + i + 1): SchemaMismatch when a value does not fit the column's type,
/// InvalidArgument when computing the value fails (overflow, division by zero, ...).
arrow::Result<std::shared_ptr<arrow::Array>> EvaluateAssignment(
    const BoundAssignment& assignment, const std::shared_ptr<arrow::RecordBatch>& rows,
    int64_t first_row, const std::string& context);

}  // namespace deltacpp::internal
