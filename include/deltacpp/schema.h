// Conversion between Delta schema JSON (metaData.schemaString) and Arrow schemas, plus column mapping helpers.
#pragma once

#include <arrow/result.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace deltacpp {

/// Arrow field-metadata key marking a field whose Delta type is `variant`. The Arrow type of such a
/// field is `struct<metadata: binary not null, value: binary not null>` and the value is "true".
/// SchemaToDeltaJson writes any struct field carrying this key as `"variant"` and drops the key.
inline constexpr std::string_view kVariantMetadataKey = "delta.variant";

/// Arrow field-metadata key under which Arrow's Parquet reader and writer carry the Parquet field id.
inline constexpr std::string_view kParquetFieldIdKey = "PARQUET:field_id";

/// Delta field-metadata key holding a column's physical name (column mapping).
inline constexpr std::string_view kPhysicalNameKey = "delta.columnMapping.physicalName";

/// Delta field-metadata key holding a column's id (column mapping).
inline constexpr std::string_view kColumnIdKey = "delta.columnMapping.id";

/// Delta field-metadata key holding the ids of array elements / map keys and values below a field.
inline constexpr std::string_view kNestedIdsKey = "delta.columnMapping.nested.ids";

/// Parses a Delta schema JSON string into an Arrow schema.
///
/// Type mapping: byte/short/integer/long -> int8/16/32/64, float/double -> float32/64,
/// decimal(p,s) -> decimal128(p,s) (bare `decimal` is decimal(10,0)), string -> utf8, binary -> binary,
/// boolean -> bool, date -> date32, timestamp -> timestamp(us, "UTC"), timestamp_ntz -> timestamp(us),
/// void -> null, struct -> struct, array -> list<element>, map -> map<key, value>,
/// variant -> struct<metadata, value> marked with kVariantMetadataKey.
/// Each Delta field `metadata` entry becomes an Arrow KeyValueMetadata entry whose value is the compact
/// JSON text of the Delta value (strings keep their quotes: `"col-1"` is stored as `"\"col-1\""`).
/// Errors: malformed JSON or a malformed schema -> kCorruptLog; an unknown type name -> kUnsupportedFeature.
arrow::Result<std::shared_ptr<arrow::Schema>> SchemaFromDeltaJson(std::string_view schema_string);

/// Serializes an Arrow schema as compact Delta schema JSON
/// (`{"type":"struct","fields":[{"name":..,"type":..,"nullable":..,"metadata":{..}}]}`).
/// Field metadata values are written as the JSON text they hold (a value that is not valid JSON is
/// written as a JSON string); the key kParquetFieldIdKey is not written. large_utf8/string_view ->
/// string, large_binary/binary_view/fixed_size_binary -> binary, any timestamp with a zone ->
/// timestamp and without one -> timestamp_ntz, date64 -> date, dictionary -> its value type.
/// Types without a Delta equivalent (unsigned ints, half floats, times, durations, ...) -> kSchemaMismatch.
arrow::Result<std::string> SchemaToDeltaJson(const arrow::Schema& schema);

/// Value of the table property `delta.columnMapping.mode`.
enum class ColumnMappingMode { kNone, kName, kId };

/// Reads `delta.columnMapping.mode` from table properties (absent -> kNone; values compare
/// case-insensitively). An unknown mode -> kUnsupportedFeature.
arrow::Result<ColumnMappingMode> ParseColumnMappingMode(
    const std::map<std::string, std::string>& configuration);

/// A string-valued Delta field-metadata entry with its JSON quoting and escapes removed. A stored value
/// that is not JSON at all is returned verbatim; a JSON value that is not a string gives nullopt.
std::optional<std::string> FieldMetadataString(const arrow::Field& field, std::string_view key);

/// The field's physical name (`delta.columnMapping.physicalName`), or its logical name if it has none.
std::string PhysicalName(const arrow::Field& field);

/// The field's column mapping id (`delta.columnMapping.id`), if present and a valid int32.
std::optional<int32_t> FieldId(const arrow::Field& field);

/// The schema used for the Parquet data files: same shape as `logical`, every field (nested ones
/// included) renamed to its physical name. With kId every field that has a Delta id (or a nested id for
/// array elements and map keys/values) also gets kParquetFieldIdKey set to it. kNone returns `logical`
/// unchanged.
std::shared_ptr<arrow::Schema> PhysicalSchema(const arrow::Schema& logical, ColumnMappingMode mode);

}  // namespace deltacpp

namespace deltacpp {
/// Parses column definitions as written in CREATE TABLE: `id long NOT NULL, price
/// DECIMAL(10,2), tags ARRAY<STRING>, day DATE GENERATED ALWAYS AS (CAST(ts AS DATE)),
/// n BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 1 INCREMENT BY 1)`. Delta
/// and SQL type names, case-insensitive. InvalidExpression naming the position on errors.
arrow::Result<std::shared_ptr<arrow::Schema>> SchemaFromDdl(std::string_view ddl);

/// The Delta name of `type` as schemas, type changes and messages spell it: `long`,
/// `decimal(10,2)`, `timestamp_ntz`, `array<string>`, `map<string,long>`,
/// `struct<a:long NOT NULL,b:string>`. Types without a Delta name are spelled as Arrow spells
/// them.
std::string DeltaTypeName(const arrow::DataType& type);
}  // namespace deltacpp
