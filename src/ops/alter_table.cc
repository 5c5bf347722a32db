// ALTER TABLE: ADD COLUMNS, SET / UNSET TBLPROPERTIES, ADD / DROP CONSTRAINT.
#include "deltacpp/ops/alter_table.h"

#include <arrow/compute/api.h>
#include <arrow/util/key_value_metadata.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <optional>
#include <set>

#include "deltacpp/error.h"
#include "deltacpp/scan.h"
#include "expr/binder.h"
#include "expr/bound_expr.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "log/file_action_schema.h"
#include "log/checkpoint_writer.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "protocol/table_properties.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "txn/writer_features.h"
#include "util/random_uuid.h"
#include "util/uri.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

constexpr std::string_view kConstraintPrefix = "delta.constraints.";
constexpr std::string_view kFeaturePrefix = "delta.feature.";
constexpr std::string_view kMaxColumnIdKey = "delta.columnMapping.maxColumnId";
constexpr std::string_view kColumnMappingModeKey = "delta.columnMapping.mode";

arrow::Status Invalid(const std::string& message) {
  return DeltaError(DeltaErrorCode::kInvalidArgument, message);
}

// The table as the operation reads it.
struct AlterTarget {
  std::shared_ptr<DeltaTable> table;
  std::shared_ptr<const Snapshot> snapshot;
  std::shared_ptr<arrow::Schema> schema;  ///< parsed from metaData.schemaString
};

arrow::Result<AlterTarget> OpenTarget(std::string_view location) {
  AlterTarget t;
  ARROW_ASSIGN_OR_RAISE(t.table, DeltaTable::Open(location));
  ARROW_ASSIGN_OR_RAISE(auto latest, t.table->Latest());
  t.snapshot = latest;
  ARROW_ASSIGN_OR_RAISE(t.schema, SchemaFromDeltaJson(latest->metadata().schema_string));
  return t;
}

// These operations commit no rows, so the row-level writer duties hold for what they commit;
// ADD CONSTRAINT checks the existing rows itself.
TransactionOptions RowFreeOptions(const TransactionOptions& options) {
  TransactionOptions out = options;
  for (const auto& f : internal::RowLevelWriterFeatures()) {
    if (std::find(out.enforced_features.begin(), out.enforced_features.end(), f) ==
        out.enforced_features.end()) {
      out.enforced_features.emplace_back(f);
    }
  }
  return out;
}

// Moves `p` to table-features writer version 7, listing every feature it supported.
void ToWriterFeatures(Protocol* p) {
  if (p->min_writer_version == 7) return;
  auto features = EffectiveFeatures(*p);
  std::sort(features.begin(), features.end());
  p->min_writer_version = 7;
  p->writer_features = features;
}

// Raises `p` to explicitly requested versions (`delta.minReaderVersion` / `...WriterVersion`).
Protocol RaiseVersions(Protocol p, std::optional<int> reader, std::optional<int> writer) {
  if (writer && *writer > p.min_writer_version) {
    if (*writer == 7) {
      ToWriterFeatures(&p);
    } else {
      p.min_writer_version = *writer;
    }
  }
  if (reader && *reader > p.min_reader_version) {
    if (*reader == 3) {
      ToWriterFeatures(&p);
      std::vector<std::string> readers;
      for (const auto& f : *p.writer_features) {
        if (IsReaderWriterFeature(f)) readers.push_back(f);
      }
      p.min_reader_version = 3;
      p.reader_features = readers;
    } else {
      // Reader version 2 means column mapping, which needs writer version 5 on legacy protocols.
      p.min_reader_version = *reader;
      if (p.min_writer_version < 5) p.min_writer_version = 5;
    }
  }
  return p;
}

// The protocol the table needs after the change: never lower than `current`.
arrow::Result<Protocol> ProtocolAfter(const Protocol& current, const arrow::Schema& schema,
                                      const std::map<std::string, std::string>& configuration,
                                      const std::set<std::string>& features,
                                      std::optional<int> min_reader = {},
                                      std::optional<int> min_writer = {}) {
  ARROW_ASSIGN_OR_RAISE(auto required, RequiredProtocol(schema, configuration, features));
  return RaiseVersions(MergeProtocols(current, required), min_reader, min_writer);
}

// Commits the new metadata (and protocol when it changed).
arrow::Result<CommitResult> CommitChange(const AlterTarget& target,
                                         const TransactionOptions& options, Metadata metadata,
                                         const Protocol& protocol, bool reads_data,
                                         const std::string& operation,
                                         const std::map<std::string, std::string>& parameters) {
  ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::Start(target.table, target.snapshot,
                                                     RowFreeOptions(options)));
  if (reads_data) txn->ReadWholeTable();
  if (!SameProtocol(protocol, target.snapshot->protocol())) txn->UpdateProtocol(protocol);
  txn->UpdateMetadata(std::move(metadata));
  return txn->Commit(operation, parameters);
}

// --- Column paths and column mapping --------------------------------------------------------

// `a.b`, `` `a.b`.c `` -> parts.
arrow::Result<std::vector<std::string>> SplitColumnPath(std::string_view path) {
  std::vector<std::string> parts;
  std::string current;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '`') {
      if (quoted && i + 1 < path.size() && path[i + 1] == '`') {
        current += '`';
        ++i;
      } else {
        quoted = !quoted;
        was_quoted = true;
      }
    } else if (c == '.' && !quoted) {
      if (current.empty() && !was_quoted) break;
      parts.push_back(std::move(current));
      current.clear();
      was_quoted = false;
    } else {
      current += c;
    }
  }
  if (quoted || (current.empty() && !was_quoted)) {
    return Invalid(fmt::format("malformed column path '{}'", path));
  }
  parts.push_back(std::move(current));
  return parts;
}

// A name part as delta-spark logs it: backticks around names containing dots or backticks.
std::string QuotePart(const std::string& name) {
  if (name.find_first_of(".`") == std::string::npos) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string JoinPath(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ".") + QuotePart(p);
  return out;
}

// How AssignMapping names the fields it gives column-mapping metadata.
enum class PhysicalNaming { kRandom, kLogical };

std::shared_ptr<arrow::Field> AssignMapping(const std::shared_ptr<arrow::Field>& field,
                                            int64_t* next_id, PhysicalNaming naming);

// Column mapping for the struct fields inside `type` (through arrays and maps).
std::shared_ptr<arrow::DataType> AssignMappingInType(const arrow::Field& owner,
                                                     const std::shared_ptr<arrow::DataType>& type,
                                                     int64_t* next_id, PhysicalNaming naming) {
  if (IsVariantField(owner)) return type;
  switch (type->id()) {
    case arrow::Type::STRUCT: {
      arrow::FieldVector children;
      for (const auto& c : type->fields()) children.push_back(AssignMapping(c, next_id, naming));
      return arrow::struct_(children);
    }
    case arrow::Type::LIST: {
      auto elem = static_cast<const arrow::ListType&>(*type).value_field();
      return arrow::list(elem->WithType(AssignMappingInType(*elem, elem->type(), next_id, naming)));
    }
    case arrow::Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      auto key = map.key_field();
      auto item = map.item_field();
      return std::make_shared<arrow::MapType>(
          key->WithType(AssignMappingInType(*key, key->type(), next_id, naming)),
          item->WithType(AssignMappingInType(*item, item->type(), next_id, naming)),
          map.keys_sorted());
    }
    default:
      return type;
  }
}

// Gives `field` and the struct fields below it a column id and a physical name where missing.
std::shared_ptr<arrow::Field> AssignMapping(const std::shared_ptr<arrow::Field>& field,
                                            int64_t* next_id, PhysicalNaming naming) {
  auto type = AssignMappingInType(*field, field->type(), next_id, naming);
  auto md = field->metadata() ? field->metadata()->Copy()
                              : std::make_shared<arrow::KeyValueMetadata>();
  if (md->FindKey(std::string(kColumnIdKey)) < 0) {
    md->Append(std::string(kColumnIdKey), std::to_string(++*next_id));
  }
  if (md->FindKey(std::string(kPhysicalNameKey)) < 0) {
    md->Append(std::string(kPhysicalNameKey),
               JsonQuote(naming == PhysicalNaming::kLogical ? field->name()
                                                            : "col-" + RandomUuidV4()));
  }
  return field->WithType(type)->WithMetadata(md);
}

// The largest column id in use below `fields`.
int64_t MaxColumnId(const arrow::FieldVector& fields) {
  int64_t max_id = 0;
  for (const auto& f : fields) {
    if (auto id = FieldId(*f)) max_id = std::max<int64_t>(max_id, *id);
    const auto& type = f->type();
    if (type->id() == arrow::Type::LIST) {
      const auto& list = static_cast<const arrow::ListType&>(*type);
      max_id = std::max(max_id, MaxColumnId({list.value_field()}));
    } else if (type->id() == arrow::Type::MAP) {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      max_id = std::max(max_id, MaxColumnId({map.key_field(), map.item_field()}));
    } else {
      max_id = std::max(max_id, MaxColumnId(type->fields()));
    }
  }
  return max_id;
}

// The first field metadata key below (and including) `field` that ADD COLUMNS does not accept.
std::optional<std::string> RefusedMetadataKey(const arrow::Field& field) {
  if (field.metadata()) {
    for (const auto& key : field.metadata()->keys()) {
      if (key == kColumnIdKey || key == kPhysicalNameKey || key == kNestedIdsKey ||
          key == "delta.generationExpression" || key == "delta.invariants" ||
          key == "CURRENT_DEFAULT" || key.starts_with("delta.identity.")) {
        return key;
      }
    }
  }
  for (const auto& child : field.type()->fields()) {
    if (auto key = RefusedMetadataKey(*child)) return key;
  }
  return std::nullopt;
}

// Inserts `field` at the end of the struct at `parent` (resolved case-insensitively) below
// `fields`; `resolved` receives the parent's exact names.
arrow::Result<arrow::FieldVector> InsertField(const arrow::FieldVector& fields,
                                              const std::vector<std::string>& parent, size_t depth,
                                              const std::shared_ptr<arrow::Field>& field,
                                              std::vector<std::string>* resolved) {
  if (depth == parent.size()) {
    for (const auto& f : fields) {
      if (EqualsIgnoreCase(f->name(), field->name())) {
        std::vector<std::string> path = *resolved;
        path.push_back(f->name());
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("cannot add column '{}': column '{}' already exists (names "
                                      "are case-insensitive)",
                                      field->name(), JoinPath(path)));
      }
    }
    arrow::FieldVector out = fields;
    out.push_back(field);
    return out;
  }
  int found = -1;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (EqualsIgnoreCase(fields[i]->name(), parent[depth])) {
      if (found >= 0) {
        return Invalid(fmt::format("column path '{}' is ambiguous", JoinPath(parent)));
      }
      found = static_cast<int>(i);
    }
  }
  if (found < 0) {
    return Invalid(fmt::format("cannot add column '{}': parent column '{}' does not exist",
                               field->name(), JoinPath(parent)));
  }
  const auto& target = fields[found];
  resolved->push_back(target->name());
  if (target->type()->id() != arrow::Type::STRUCT || IsVariantField(*target)) {
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("cannot add column '{}' into '{}': it has type {}, not a struct",
                                  field->name(), JoinPath(*resolved),
                                  target->type()->ToString()));
  }
  ARROW_ASSIGN_OR_RAISE(auto children,
                        InsertField(target->type()->fields(), parent, depth + 1, field, resolved));
  arrow::FieldVector out = fields;
  out[found] = target->WithType(arrow::struct_(children));
  return out;
}

// {"name","type","nullable","metadata"} of one added column as delta-spark logs it.
arrow::Status AppendColumnJson(const std::string& full_name, const arrow::Field& field,
                               rapidjson::Writer<rapidjson::StringBuffer>& w) {
  ARROW_ASSIGN_OR_RAISE(auto json, SchemaToDeltaJson(*arrow::schema({field.Copy()})));
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("fields") ||
      !doc["fields"].IsArray() || doc["fields"].Size() != 1) {
    return arrow::Status::Invalid("unexpected schema JSON for column ", full_name);
  }
  const auto& f = doc["fields"][0];
  std::string type_name;
  if (f.HasMember("type") && f["type"].IsString()) {
    type_name = f["type"].GetString();
  } else if (f.HasMember("type") && f["type"].IsObject() && f["type"].HasMember("type") &&
             f["type"]["type"].IsString()) {
    type_name = f["type"]["type"].GetString();
  }
  w.StartObject();
  w.Key("column");
  w.StartObject();
  w.Key("name");
  w.String(full_name.c_str(), static_cast<rapidjson::SizeType>(full_name.size()));
  w.Key("type");
  w.String(type_name.c_str(), static_cast<rapidjson::SizeType>(type_name.size()));
  w.Key("nullable");
  w.Bool(field.nullable());
  w.Key("metadata");
  if (f.HasMember("metadata") && f["metadata"].IsObject()) {
    f["metadata"].Accept(w);
  } else {
    w.StartObject();
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return arrow::Status::OK();
}

// --- Properties ------------------------------------------------------------------------------

arrow::Result<int> VersionProperty(const std::string& key, const std::string& value, int max) {
  ARROW_ASSIGN_OR_RAISE(int64_t v, ParseIntegerProperty(value, key));
  if (v < 1 || v > max) {
    return Invalid(fmt::format("{}='{}': the value must be between 1 and {}", key, value, max));
  }
  return static_cast<int>(v);
}

// The configuration key of constraint `name` in `configuration` (case-insensitive).
std::optional<std::string> FindConstraintKey(
    const std::map<std::string, std::string>& configuration, const std::string& name) {
  const std::string wanted = std::string(kConstraintPrefix) + AsciiLower(name);
  for (const auto& [key, value] : configuration) {
    if (AsciiLower(key) == wanted) return key;
  }
  return std::nullopt;
}

// `{a=1, b="x"}` for row `row` of `batch`.
std::string RowText(const arrow::RecordBatch& batch, int64_t row) {
  std::string out;
  for (int c = 0; c < batch.num_columns(); ++c) {
    auto scalar = batch.column(c)->GetScalar(row);
    out += fmt::format("{}{}={}", c ? ", " : "", batch.schema()->field(c)->name(),
                       scalar.ok() ? (*scalar)->ToString() : "?");
  }
  return "{" + out + "}";
}

// Checks every row of `snapshot` against CHECK constraint `name` (`sql`, bound as `bound`):
// ConstraintViolation naming the constraint and the first row for which it is not TRUE.
arrow::Status CheckExistingRows(const Snapshot& snapshot, const std::string& name,
                                const std::string& sql, const BoundExpr& bound) {
  ScanOptions options;
  std::set<std::string> seen;
  for (const auto& column : ReferencedColumns(bound)) {
    const std::string& top = column.logical_path.front();
    if (seen.insert(top).second) options.columns.push_back(top);
  }
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot.NewScan().Options(options).Build());
  // TRUE exactly where the constraint holds (NULL counts as a violation).
  ARROW_ASSIGN_OR_RAISE(auto holds, ToArrowFilter(bound));
  ARROW_ASSIGN_OR_RAISE(holds, holds.Bind(*scan->schema()));
  ARROW_ASSIGN_OR_RAISE(auto reader, scan->Execute());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    ARROW_ASSIGN_OR_RAISE(auto value, arrow::compute::ExecuteScalarExpression(
                                          holds, arrow::compute::ExecBatch(*batch)));
    std::optional<int64_t> offending;
    if (value.is_scalar()) {
      const auto& s = static_cast<const arrow::BooleanScalar&>(*value.scalar());
      if (!s.is_valid || !s.value) offending = 0;
    } else {
      auto mask_array = value.make_array();  // the reference below must not outlive it
      const auto& mask = static_cast<const arrow::BooleanArray&>(*mask_array);
      for (int64_t i = 0; i < mask.length() && !offending; ++i) {
        if (mask.IsNull(i) || !mask.Value(i)) offending = i;
      }
    }
    if (offending) {
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("cannot add CHECK constraint {} ({}): existing row {} of "
                                    "table {} (version {}) violates it",
                                    name, sql, RowText(*batch, *offending), snapshot.table_root(),
                                    snapshot.version()));
    }
  }
  return arrow::Status::OK();
}

// True when some live file has no row ids (so turning row tracking on would need a backfill).
bool HasFilesWithoutRowIds(const Snapshot& snapshot) {
  bool missing = false;
  for (const auto& chunk : snapshot.live_files().chunks()) {
    const auto& ids = *chunk.actions()->column(kBaseRowIdCol);
    if (ids.null_count() == 0) continue;
    chunk.ForEachLive([&](int64_t row) { missing |= ids.IsNull(row); });
  }
  return missing;
}

}  // namespace

arrow::Result<CommitResult> AddColumns(std::string_view location,
                                       const std::vector<NewColumn>& columns,
                                       const TransactionOptions& options) {
  if (columns.empty()) return Invalid("ADD COLUMNS needs at least one column");
  const std::string context = fmt::format("ADD COLUMNS on {}: ", location);
  for (const auto& column : columns) {
    ARROW_RETURN_NOT_OK(CheckOptionText(column.parent, context, "the parent column path"));
    if (column.field) {
      ARROW_RETURN_NOT_OK(CheckFieldText(*column.field, "", DeltaErrorCode::kInvalidArgument,
                                         context, "new column"));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto target, OpenTarget(location));
  const Snapshot& snapshot = *target.snapshot;
  Metadata metadata = snapshot.metadata();
  const bool mapped = snapshot.column_mapping_mode() != ColumnMappingMode::kNone;
  int64_t next_id = 0;
  if (mapped) {
    ARROW_RETURN_NOT_OK(snapshot.config().CheckValid(
        kMaxColumnIdKey, fmt::format("table {}", snapshot.table_root())));
    next_id = std::max(snapshot.config().column_mapping_max_column_id.value_or(0),
                       MaxColumnId(target.schema->fields()));
  }

  arrow::FieldVector fields = target.schema->fields();
  rapidjson::StringBuffer logged;
  rapidjson::Writer<rapidjson::StringBuffer> w(logged);
  w.StartArray();
  for (const auto& column : columns) {
    if (!column.field || column.field->name().empty()) {
      return Invalid("ADD COLUMNS: every column needs a field with a name");
    }
    const auto& field = column.field;
    if (!field->nullable()) {
      return Invalid(fmt::format("cannot add column '{}': new columns must be nullable (existing "
                                 "rows have no value for it)",
                                 field->name()));
    }
    if (auto key = RefusedMetadataKey(*field)) {
      return Invalid(fmt::format("cannot add column '{}': field metadata '{}' is not accepted "
                                 "by ADD COLUMNS",
                                 field->name(), *key));
    }
    std::vector<std::string> parent;
    if (!column.parent.empty()) {
      ARROW_ASSIGN_OR_RAISE(parent, SplitColumnPath(column.parent));
    }
    std::vector<std::string> resolved;
    auto stored = mapped ? AssignMapping(field, &next_id, PhysicalNaming::kRandom) : field;
    ARROW_ASSIGN_OR_RAISE(fields, InsertField(fields, parent, 0, stored, &resolved));
    resolved.push_back(field->name());
    ARROW_RETURN_NOT_OK(AppendColumnJson(JoinPath(resolved), *field, w));
  }
  w.EndArray();

  auto schema = arrow::schema(fields);
  ARROW_ASSIGN_OR_RAISE(metadata.schema_string, SchemaToDeltaJson(*schema));
  if (mapped) metadata.configuration[std::string(kMaxColumnIdKey)] = std::to_string(next_id);
  ARROW_ASSIGN_OR_RAISE(auto protocol, ProtocolAfter(snapshot.protocol(), *schema,
                                                     metadata.configuration, {}));
  return CommitChange(target, options, std::move(metadata), protocol, false, "ADD COLUMNS",
                      {{"columns", logged.GetString()}});
}

arrow::Result<CommitResult> SetTableProperties(std::string_view location,
                                               const std::map<std::string, std::string>& properties,
                                               const TransactionOptions& options) {
  if (properties.empty()) return Invalid("SET TBLPROPERTIES needs at least one property");
  ARROW_RETURN_NOT_OK(CheckPropertiesText(
      properties, fmt::format("SET TBLPROPERTIES on {}: ", location), "table property"));
  ARROW_ASSIGN_OR_RAISE(auto target, OpenTarget(location));
  const Snapshot& snapshot = *target.snapshot;
  Metadata metadata = snapshot.metadata();
  auto& configuration = metadata.configuration;
  std::set<std::string> features;
  std::optional<int> min_reader, min_writer;
  for (const auto& [key, value] : properties) {
    const std::string lower = AsciiLower(key);
    if (lower.starts_with(kConstraintPrefix)) {
      return Invalid(fmt::format("{}: CHECK constraints are added with ADD CONSTRAINT", key));
    }
    if (lower.starts_with(kFeaturePrefix)) {
      if (!EqualsIgnoreCase(value, "supported") && !EqualsIgnoreCase(value, "enabled")) {
        return Invalid(fmt::format("{}={}: the value must be 'supported'", key, value));
      }
      features.insert(key.substr(kFeaturePrefix.size()));
    } else if (lower == "delta.minreaderversion") {
      ARROW_ASSIGN_OR_RAISE(min_reader, VersionProperty("delta.minReaderVersion", value, 3));
    } else if (lower == "delta.minwriterversion") {
      ARROW_ASSIGN_OR_RAISE(min_writer, VersionProperty("delta.minWriterVersion", value, 7));
    } else if (lower == "comment") {
      metadata.description = value;
    } else if (lower.starts_with("delta.")) {
      const KnownProperty* known = FindKnownProperty(key);
      if (!known) return Invalid(fmt::format("unknown table property '{}'", key));
      ARROW_ASSIGN_OR_RAISE(auto stored, CheckPropertyValue(*known, value));
      // One spelling per key: drop a differently cased copy already in the table.
      for (auto it = configuration.begin(); it != configuration.end();) {
        it = EqualsIgnoreCase(it->first, known->key) && it->first != known->key
                 ? configuration.erase(it)
                 : std::next(it);
      }
      configuration[std::string(known->key)] = stored;
    } else {
      configuration[key] = value;
    }
  }

  // Row tracking on a table with data needs row ids for the existing files first.
  if (TableConfig::Parse(configuration).row_tracking && !snapshot.config().row_tracking &&
      HasFilesWithoutRowIds(snapshot)) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      fmt::format("delta.enableRowTracking=true: table {} has files without row "
                                  "ids, and deltacpp does not backfill them",
                                  snapshot.table_root()));
  }

  // Column mapping: only none -> name, which keeps the data files' column names as physical names.
  std::shared_ptr<arrow::Schema> schema = target.schema;
  const ColumnMappingMode old_mode = snapshot.column_mapping_mode();
  ARROW_ASSIGN_OR_RAISE(auto new_mode, ParseColumnMappingMode(configuration));
  if (new_mode != old_mode) {
    if (old_mode != ColumnMappingMode::kNone || new_mode != ColumnMappingMode::kName) {
      auto mode_text = [](const std::map<std::string, std::string>& conf) {
        auto it = conf.find(std::string(kColumnMappingModeKey));
        return it == conf.end() ? std::string("none") : it->second;
      };
      return Invalid(fmt::format("changing {} from '{}' to '{}' is not supported (only from none "
                                 "to name)",
                                 kColumnMappingModeKey,
                                 mode_text(snapshot.metadata().configuration),
                                 mode_text(configuration)));
    }
    int64_t next_id = MaxColumnId(schema->fields());
    arrow::FieldVector fields;
    for (const auto& f : schema->fields()) {
      fields.push_back(AssignMapping(f, &next_id, PhysicalNaming::kLogical));
    }
    schema = arrow::schema(fields);
    ARROW_ASSIGN_OR_RAISE(metadata.schema_string, SchemaToDeltaJson(*schema));
    configuration[std::string(kMaxColumnIdKey)] = std::to_string(next_id);
  }

  ARROW_ASSIGN_OR_RAISE(auto protocol, ProtocolAfter(snapshot.protocol(), *schema, configuration,
                                                     features, min_reader, min_writer));
  return CommitChange(target, options, std::move(metadata), protocol, false, "SET TBLPROPERTIES",
                      {{"properties", JsonStringObject(properties)}});
}

arrow::Result<CommitResult> UnsetTableProperties(std::string_view location,
                                                 const std::vector<std::string>& keys,
                                                 bool if_exists,
                                                 const TransactionOptions& options) {
  if (keys.empty()) return Invalid("UNSET TBLPROPERTIES needs at least one property");
  for (const auto& key : keys) {
    ARROW_RETURN_NOT_OK(CheckOptionText(key, fmt::format("UNSET TBLPROPERTIES on {}: ", location),
                                        "a table property key"));
  }
  ARROW_ASSIGN_OR_RAISE(auto target, OpenTarget(location));
  const Snapshot& snapshot = *target.snapshot;
  Metadata metadata = snapshot.metadata();
  auto& configuration = metadata.configuration;
  const bool mapped = snapshot.column_mapping_mode() != ColumnMappingMode::kNone;
  std::vector<std::string> normalized;
  for (const auto& key : keys) {
    if (AsciiLower(key) == "comment") {
      if (!metadata.description && !if_exists) {
        return Invalid(fmt::format("cannot unset 'comment': table {} has no description",
                                   snapshot.table_root()));
      }
      metadata.description.reset();
      normalized.push_back("comment");
      continue;
    }
    // delta.* keys match case-insensitively, others exactly.
    std::optional<std::string> present;
    const bool delta_key = AsciiLower(key).starts_with("delta.");
    for (const auto& [k, v] : configuration) {
      if (k == key || (delta_key && EqualsIgnoreCase(k, key))) present = k;
    }
    std::string name = key;
    if (present) {
      name = *present;
    } else if (const KnownProperty* known = delta_key ? FindKnownProperty(key) : nullptr) {
      name = std::string(known->key);
    }
    normalized.push_back(name);
    if (!present) {
      if (if_exists) continue;
      return Invalid(fmt::format("cannot unset property '{}': table {} does not have it", key,
                                 snapshot.table_root()));
    }
    if (mapped && (EqualsIgnoreCase(name, kColumnMappingModeKey) ||
                   EqualsIgnoreCase(name, kMaxColumnIdKey))) {
      return Invalid(fmt::format("cannot unset '{}': the table uses column mapping", name));
    }
    configuration.erase(*present);
  }
  return CommitChange(target, options, std::move(metadata), snapshot.protocol(), false,
                      "UNSET TBLPROPERTIES",
                      {{"properties", JsonStringArray(normalized)},
                       {"ifExists", if_exists ? "true" : "false"}});
}

arrow::Result<CommitResult> AddConstraint(std::string_view location, const std::string& name,
                                          const std::string& expression,
                                          const TransactionOptions& options) {
  if (name.empty()) return Invalid("ADD CONSTRAINT needs a constraint name");
  const std::string context = fmt::format("ADD CONSTRAINT on {}: ", location);
  ARROW_RETURN_NOT_OK(CheckOptionText(name, context, "the CHECK constraint name"));
  ARROW_RETURN_NOT_OK(CheckOptionText(
      expression, context, fmt::format("the expression of CHECK constraint '{}'", name)));
  ARROW_ASSIGN_OR_RAISE(auto target, OpenTarget(location));
  const Snapshot& snapshot = *target.snapshot;
  Metadata metadata = snapshot.metadata();
  if (auto existing = FindConstraintKey(metadata.configuration, name)) {
    return Invalid(fmt::format("constraint '{}' already exists on table {}: {}", name,
                               snapshot.table_root(), metadata.configuration.at(*existing)));
  }
  ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(expression));
  auto bound = BindPredicate(parsed, *snapshot.schema());
  if (!bound.ok()) {
    return arrow::Status(bound.status().code(),
                         fmt::format("CHECK constraint {}: {}", name, bound.status().message()),
                         bound.status().detail());
  }
  const std::string key = std::string(kConstraintPrefix) + AsciiLower(name);
  ARROW_RETURN_NOT_OK(CheckExistingRows(snapshot, AsciiLower(name), expression, *bound));
  metadata.configuration[key] = expression;
  ARROW_ASSIGN_OR_RAISE(auto protocol, ProtocolAfter(snapshot.protocol(), *target.schema,
                                                     metadata.configuration, {}));
  return CommitChange(target, options, std::move(metadata), protocol, true, "ADD CONSTRAINT",
                      {{"name", name}, {"expr", expression}});
}

arrow::Result<CommitResult> DropConstraint(std::string_view location, const std::string& name,
                                           bool if_exists, const TransactionOptions& options) {
  ARROW_RETURN_NOT_OK(CheckOptionText(name, fmt::format("DROP CONSTRAINT on {}: ", location),
                                      "the CHECK constraint name"));
  ARROW_ASSIGN_OR_RAISE(auto target, OpenTarget(location));
  const Snapshot& snapshot = *target.snapshot;
  Metadata metadata = snapshot.metadata();
  std::map<std::string, std::string> params = {{"name", name}, {"existed", "false"}};
  if (auto key = FindConstraintKey(metadata.configuration, name)) {
    params["expr"] = metadata.configuration.at(*key);
    params["existed"] = "true";
    metadata.configuration.erase(*key);
  } else if (!if_exists) {
    return Invalid(fmt::format("constraint '{}' does not exist on table {}", name,
                               snapshot.table_root()));
  }
  return CommitChange(target, options, std::move(metadata), snapshot.protocol(), false,
                      "DROP CONSTRAINT", params);
}

}  // namespace deltacpp
