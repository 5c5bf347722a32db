#include "ops/table_definition.h"

#include <fmt/core.h>

#include <set>

#include "deltacpp/error.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "ops/op_util.h"
#include "protocol/table_properties.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "util/random_uuid.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

bool IsPrimitive(const arrow::DataType& t) {
  switch (t.id()) {
    case arrow::Type::STRUCT:
    case arrow::Type::LIST:
    case arrow::Type::MAP:
    case arrow::Type::NA:
      return false;
    default:
      return true;
  }
}

// Gives every field (nested ones included) a column-mapping id and a physical name.
std::shared_ptr<arrow::Field> AssignColumnMapping(const std::shared_ptr<arrow::Field>& field,
                                                  int64_t* next_id) {
  std::shared_ptr<arrow::DataType> type = field->type();
  if (type->id() == arrow::Type::STRUCT) {
    arrow::FieldVector children;
    for (const auto& c : type->fields()) children.push_back(AssignColumnMapping(c, next_id));
    type = arrow::struct_(children);
  } else if (type->id() == arrow::Type::LIST) {
    auto elem = static_cast<const arrow::ListType&>(*type).value_field();
    if (elem->type()->id() == arrow::Type::STRUCT) {
      arrow::FieldVector children;
      for (const auto& c : elem->type()->fields()) children.push_back(AssignColumnMapping(c, next_id));
      type = arrow::list(elem->WithType(arrow::struct_(children)));
    }
  }
  auto md = field->metadata() ? field->metadata()->Copy() : std::make_shared<arrow::KeyValueMetadata>();
  if (md->FindKey(std::string(kColumnIdKey)) < 0) {
    md->Append(std::string(kColumnIdKey), std::to_string(++*next_id));
  }
  if (md->FindKey(std::string(kPhysicalNameKey)) < 0) {
    md->Append(std::string(kPhysicalNameKey), JsonQuote("col-" + RandomUuidV4()));
  }
  return field->WithType(type)->WithMetadata(md);
}

}  // namespace

arrow::Result<TableDefinition> BuildTableDefinition(
    const std::shared_ptr<arrow::Schema>& schema, const std::vector<std::string>& partition_columns,
    const std::map<std::string, std::string>& properties,
    const std::map<std::string, std::string>& constraints, const std::optional<std::string>& name,
    const std::optional<std::string>& description, const std::optional<std::string>& table_id) {
  if (!schema || schema->num_fields() == 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "a table needs at least one column");
  }
  std::set<std::string> seen;
  for (const auto& f : schema->fields()) {
    std::string lower = f->name();
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!seen.insert(lower).second) {
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("column '{}' appears twice (names are case-insensitive)", f->name()));
    }
  }
  TableDefinition def;
  std::vector<std::string> partitions;
  for (const auto& p : partition_columns) {
    std::shared_ptr<arrow::Field> found;
    for (const auto& f : schema->fields()) {
      if (EqualsIgnoreCase(f->name(), p)) found = f;
    }
    if (!found) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("partition column '{}' is not in the schema {}", p,
                                    schema->ToString()));
    }
    if (!IsPrimitive(*found->type())) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("partition column '{}' has type {}, which cannot partition a table",
                                    p, found->type()->ToString()));
    }
    partitions.push_back(found->name());
  }
  if (!partitions.empty() && partitions.size() == static_cast<size_t>(schema->num_fields())) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "cannot partition by every column: at least one data column is needed");
  }

  std::map<std::string, std::string> configuration;
  std::set<std::string> features;
  std::optional<int> min_reader, min_writer;
  for (const auto& [key, value] : properties) {
    if (key.starts_with("delta.feature.")) {
      if (value != "supported" && value != "enabled") {
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("{}={}: the value must be 'supported'", key, value));
      }
      features.insert(key.substr(std::string("delta.feature.").size()));
    } else if (key == "delta.minReaderVersion" || key == "delta.minWriterVersion") {
      ARROW_ASSIGN_OR_RAISE(int64_t v, ParseIntegerProperty(value, key));
      (key == "delta.minReaderVersion" ? min_reader : min_writer) = static_cast<int>(v);
    } else {
      configuration[key] = value;
    }
  }
  for (const auto& [cname, expr] : constraints) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(expr));
    auto bound = BindPredicate(parsed, *schema);
    if (!bound.ok()) {
      return arrow::Status(bound.status().code(),
                           fmt::format("CHECK constraint {}: {}", cname, bound.status().message()),
                           bound.status().detail());
    }
    configuration["delta.constraints." + cname] = expr;
  }

  std::shared_ptr<arrow::Schema> stored = schema;
  ARROW_ASSIGN_OR_RAISE(auto mode, ParseColumnMappingMode(configuration));
  if (mode != ColumnMappingMode::kNone) {
    int64_t next_id = 0;
    arrow::FieldVector fields;
    for (const auto& f : schema->fields()) fields.push_back(AssignColumnMapping(f, &next_id));
    stored = arrow::schema(fields);
    configuration["delta.columnMapping.maxColumnId"] = std::to_string(next_id);
  }

  ARROW_ASSIGN_OR_RAISE(def.protocol, RequiredProtocol(*stored, configuration, features));
  if (min_reader || min_writer) {
    Protocol asked;
    asked.min_reader_version = std::max(def.protocol.min_reader_version, min_reader.value_or(1));
    asked.min_writer_version = std::max(def.protocol.min_writer_version, min_writer.value_or(2));
    if (asked.min_writer_version == 7 && !asked.writer_features) asked.writer_features = std::vector<std::string>{};
    if (asked.min_reader_version == 3 && !asked.reader_features) asked.reader_features = std::vector<std::string>{};
    def.protocol = MergeProtocols(asked, def.protocol);
  }

  def.schema = stored;
  def.metadata.id = table_id.value_or(RandomUuidV4());
  def.metadata.name = name;
  def.metadata.description = description;
  ARROW_ASSIGN_OR_RAISE(def.metadata.schema_string, SchemaToDeltaJson(*stored));
  def.metadata.partition_columns = partitions;
  def.metadata.configuration = configuration;
  def.metadata.created_time = WallClockMillis();
  return def;
}

}  // namespace deltacpp::internal
