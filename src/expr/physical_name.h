// Physical (column-mapping) names of Arrow schema fields.
#pragma once

#include <arrow/type.h>

#include <string>

namespace deltacpp::internal {

/// Arrow field metadata key holding a column's physical name when column mapping is on. Its
/// value is a JSON string literal, quotes included (e.g. "\"col-5f3a\"").
inline constexpr char kPhysicalNameMetadataKey[] = "delta.columnMapping.physicalName";

/// The name a field has in data files and statistics: the decoded metadata value when present
/// and non-empty, else the field's own (logical) name.
std::string PhysicalFieldName(const arrow::Field& field);

}  // namespace deltacpp::internal
