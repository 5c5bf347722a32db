// Type-checked expression tree produced by binding a syntax tree to a table schema.
#pragma once

#include <arrow/scalar.h>
#include <arrow/type.h>

#include <memory>
#include <string>
#include <vector>

#include "expr/ast.h"

namespace deltacpp::internal {

/// A resolved column: where it is in the logical schema, in the data files, and its type.
struct BoundColumn {
  /// Exact logical field names from the top-level column down to the referenced field.
  std::vector<std::string> logical_path;
  /// Physical (column-mapping) name of each field along the same path.
  std::vector<std::string> physical_path;
  /// Arrow type of the referenced field.
  std::shared_ptr<arrow::DataType> type;
  /// Whether the referenced field (or any struct above it) is nullable.
  bool nullable = true;

  /// Dot-joined logical path, e.g. "a.b".
  std::string LogicalName() const;
  /// Dot-joined physical path; the key of FileStats::columns.
  std::string PhysicalName() const;
};

/// Node kinds of a bound tree. BETWEEN and NOT IN are rewritten (x >= lo AND x <= hi,
/// NOT (x IN ...)), and implicit conversions appear as kCast nodes.
enum class BoundKind {
  kLiteral,     ///< literal (scalar of the node's type)
  kColumn,      ///< column
  kCast,        ///< children[0] converted to type
  kComparison,  ///< children[0] compare_op children[1], operands of one type
  kAnd,         ///< children[0] AND children[1]
  kOr,          ///< children[0] OR children[1]
  kNot,         ///< NOT children[0]
  kIsNull,      ///< children[0] IS NULL
  kIsNotNull,   ///< children[0] IS NOT NULL
  kIn,          ///< children[0] IN (children[1..]), all of one type
  kArithmetic,  ///< children[0] arith_op children[1]
  kNegate,      ///< -children[0]
  kFunction,    ///< function(children...), function is the lower-case SQL name
  kCase,        ///< WHEN children[0] THEN children[1] ... ELSE children.back(): the first
                ///< TRUE condition picks its value (NULL conditions count as not TRUE)
};

/// A node of a bound expression. Every node has a result type; predicates are boolean.
struct BoundExpr {
  BoundKind kind = BoundKind::kLiteral;
  /// Result type of this node.
  std::shared_ptr<arrow::DataType> type;
  /// Operands (see BoundKind for their meaning).
  std::vector<BoundExpr> children;
  /// kLiteral: the value (type equals `type`; a SQL NULL is an invalid scalar).
  std::shared_ptr<arrow::Scalar> literal;
  /// kColumn: the resolved column.
  BoundColumn column;
  /// kComparison: the operator.
  CompareOp compare_op = CompareOp::kEq;
  /// kArithmetic: the operator.
  ArithOp arith_op = ArithOp::kAdd;
  /// kFunction: lower-case function name.
  std::string function;
  /// kCast: written by the user as CAST(x AS t) (Spark's cast rules), not inserted by binding.
  bool explicit_cast = false;

  /// SQL-like text, with implicit conversions shown as CAST(x AS TYPE).
  std::string ToString() const;
};

/// Every distinct column the expression reads, in first-use order.
std::vector<BoundColumn> ReferencedColumns(const BoundExpr& expr);

}  // namespace deltacpp::internal
