// File pruning: deciding from statistics and partition values that no row can match a filter.
#pragma once

#include <arrow/scalar.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "expr/bound_expr.h"
#include "expr/file_stats.h"

namespace deltacpp::internal {

/// A file's partition values keyed by the partition column's PHYSICAL name. A nullptr or
/// invalid scalar is a NULL partition value.
using PartitionValuesView = std::unordered_map<std::string, std::shared_ptr<arrow::Scalar>>;

/// True only when `stats` and `partitions` prove that `predicate` (a bound BOOLEAN expression)
/// is not TRUE for any row of the file, so the file need not be read.
///
/// Each sub-expression is abstracted to the set of values {TRUE, FALSE, NULL} it may take over
/// the file's rows; a file is skipped when TRUE is impossible. Comparisons of a column with a
/// literal use [min, max] and null counts (a partition column is exact: min = max = its value);
/// IN is a disjunction of equalities; AND/OR/NOT combine the sets with SQL three-valued logic,
/// which makes NOT sound over any operand. Timestamp maximums are widened by 999 microseconds
/// because writers truncate them to milliseconds. Floating-point comparisons follow Spark (NaN
/// equals NaN and is above every other value); since Spark records NaN as a column's maximum
/// while Parquet statistics leave NaN out, a NaN bound bounds nothing and a file with a
/// floating-point column is always assumed to possibly hold NaN (unless all its values are
/// NULL): `d > c` never skips on the maximum of `d`. A file with zero records is always skipped.
/// Anything not understood, and any missing statistic, keeps the file.
bool CanSkipFile(const BoundExpr& predicate, const FileStats& stats,
                 const PartitionValuesView& partitions);

/// The dual of CanSkipFile: true only when `stats` and `partitions` prove that `predicate` is
/// TRUE for every row of the file (neither FALSE nor NULL for any), e.g. so that a DELETE can
/// drop the whole file without reading it. Uses the same abstraction: the file qualifies when
/// TRUE is the only outcome left. A file with zero records qualifies; anything not understood,
/// and any missing statistic, leaves the answer false.
bool AllRowsMatch(const BoundExpr& predicate, const FileStats& stats,
                  const PartitionValuesView& partitions);

}  // namespace deltacpp::internal
