// Whether the data written under one version's metadata can be read with a change data feed's
// read schema (delta-spark's batch CDF checks: no column-mapping drop or rename, no partitioning
// change, only added columns, same types, no nullability tightening).
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/schema_json.h"

namespace deltacpp::internal {

/// The parts of a metaData action the check compares.
struct SchemaVersion {
  std::shared_ptr<arrow::Schema> schema;  ///< logical schema with Delta field metadata
  ColumnMappingMode mode = ColumnMappingMode::kNone;
  std::vector<std::string> partition_columns;
  int64_t version = 0;
};

/// True when rows written under `data` can be served in the schema `read`: the column mapping
/// layout is unchanged between the older and the newer of the two (no column dropped or
/// renamed, no change of partition columns, no column mapping turned off), and the older
/// schema's columns are all in the newer one with the same names and types and nullability
/// that does not tighten towards the read schema.
bool IsChangeDataReadCompatible(const SchemaVersion& data, const SchemaVersion& read);

}  // namespace deltacpp::internal
