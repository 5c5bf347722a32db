// Schema enforcement and evolution for writes: matches input columns to the table's, decides
// the schema to commit (mergeSchema / overwriteSchema), and converts input batches to it.
#pragma once

#include <arrow/api.h>

namespace deltacpp::internal {

/// How input batches map onto the table.
struct SchemaAlignment {
  std::shared_ptr<arrow::Schema> table_schema;  ///< schema after the write (may have grown)
  bool schema_changed = false;                  ///< a metaData action is needed
  /// For each table_schema field: index of the input column feeding it, or -1 (nulls).
  std::vector<int> input_index;
};

/// Aligns `input` with `table`. Input columns match table columns case-insensitively. Types
/// must be equal or safely widened (integers to wider integers or decimals that hold them,
/// float to double, date to timestamp_ntz is NOT implicit). Extra input columns are added when
/// `merge_schema` (nullable, at the end; nested struct fields merged too), else SchemaMismatch
/// naming them. Missing nullable columns read as null; a missing NOT NULL column is
/// ConstraintViolation. Errors name the columns and both types.
arrow::Result<SchemaAlignment> AlignSchemas(const arrow::Schema& table, const arrow::Schema& input,
                                            bool merge_schema);

/// Converts one input batch to `alignment.table_schema` (reorder, cast, fill nulls).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(
    const SchemaAlignment& alignment, const std::shared_ptr<arrow::RecordBatch>& input);

}  // namespace deltacpp::internal
