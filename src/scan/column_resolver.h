// Maps a table's logical columns onto the columns of one Parquet file (plain names, column
// mapping by physical name or by field id) and converts what was read to the logical types.
#pragma once

#include <arrow/api.h>

#include "protocol/schema_json.h"

namespace deltacpp::internal {

/// Index of the top-level file field that holds logical field `logical`, or -1 when the file
/// does not have it (the column then reads as nulls).
int FindFileField(const arrow::Schema& file_schema, const arrow::Field& logical,
                  ColumnMappingMode mode);

/// Converts an array read from a file into the logical field's type: renames nested fields
/// from physical to logical names, fills missing nested fields with nulls, widens types
/// (typeWidening), relabels timestamps (INT96 / unannotated) and casts where needed. A
/// shredded variant is UnsupportedFeature.
arrow::Result<std::shared_ptr<arrow::Array>> ConformToLogical(
    const std::shared_ptr<arrow::Array>& array, const arrow::Field& logical,
    ColumnMappingMode mode);

}  // namespace deltacpp::internal
