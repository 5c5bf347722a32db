// Skipping many files at once: the simplest conjuncts of a filter checked against a whole batch
// of typed statistics with vectorised comparisons, before the file-by-file reasoning.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "expr/bound_expr.h"

namespace deltacpp::internal {

/// For each row of `stats` (typed statistics, see ChunkStats), true when a top-level conjunct of
/// `predicate` of the form `column op literal` (op one of = < <= > >=, the column an integer or
/// date data column, the literal of the column's type and not NULL) is false for every value in
/// the row's [min, max] — so no row of that file can match. Only rows whose statistics and both
/// bounds are known can be skipped; everything else is false (decided file by file). Returns an
/// empty vector when no conjunct qualifies.
arrow::Result<std::vector<bool>> SkippedByBounds(const BoundExpr& predicate,
                                                 const arrow::StructArray& stats);

}  // namespace deltacpp::internal
