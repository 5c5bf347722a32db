// MERGE's expressions: columns named through the target and source aliases, bound over rows
// that pair a target row with a source row.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

#include "expr/ast.h"

namespace deltacpp::internal {

/// The two sides of a merge.
struct MergeSides {
  std::string target_alias;
  std::string source_alias;
  std::shared_ptr<arrow::Schema> target;  ///< the table's logical schema
  std::shared_ptr<arrow::Schema> source;
  /// `{<target alias>: struct<target columns>, <source alias>: struct<source columns>}`: the
  /// rows merge expressions are bound to and evaluated on.
  std::shared_ptr<arrow::Schema> pair;
  /// The target's columns followed by the fields of `pair`: SET targets resolve among the
  /// former, values among the latter.
  std::shared_ptr<arrow::Schema> assign;

  /// Checks the aliases (distinct, not a target column name) and makes the schemas.
  static arrow::Result<MergeSides> Make(std::string target_alias, std::string source_alias,
                                        std::shared_ptr<arrow::Schema> target,
                                        std::shared_ptr<arrow::Schema> source);
};

/// Which side a merge expression may name.
enum class MergeScope { kBoth, kTargetOnly, kSourceOnly };

/// `expr` with every column named through its alias: `alias.col` stays (with the alias as
/// MergeSides spells it); a bare `col` gets the alias of the one side that has it. `what`
/// names the expression in errors. InvalidExpression for a column neither side has, one both
/// have (ambiguous), or one of a side `scope` excludes.
arrow::Result<ExprPtr> QualifyColumns(const ExprPtr& expr, const MergeSides& sides,
                                      MergeScope scope, const std::string& what);

/// A qualified expression with the alias taken off every column (it must name only target
/// columns): the same condition over the table's own columns.
arrow::Result<ExprPtr> StripAlias(const ExprPtr& expr);

/// Whether a qualified expression names target columns, source columns.
void SidesNamed(const Expr& expr, const MergeSides& sides, bool* target, bool* source);

/// The operands of the top-level ANDs of `expr` (itself when it is not an AND).
std::vector<ExprPtr> SplitConjuncts(const ExprPtr& expr);

/// Rows of `sides.pair`: `target` and `source` (rows of the two schemas, same length) as the
/// two struct columns; a null pointer gives that side all NULL, for `num_rows` rows.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> PairRows(
    const MergeSides& sides, const std::shared_ptr<arrow::RecordBatch>& target,
    const std::shared_ptr<arrow::RecordBatch>& source, int64_t num_rows);

}  // namespace deltacpp::internal
