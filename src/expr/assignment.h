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
/// in Bind() and must convert to the column as delta-spark's UPDATE and MERGE convert assigned
/// values under Spark's default ANSI policy, i.e. by Spark's ANSI CAST with overflow checked
/// when stored: numbers and booleans to any numeric or BOOLEAN column, any atomic value to
/// STRING, STRING to any atomic column (parsed when stored), DATE / TIMESTAMP / TIMESTAMP_NTZ to
/// one another, equal types, and NULL to anything (NOT NULL is the constraints' business).
/// DATE or TIMESTAMP to or from numbers, and nested values to scalars, are refused. (This is
/// looser than Spark's table-insertion rule, canANSIStoreAssign, which refuses STRING to INT:
/// delta-spark casts assigned values itself, and Spark 4 with delta-spark 4 stores `SET i = '5'`.)
///
/// Errors: InvalidExpression naming the column for an unknown or ambiguous column, a value that
/// does not bind, or a value type the column cannot take; UnsupportedFeature for a nested target
/// and for the conversions Spark allows that deltacpp does not store yet (nested types that
/// differ from the column's).
arrow::Result<BoundAssignment> BindAssignment(const std::string& column, const ExprPtr& value,
                                              const arrow::Schema& schema,
                                              bool allow_current_time = true);

/// The assignment's value for every row of `rows` (a batch with the fields of the bound schema),
/// converted to the target column's type as Spark stores it: integral and decimal values that
/// do not fit the target fail; fractions are truncated toward zero when stored in an integral
/// column; decimals are rounded half up (away from zero) to the target scale; values stored in
/// FLOAT/DOUBLE are rounded to the nearest representable value (a DOUBLE too large for FLOAT
/// becomes infinity); numbers stored as BOOLEAN are TRUE unless zero; decimals become plain
/// text (`0.0000000001`, never `1E-10`), FLOAT/DOUBLE text as Java prints them (`1.9`,
/// `1.0E20`), timestamps `2024-01-31 10:30:00.5` (UTC); text is parsed as CAST parses it;
/// timestamps keep their date part (in UTC) in a DATE.
///
/// `first_row` is the position of rows[0] within the operation, `context` (table, version, file)
/// prefixes the messages. Errors name the column, the offending value and its 1-based row number
/// (first_row + i + 1): SchemaMismatch when a value does not fit the column's type,
/// InvalidArgument when computing the value fails (overflow, division by zero, text that does
/// not parse, ...).
arrow::Result<std::shared_ptr<arrow::Array>> EvaluateAssignment(
    const BoundAssignment& assignment, const std::shared_ptr<arrow::RecordBatch>& rows,
    int64_t first_row, const std::string& context);

}  // namespace deltacpp::internal
