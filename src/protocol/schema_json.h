// Delta schema JSON <-> Arrow schema codec and column mapping helpers (internal view of deltacpp/schema.h).
#pragma once

#include "deltacpp/schema.h"

namespace deltacpp::internal {

// The codec is implemented once, in namespace deltacpp (see deltacpp/schema.h); these using-declarations
// make the same functions available to library code under deltacpp::internal.
using ::deltacpp::ColumnMappingMode;
using ::deltacpp::FieldId;
using ::deltacpp::FieldMetadataString;
using ::deltacpp::kColumnIdKey;
using ::deltacpp::kNestedIdsKey;
using ::deltacpp::kParquetFieldIdKey;
using ::deltacpp::kPhysicalNameKey;
using ::deltacpp::kVariantMetadataKey;
using ::deltacpp::ParseColumnMappingMode;
using ::deltacpp::PhysicalName;
using ::deltacpp::PhysicalSchema;
using ::deltacpp::SchemaFromDeltaJson;
using ::deltacpp::SchemaToDeltaJson;

/// The Arrow type used for Delta `variant`: struct<metadata: binary not null, value: binary not null>.
std::shared_ptr<arrow::DataType> VariantArrowType();

/// True when the field carries the variant marker (kVariantMetadataKey = true).
bool IsVariantField(const arrow::Field& field);

/// Parses one Delta primitive type name (e.g. "long", "decimal(10, 2)", "timestamp_ntz"); nested types and
/// variant are not accepted here. Unknown name -> kUnsupportedFeature; malformed decimal -> kCorruptLog.
arrow::Result<std::shared_ptr<arrow::DataType>> PrimitiveTypeFromDeltaName(std::string_view name);

}  // namespace deltacpp::internal
