// Schema enforcement and evolution for writes: matches input columns to the table's, decides
// the schema to commit (mergeSchema / overwriteSchema), and converts input batches to it.
#pragma once

#include <arrow/api.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// How input batches map onto the table.
struct SchemaAlignment {
  std::shared_ptr<arrow::Schema> table_schema;  ///< schema after the write (may have grown)
  bool schema_changed = false;                  ///< a metaData action is needed
  /// For each table_schema field: index of the input column feeding it, or -1 (nulls).
  std::vector<int> input_index;
  /// Columns (dotted paths; `element`, `key`, `value` inside arrays and maps) whose type the
  /// write widened; non-empty means the table needs the typeWidening feature.
  std::vector<std::string> widened_columns;
};

/// Aligns `input` with `table`. Input columns match table columns case-insensitively. Types
/// must be equal or safely widened (integers to wider integers or decimals that hold them,
/// float to double, date to timestamp_ntz is NOT implicit). Extra input columns are added when
/// `merge_schema` (nullable, at the end; nested struct fields merged too), else SchemaMismatch
/// naming them. Missing nullable columns read as null; a missing NOT NULL column is
/// ConstraintViolation. Errors name the columns and both types.
///
/// With `merge_schema` and `type_widening` (the table property `delta.enableTypeWidening`), an
/// input column of a wider type changes the table column's type when Delta allows the change:
/// byte->short->int->long, float->double, byte/short/int->double, date->timestamp_ntz,
/// decimal(p,s)->decimal(p+k1,s+k2) with k1>=k2>=0, byte/short/int->decimal(10+k1,k2),
/// long->decimal(20+k1,k2); also inside structs, arrays and maps. Each change is appended to
/// the `delta.typeChanges` field metadata (a JSON array of {fromType, toType, fieldPath for
/// array elements and map keys/values}) of the nearest struct field. Any other type difference
/// is SchemaMismatch naming the column and both types; a `delta.typeChanges` value that is not
/// a JSON array is CorruptLog.
arrow::Result<SchemaAlignment> AlignSchemas(const arrow::Schema& table, const arrow::Schema& input,
                                            bool merge_schema, bool type_widening = false);

/// The protocol to commit with a write that widened column types: `current` raised to support
/// `typeWidening` (table features, reader version 3), or nullopt when `current` already
/// supports `typeWidening` or `typeWidening-preview`.
std::optional<Protocol> ProtocolForTypeWidening(const Protocol& current);

/// Converts one input batch to `alignment.table_schema` (reorder, cast, fill nulls).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(
    const SchemaAlignment& alignment, const std::shared_ptr<arrow::RecordBatch>& input);

}  // namespace deltacpp::internal
