// Immutable syntax tree of the SQL expression language used for filters and predicates.
#pragma once

#include <arrow/scalar.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace deltacpp::internal {

class Expr;
/// Shared handle to an immutable expression node.
using ExprPtr = std::shared_ptr<const Expr>;

/// The node kinds of the syntax tree.
enum class ExprKind {
  kLiteral,     ///< a constant; see Expr::literal()
  kColumn,      ///< a (possibly nested) column reference; see Expr::column_path()
  kComparison,  ///< children[0] op children[1]
  kAnd,         ///< children[0] AND children[1]
  kOr,          ///< children[0] OR children[1]
  kNot,         ///< NOT children[0]
  kIsNull,      ///< children[0] IS [NOT] NULL
  kIn,          ///< children[0] [NOT] IN (children[1..])
  kBetween,     ///< children[0] [NOT] BETWEEN children[1] AND children[2]
  kArithmetic,  ///< children[0] op children[1]
  kNegate,      ///< -children[0]
  kFunction,    ///< name(children...)
};

/// Comparison operators. kNullSafeEq is `<=>`: true when both sides are NULL, never NULL itself.
enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe, kNullSafeEq };

/// Binary arithmetic operators.
enum class ArithOp { kAdd, kSub, kMul, kDiv, kMod };

/// SQL spelling of a comparison operator ("=", "!=", "<", ...).
const char* CompareOpSymbol(CompareOp op);
/// SQL spelling of an arithmetic operator.
const char* ArithOpSymbol(ArithOp op);
/// The operator that gives the same result with the operands swapped (a < b  <=>  b > a).
CompareOp FlipCompareOp(CompareOp op);

/// An immutable expression node. Build nodes with the static Make* functions.
///
/// Literals hold an Arrow scalar whose type is the literal's SQL type: null -> null(),
/// BOOLEAN -> boolean(), TINYINT/SMALLINT/INT/BIGINT -> int8/16/32/64, DECIMAL(p,s) ->
/// decimal128(p,s), FLOAT/DOUBLE -> float32/float64, STRING -> utf8(), BINARY -> binary(),
/// DATE -> date32(), TIMESTAMP -> timestamp(us, "UTC"), TIMESTAMP_NTZ -> timestamp(us).
class Expr {
 public:
  /// A literal constant.
  static ExprPtr MakeLiteral(std::shared_ptr<arrow::Scalar> value, size_t position = 0);
  /// A column reference: one entry per name part (`a.b` -> {"a", "b"}).
  static ExprPtr MakeColumn(std::vector<std::string> path, size_t position = 0);
  /// `left op right`.
  static ExprPtr MakeComparison(CompareOp op, ExprPtr left, ExprPtr right, size_t position = 0);
  /// `left AND right`.
  static ExprPtr MakeAnd(ExprPtr left, ExprPtr right, size_t position = 0);
  /// `left OR right`.
  static ExprPtr MakeOr(ExprPtr left, ExprPtr right, size_t position = 0);
  /// `NOT operand`.
  static ExprPtr MakeNot(ExprPtr operand, size_t position = 0);
  /// `operand IS NULL`, or `operand IS NOT NULL` when negated.
  static ExprPtr MakeIsNull(ExprPtr operand, bool negated, size_t position = 0);
  /// `value [NOT] IN (list...)`; list must not be empty.
  static ExprPtr MakeIn(ExprPtr value, std::vector<ExprPtr> list, bool negated,
                        size_t position = 0);
  /// `value [NOT] BETWEEN lower AND upper`.
  static ExprPtr MakeBetween(ExprPtr value, ExprPtr lower, ExprPtr upper, bool negated,
                             size_t position = 0);
  /// `left op right` for + - * /.
  static ExprPtr MakeArithmetic(ArithOp op, ExprPtr left, ExprPtr right, size_t position = 0);
  /// `-operand`.
  static ExprPtr MakeNegate(ExprPtr operand, size_t position = 0);
  /// `name(args...)`; the name is kept as written. The parser also builds function nodes for
  /// `x LIKE p [ESCAPE 'e']` (like(x, p[, 'e'])), `CASE ... END` (nested if(c, a, b); a simple
  /// CASE x WHEN v compares x = v) and `CAST(x AS t)` (cast(x, 't'), printed back as CAST).
  static ExprPtr MakeFunction(std::string name, std::vector<ExprPtr> args, size_t position = 0);

  /// The node kind.
  ExprKind kind() const { return kind_; }
  /// 0-based offset of the node's first character in the parsed text (0 when built by hand).
  size_t position() const { return position_; }
  /// Operands, in source order.
  const std::vector<ExprPtr>& children() const { return children_; }
  /// The constant of a kLiteral node (never null; a SQL NULL is an invalid scalar).
  const std::shared_ptr<arrow::Scalar>& literal() const { return literal_; }
  /// The name parts of a kColumn node.
  const std::vector<std::string>& column_path() const { return path_; }
  /// The operator of a kComparison node.
  CompareOp compare_op() const { return compare_op_; }
  /// The operator of a kArithmetic node.
  ArithOp arith_op() const { return arith_op_; }
  /// True for IS NOT NULL, NOT IN and NOT BETWEEN.
  bool negated() const { return negated_; }
  /// The name of a kFunction node as written.
  const std::string& function_name() const { return name_; }

  /// SQL text that parses back to an equal tree; used in error messages.
  std::string ToString() const;
  /// Structural equality (positions are ignored; literals compare by type and value).
  bool Equals(const Expr& other) const;

 private:
  explicit Expr(ExprKind kind, size_t position) : kind_(kind), position_(position) {}

  ExprKind kind_;
  size_t position_;
  std::vector<ExprPtr> children_;
  std::shared_ptr<arrow::Scalar> literal_;
  std::vector<std::string> path_;
  CompareOp compare_op_ = CompareOp::kEq;
  ArithOp arith_op_ = ArithOp::kAdd;
  bool negated_ = false;
  std::string name_;
};

/// SQL text of a literal value, e.g. `'it''s'`, `DATE '2021-01-01'`, `5L`, `NULL`.
std::string LiteralToSql(const arrow::Scalar& value);

/// A column name part as SQL text, backquoted when it is not a plain identifier or is a keyword.
std::string QuoteIdentifier(const std::string& name);

/// True for the words that cannot be used as bare column names (AND, OR, NOT, IS, IN, BETWEEN,
/// NULL, TRUE, FALSE), compared case-insensitively.
bool IsReservedWord(std::string_view word);

}  // namespace deltacpp::internal
