#include "protocol/schema_json.h"

#include <arrow/api.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "deltacpp/error.h"
#include "deltacpp/table_config.h"

namespace deltacpp {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

arrow::Status Corrupt(std::string_view path, std::string_view what) {
  std::string msg = "invalid Delta schema";
  if (!path.empty()) {
    msg += " at field '";
    msg += path;
    msg += "'";
  }
  msg += ": ";
  msg += what;
  return DeltaError(DeltaErrorCode::kCorruptLog, std::move(msg));
}

std::string JoinPath(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  std::string out(parent);
  out += '.';
  out += name;
  return out;
}

// Parses the digits of a decimal's "(p,s)" suffix; `rest` is the text after "decimal".
arrow::Result<std::shared_ptr<arrow::DataType>> ParseDecimal(std::string_view full, std::string_view rest) {
  rest = Trim(rest);
  int precision = 10;
  int scale = 0;
  if (!rest.empty()) {
    if (rest.front() != '(' || rest.back() != ')') {
      return Corrupt("", "malformed decimal type '" + std::string(full) + "'");
    }
    rest = rest.substr(1, rest.size() - 2);
    auto comma = rest.find(',');
    if (comma == std::string_view::npos) {
      return Corrupt("", "malformed decimal type '" + std::string(full) + "'");
    }
    auto parse_int = [](std::string_view s, int* out) {
      s = Trim(s);
      if (s.empty()) return false;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      return ec == std::errc() && ptr == s.data() + s.size();
    };
    if (!parse_int(rest.substr(0, comma), &precision) || !parse_int(rest.substr(comma + 1), &scale)) {
      return Corrupt("", "malformed decimal type '" + std::string(full) + "'");
    }
  }
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
    return Corrupt("", "decimal precision/scale out of range in '" + std::string(full) + "'");
  }
  return arrow::decimal128(precision, scale);
}

struct ParsedType {
  std::shared_ptr<arrow::DataType> type;
  bool variant = false;
};

arrow::Result<std::shared_ptr<arrow::Field>> ParseField(element e, std::string_view parent_path);

std::shared_ptr<arrow::KeyValueMetadata> VariantMarker() {
  return arrow::KeyValueMetadata::Make({std::string(kVariantMetadataKey)}, {"true"});
}

std::shared_ptr<arrow::Field> MakeChild(std::string name, const ParsedType& t, bool nullable) {
  return arrow::field(std::move(name), t.type, nullable, t.variant ? VariantMarker() : nullptr);
}

arrow::Result<bool> OptionalBool(const object& obj, std::string_view key, bool default_value,
                                 std::string_view path) {
  element v;
  if (obj.at_key(key).get(v) != simdjson::SUCCESS) return default_value;
  bool b;
  if (v.get_bool().get(b) != simdjson::SUCCESS) {
    return Corrupt(path, "'" + std::string(key) + "' is not a boolean");
  }
  return b;
}

arrow::Result<ParsedType> ParseType(element e, std::string_view path) {
  std::string_view name;
  if (e.get_string().get(name) == simdjson::SUCCESS) {
    if (Trim(name) == "variant") return ParsedType{internal::VariantArrowType(), true};
    auto result = internal::PrimitiveTypeFromDeltaName(name);
    if (!result.ok()) {
      return result.status().WithMessage(result.status().message() + " (field '" + std::string(path) + "')");
    }
    return ParsedType{*result, false};
  }
  object obj;
  if (e.get_object().get(obj) != simdjson::SUCCESS) {
    return Corrupt(path, "a type must be a string or an object");
  }
  std::string_view kind;
  if (obj["type"].get_string().get(kind) != simdjson::SUCCESS) {
    return Corrupt(path, "nested type without a string 'type'");
  }
  if (kind == "struct") {
    simdjson::dom::array fields;
    if (obj["fields"].get_array().get(fields) != simdjson::SUCCESS) {
      return Corrupt(path, "struct without a 'fields' array");
    }
    arrow::FieldVector children;
    std::unordered_set<std::string> lower_names;
    for (element f : fields) {
      ARROW_ASSIGN_OR_RAISE(auto child, ParseField(f, path));
      // Column names are case-insensitive in Delta (as in Spark): two that differ only in case
      // would make every lookup by name ambiguous.
      std::string lower = child->name();
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!lower_names.insert(std::move(lower)).second) {
        return Corrupt(path, "duplicate column name '" + child->name() +
                                 "' (column names are compared case-insensitively)");
      }
      children.push_back(std::move(child));
    }
    return ParsedType{arrow::struct_(std::move(children)), false};
  }
  if (kind == "array") {
    element elem;
    if (obj["elementType"].get(elem) != simdjson::SUCCESS) {
      return Corrupt(path, "array without 'elementType'");
    }
    ARROW_ASSIGN_OR_RAISE(auto elem_type, ParseType(elem, JoinPath(path, "element")));
    ARROW_ASSIGN_OR_RAISE(bool contains_null, OptionalBool(obj, "containsNull", true, path));
    return ParsedType{arrow::list(MakeChild("element", elem_type, contains_null)), false};
  }
  if (kind == "map") {
    element key;
    element value;
    if (obj["keyType"].get(key) != simdjson::SUCCESS || obj["valueType"].get(value) != simdjson::SUCCESS) {
      return Corrupt(path, "map without 'keyType' or 'valueType'");
    }
    ARROW_ASSIGN_OR_RAISE(auto key_type, ParseType(key, JoinPath(path, "key")));
    ARROW_ASSIGN_OR_RAISE(auto value_type, ParseType(value, JoinPath(path, "value")));
    ARROW_ASSIGN_OR_RAISE(bool value_nullable, OptionalBool(obj, "valueContainsNull", true, path));
    return ParsedType{std::make_shared<arrow::MapType>(MakeChild("key", key_type, false),
                                                       MakeChild("value", value_type, value_nullable)),
                      false};
  }
  if (kind == "variant") return ParsedType{internal::VariantArrowType(), true};
  // Tolerate a primitive written in object form, e.g. {"type":"long"}.
  return ParseType(obj["type"].value_unsafe(), path);
}

arrow::Result<std::shared_ptr<arrow::Field>> ParseField(element e, std::string_view parent_path) {
  object obj;
  if (e.get_object().get(obj) != simdjson::SUCCESS) {
    return Corrupt(parent_path, "a struct field must be an object");
  }
  std::string_view name;
  if (obj["name"].get_string().get(name) != simdjson::SUCCESS) {
    return Corrupt(parent_path, "struct field without a string 'name'");
  }
  std::string path = JoinPath(parent_path, name);
  element type_elem;
  if (obj["type"].get(type_elem) != simdjson::SUCCESS) return Corrupt(path, "field without 'type'");
  ARROW_ASSIGN_OR_RAISE(ParsedType type, ParseType(type_elem, path));
  ARROW_ASSIGN_OR_RAISE(bool nullable, OptionalBool(obj, "nullable", true, path));

  std::vector<std::string> keys;
  std::vector<std::string> values;
  element md_elem;
  if (obj["metadata"].get(md_elem) == simdjson::SUCCESS && !md_elem.is_null()) {
    object md;
    if (md_elem.get_object().get(md) != simdjson::SUCCESS) return Corrupt(path, "'metadata' is not an object");
    for (auto kv : md) {
      keys.emplace_back(kv.key);
      values.push_back(simdjson::minify(kv.value));
    }
  }
  if (type.variant && std::find(keys.begin(), keys.end(), kVariantMetadataKey) == keys.end()) {
    keys.emplace_back(kVariantMetadataKey);
    values.emplace_back("true");
  }
  std::shared_ptr<arrow::KeyValueMetadata> metadata;
  if (!keys.empty()) metadata = arrow::KeyValueMetadata::Make(std::move(keys), std::move(values));
  return arrow::field(std::string(name), type.type, nullable, std::move(metadata));
}

// ---- Writing ---------------------------------------------------------------------------------------

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

arrow::Status WriteFieldType(JsonWriter& w, const arrow::Field& field, const std::string& path);

arrow::Status NoEquivalent(const std::string& path, const arrow::DataType& type) {
  return DeltaError(DeltaErrorCode::kSchemaMismatch,
                    "field '" + path + "' has Arrow type " + type.ToString() + " which has no Delta equivalent");
}

void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

arrow::Status WriteMetadataValue(JsonWriter& w, const std::string& raw) {
  std::string_view trimmed = Trim(raw);
  rapidjson::Document doc;
  doc.Parse(trimmed.data(), trimmed.size());
  if (doc.HasParseError() || trimmed.empty()) {
    WriteString(w, raw);
  } else {
    w.RawValue(trimmed.data(), trimmed.size(), doc.GetType());
  }
  return arrow::Status::OK();
}

arrow::Status WriteStructFields(JsonWriter& w, const arrow::DataType& struct_type, const std::string& path) {
  w.StartObject();
  w.Key("type");
  w.String("struct");
  w.Key("fields");
  w.StartArray();
  for (const auto& child : struct_type.fields()) {
    std::string child_path = JoinPath(path, child->name());
    w.StartObject();
    w.Key("name");
    WriteString(w, child->name());
    w.Key("type");
    ARROW_RETURN_NOT_OK(WriteFieldType(w, *child, child_path));
    w.Key("nullable");
    w.Bool(child->nullable());
    w.Key("metadata");
    w.StartObject();
    const bool variant = internal::IsVariantField(*child);
    if (const auto& md = child->metadata()) {
      for (int64_t i = 0; i < md->size(); ++i) {
        const std::string& key = md->key(i);
        if (key == kParquetFieldIdKey) continue;
        if (variant && key == kVariantMetadataKey) continue;
        WriteString(w, key);
        ARROW_RETURN_NOT_OK(WriteMetadataValue(w, md->value(i)));
      }
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return arrow::Status::OK();
}

arrow::Status WriteType(JsonWriter& w, const std::shared_ptr<arrow::DataType>& type, const std::string& path) {
  using arrow::Type;
  switch (type->id()) {
    case Type::INT8: w.String("byte"); return arrow::Status::OK();
    case Type::INT16: w.String("short"); return arrow::Status::OK();
    case Type::INT32: w.String("integer"); return arrow::Status::OK();
    case Type::INT64: w.String("long"); return arrow::Status::OK();
    case Type::FLOAT: w.String("float"); return arrow::Status::OK();
    case Type::DOUBLE: w.String("double"); return arrow::Status::OK();
    case Type::BOOL: w.String("boolean"); return arrow::Status::OK();
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW: w.String("string"); return arrow::Status::OK();
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::BINARY_VIEW:
    case Type::FIXED_SIZE_BINARY: w.String("binary"); return arrow::Status::OK();
    case Type::DATE32:
    case Type::DATE64: w.String("date"); return arrow::Status::OK();
    case Type::NA: w.String("void"); return arrow::Status::OK();
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(*type);
      w.String(ts.timezone().empty() ? "timestamp_ntz" : "timestamp");
      return arrow::Status::OK();
    }
    case Type::DECIMAL32:
    case Type::DECIMAL64:
    case Type::DECIMAL128:
    case Type::DECIMAL256: {
      const auto& dec = static_cast<const arrow::DecimalType&>(*type);
      if (dec.precision() > 38 || dec.scale() < 0) return NoEquivalent(path, *type);
      WriteString(w, "decimal(" + std::to_string(dec.precision()) + "," + std::to_string(dec.scale()) + ")");
      return arrow::Status::OK();
    }
    case Type::STRUCT: return WriteStructFields(w, *type, path);
    case Type::LIST:
    case Type::LARGE_LIST:
    case Type::FIXED_SIZE_LIST:
    case Type::LIST_VIEW:
    case Type::LARGE_LIST_VIEW: {
      const auto& elem = type->field(0);
      w.StartObject();
      w.Key("type");
      w.String("array");
      w.Key("elementType");
      ARROW_RETURN_NOT_OK(WriteFieldType(w, *elem, JoinPath(path, "element")));
      w.Key("containsNull");
      w.Bool(elem->nullable());
      w.EndObject();
      return arrow::Status::OK();
    }
    case Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      w.StartObject();
      w.Key("type");
      w.String("map");
      w.Key("keyType");
      ARROW_RETURN_NOT_OK(WriteFieldType(w, *map.key_field(), JoinPath(path, "key")));
      w.Key("valueType");
      ARROW_RETURN_NOT_OK(WriteFieldType(w, *map.item_field(), JoinPath(path, "value")));
      w.Key("valueContainsNull");
      w.Bool(map.item_field()->nullable());
      w.EndObject();
      return arrow::Status::OK();
    }
    case Type::DICTIONARY:
      return WriteType(w, static_cast<const arrow::DictionaryType&>(*type).value_type(), path);
    case Type::EXTENSION:
      return WriteType(w, static_cast<const arrow::ExtensionType&>(*type).storage_type(), path);
    default:
      return NoEquivalent(path, *type);
  }
}

arrow::Status WriteFieldType(JsonWriter& w, const arrow::Field& field, const std::string& path) {
  if (internal::IsVariantField(field) && field.type()->id() == arrow::Type::STRUCT) {
    w.String("variant");
    return arrow::Status::OK();
  }
  return WriteType(w, field.type(), path);
}

// ---- Column mapping ------------------------------------------------------------------------------

std::optional<std::string> RawMetadata(const arrow::Field& field, std::string_view key) {
  const auto& md = field.metadata();
  if (!md) return std::nullopt;
  int i = md->FindKey(key);
  if (i < 0) return std::nullopt;
  return md->value(i);
}

std::optional<int32_t> ParseInt32(std::string_view s) {
  s = Trim(s);
  int32_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::shared_ptr<arrow::Field> WithFieldId(const std::shared_ptr<arrow::Field>& f, std::optional<int32_t> id) {
  if (!id) return f;
  auto md = f->metadata() ? f->metadata()->Copy() : std::make_shared<arrow::KeyValueMetadata>();
  (void)md->Set(std::string(kParquetFieldIdKey), std::to_string(*id));
  return f->WithMetadata(md);
}

struct NestedIds {
  rapidjson::Document doc;
  bool valid = false;
  std::optional<int32_t> Lookup(const std::string& path) const {
    if (!valid) return std::nullopt;
    auto it = doc.FindMember(path.c_str());
    if (it == doc.MemberEnd() || !it->value.IsInt()) return std::nullopt;
    return it->value.GetInt();
  }
};

std::shared_ptr<arrow::Field> PhysicalStructField(const std::shared_ptr<arrow::Field>& f, ColumnMappingMode mode);

// Maps the type of a field; `path` is the physical path below the nearest struct field, which owns `ids`.
std::shared_ptr<arrow::DataType> PhysicalType(const std::shared_ptr<arrow::DataType>& type, ColumnMappingMode mode,
                                              const std::string& path, const NestedIds& ids);

std::shared_ptr<arrow::Field> PhysicalInnerField(const std::shared_ptr<arrow::Field>& f, ColumnMappingMode mode,
                                                 const std::string& path, const NestedIds& ids) {
  auto out = f->WithType(PhysicalType(f->type(), mode, path, ids));
  if (mode == ColumnMappingMode::kId) out = WithFieldId(out, ids.Lookup(path));
  return out;
}

std::shared_ptr<arrow::DataType> PhysicalType(const std::shared_ptr<arrow::DataType>& type, ColumnMappingMode mode,
                                              const std::string& path, const NestedIds& ids) {
  using arrow::Type;
  switch (type->id()) {
    case Type::STRUCT: {
      arrow::FieldVector children;
      for (const auto& child : type->fields()) children.push_back(PhysicalStructField(child, mode));
      return arrow::struct_(std::move(children));
    }
    case Type::LIST: {
      const auto& elem = type->field(0);
      return arrow::list(PhysicalInnerField(elem, mode, path + "." + elem->name(), ids));
    }
    case Type::LARGE_LIST: {
      const auto& elem = type->field(0);
      return arrow::large_list(PhysicalInnerField(elem, mode, path + "." + elem->name(), ids));
    }
    case Type::FIXED_SIZE_LIST: {
      const auto& list = static_cast<const arrow::FixedSizeListType&>(*type);
      return arrow::fixed_size_list(PhysicalInnerField(list.value_field(), mode, path + ".element", ids),
                                    list.list_size());
    }
    case Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      auto key = PhysicalInnerField(map.key_field(), mode, path + ".key", ids);
      auto item = PhysicalInnerField(map.item_field(), mode, path + ".value", ids);
      auto entries = map.value_field()->WithType(arrow::struct_({key, item}));
      auto result = arrow::MapType::Make(entries, map.keys_sorted());
      return result.ok() ? *result : type;
    }
    default:
      return type;
  }
}

std::shared_ptr<arrow::Field> PhysicalStructField(const std::shared_ptr<arrow::Field>& f, ColumnMappingMode mode) {
  std::string physical = PhysicalName(*f);
  NestedIds ids;
  if (auto raw = RawMetadata(*f, kNestedIdsKey)) {
    ids.doc.Parse(raw->c_str());
    ids.valid = !ids.doc.HasParseError() && ids.doc.IsObject();
  }
  auto out = f->WithName(physical)->WithType(PhysicalType(f->type(), mode, physical, ids));
  if (mode == ColumnMappingMode::kId) out = WithFieldId(out, FieldId(*f));
  return out;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Schema>> SchemaFromDeltaJson(std::string_view schema_string) {
  simdjson::dom::parser parser;
  element root;
  if (auto err = parser.parse(schema_string.data(), schema_string.size()).get(root); err != simdjson::SUCCESS) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      std::string("schema string is not valid JSON: ") + simdjson::error_message(err));
  }
  object obj;
  std::string_view kind;
  if (root.get_object().get(obj) != simdjson::SUCCESS || obj["type"].get_string().get(kind) != simdjson::SUCCESS ||
      kind != "struct") {
    return Corrupt("", "the top level must be a struct");
  }
  ARROW_ASSIGN_OR_RAISE(ParsedType top, ParseType(root, ""));
  return arrow::schema(top.type->fields());
}

arrow::Result<std::string> SchemaToDeltaJson(const arrow::Schema& schema) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  auto as_struct = arrow::struct_(schema.fields());
  ARROW_RETURN_NOT_OK(WriteStructFields(writer, *as_struct, ""));
  return std::string(buffer.GetString(), buffer.GetSize());
}

arrow::Result<ColumnMappingMode> ParseColumnMappingMode(const std::map<std::string, std::string>& configuration) {
  const auto config = TableConfig::Parse(configuration);
  if (config.invalid.count("delta.columnMapping.mode")) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      "unsupported column mapping mode '" +
                          configuration.at("delta.columnMapping.mode") +
                          "' in delta.columnMapping.mode");
  }
  return config.column_mapping_mode;
}

std::optional<std::string> FieldMetadataString(const arrow::Field& field, std::string_view key) {
  auto raw = RawMetadata(field, key);
  if (!raw) return std::nullopt;
  std::string_view trimmed = Trim(*raw);
  rapidjson::Document doc;
  doc.Parse(trimmed.data(), trimmed.size());
  if (doc.HasParseError() || trimmed.empty()) return *raw;
  if (!doc.IsString()) return std::nullopt;
  return std::string(doc.GetString(), doc.GetStringLength());
}

std::string PhysicalName(const arrow::Field& field) {
  auto physical = FieldMetadataString(field, kPhysicalNameKey);
  if (physical && !physical->empty()) return *physical;
  return field.name();
}

std::optional<int32_t> FieldId(const arrow::Field& field) {
  auto raw = RawMetadata(field, kColumnIdKey);
  if (!raw) return std::nullopt;
  if (auto id = ParseInt32(*raw)) return id;
  // Tolerate an id stored as a JSON string ("\"5\"").
  if (auto s = FieldMetadataString(field, kColumnIdKey)) return ParseInt32(*s);
  return std::nullopt;
}

std::shared_ptr<arrow::Schema> PhysicalSchema(const arrow::Schema& logical, ColumnMappingMode mode) {
  if (mode == ColumnMappingMode::kNone) {
    return std::make_shared<arrow::Schema>(logical.fields(), logical.metadata());
  }
  arrow::FieldVector fields;
  fields.reserve(logical.fields().size());
  for (const auto& f : logical.fields()) fields.push_back(PhysicalStructField(f, mode));
  return arrow::schema(std::move(fields), logical.metadata());
}

namespace internal {

std::shared_ptr<arrow::DataType> VariantArrowType() {
  return arrow::struct_({arrow::field("metadata", arrow::binary(), false), arrow::field("value", arrow::binary(), false)});
}

bool IsVariantField(const arrow::Field& field) {
  auto raw = RawMetadata(field, kVariantMetadataKey);
  return raw && Trim(*raw) == "true";
}

arrow::Result<std::shared_ptr<arrow::DataType>> PrimitiveTypeFromDeltaName(std::string_view raw_name) {
  std::string_view name = Trim(raw_name);
  if (name == "string") return arrow::utf8();
  if (name == "long") return arrow::int64();
  if (name == "integer") return arrow::int32();
  if (name == "short") return arrow::int16();
  if (name == "byte") return arrow::int8();
  if (name == "float") return arrow::float32();
  if (name == "double") return arrow::float64();
  if (name == "boolean") return arrow::boolean();
  if (name == "binary") return arrow::binary();
  if (name == "date") return arrow::date32();
  if (name == "timestamp") return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
  if (name == "timestamp_ntz") return arrow::timestamp(arrow::TimeUnit::MICRO);
  if (name == "void") return arrow::null();
  if (name.substr(0, 7) == "decimal") {
    std::string_view rest = name.substr(7);
    if (Trim(rest).empty() || Trim(rest).front() == '(') return ParseDecimal(name, rest);
  }
  return DeltaError(DeltaErrorCode::kUnsupportedFeature, "unsupported Delta data type '" + std::string(name) + "'");
}

}  // namespace internal

}  // namespace deltacpp
