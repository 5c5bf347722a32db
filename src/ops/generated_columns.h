// Generated columns (`delta.generationExpression`): computes the columns a write leaves out and
// checks the values it supplies against their expressions.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/expression.h>

#include <memory>
#include <string>
#include <vector>

namespace deltacpp::internal {

/// The generated columns of a table, bound for one write.
///
/// Expressions are parsed, bound and evaluated by the expression layer (expr/binder.h,
/// expr/to_arrow.h) like any condition, with Spark's ANSI semantics: CAST, to_date, year, month,
/// day, hour, minute, second and the other deterministic functions the binder knows. A
/// conversion that would lose information (overflow, text that is not a number or a date)
/// fails the write rather than produce a value different from Spark's. The result is converted
/// to the column type.
class GeneratedColumns {
 public:
  /// The top-level fields of `table` that carry a generation expression and that `input` does
  /// not have (names compared case-insensitively): the columns a write computes.
  static arrow::FieldVector MissingFrom(const arrow::Schema& table, const arrow::Schema& input);

  /// Binds the generation expression of every top-level column of `table_schema` that has one;
  /// `input_schema` tells which of them the data supplies. Errors: UnsupportedFeature naming the
  /// column and the expression when the expression cannot be evaluated here (syntax, function or
  /// conversion outside the supported set, a result that does not convert to the column type, a
  /// supplied column whose type cannot be compared), or when a nested field has a generation
  /// expression.
  static arrow::Result<GeneratedColumns> Make(const std::shared_ptr<arrow::Schema>& table_schema,
                                              const arrow::Schema& input_schema);

  /// True when the table has no generated column.
  bool empty() const { return columns_.empty(); }

  /// For a batch conformed to the table schema: replaces every column the input lacked by its
  /// computed values, and checks that every supplied value equals the computed one
  /// (`col <=> expr`: NULL equals NULL, NaN equals NaN). ConstraintViolation naming the column,
  /// the expression, both values and the first offending row when one does not.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Apply(
      const std::shared_ptr<arrow::RecordBatch>& batch) const;

 private:
  /// One generated column and how to compute it.
  struct Column {
    int index = -1;     ///< position in the table schema
    std::string name;   ///< column name
    std::string sql;    ///< generation expression as stored
    bool supplied = false;
    arrow::compute::Expression expression;  ///< bound to the table schema
  };

  arrow::Result<std::shared_ptr<arrow::Array>> Evaluate(const Column& column,
                                                        const arrow::RecordBatch& batch) const;

  std::shared_ptr<arrow::Schema> schema_;
  std::vector<Column> columns_;
};

}  // namespace deltacpp::internal
