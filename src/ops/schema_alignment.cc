#include "ops/schema_alignment.h"

#include <arrow/compute/api.h>
#include <arrow/util/key_value_metadata.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "deltacpp/error.h"
#include "deltacpp/schema.h"
#include "protocol/table_features.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

int FindField(const arrow::FieldVector& fields, const std::string& name) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (EqualsIgnoreCase(fields[i]->name(), name)) return static_cast<int>(i);
  }
  return -1;
}

int IntegerRank(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::INT8: return 1;
    case arrow::Type::INT16: return 2;
    case arrow::Type::INT32: return 3;
    case arrow::Type::INT64: return 4;
    default: return 0;
  }
}

// Whether values of `from` always fit `to` (the safe casts a write applies implicitly).
bool SafelyWidens(const arrow::DataType& from, const arrow::DataType& to) {
  if (from.Equals(to)) return true;
  int rf = IntegerRank(from.id()), rt = IntegerRank(to.id());
  if (rf && rt) return rf <= rt;
  if (from.id() == arrow::Type::FLOAT && to.id() == arrow::Type::DOUBLE) return true;
  if (rf && to.id() == arrow::Type::DECIMAL128) {
    static constexpr int kDigits[] = {0, 3, 5, 10, 19};
    const auto& d = static_cast<const arrow::Decimal128Type&>(to);
    return d.precision() - d.scale() >= kDigits[rf];
  }
  if (from.id() == arrow::Type::DECIMAL128 && to.id() == arrow::Type::DECIMAL128) {
    const auto& a = static_cast<const arrow::Decimal128Type&>(from);
    const auto& b = static_cast<const arrow::Decimal128Type&>(to);
    return b.scale() >= a.scale() && b.precision() - b.scale() >= a.precision() - a.scale();
  }
  if ((from.id() == arrow::Type::LARGE_STRING || from.id() == arrow::Type::STRING_VIEW) &&
      to.id() == arrow::Type::STRING) {
    return true;
  }
  if ((from.id() == arrow::Type::LARGE_BINARY || from.id() == arrow::Type::BINARY_VIEW) &&
      to.id() == arrow::Type::BINARY) {
    return true;
  }
  if (from.id() == arrow::Type::TIMESTAMP && to.id() == arrow::Type::TIMESTAMP) {
    // Units may change (ms -> us); the zone-ness must not.
    const auto& a = static_cast<const arrow::TimestampType&>(from);
    const auto& b = static_cast<const arrow::TimestampType&>(to);
    return a.timezone().empty() == b.timezone().empty() && a.unit() <= b.unit();
  }
  if (from.id() == arrow::Type::NA) return true;
  if (from.id() == arrow::Type::STRUCT && to.id() == arrow::Type::STRUCT) {
    for (const auto& f : from.fields()) {
      int j = FindField(to.fields(), f->name());
      if (j < 0 || !SafelyWidens(*f->type(), *to.field(j)->type())) return false;
    }
    return true;
  }
  if (from.id() == arrow::Type::LIST && to.id() == arrow::Type::LIST) {
    return SafelyWidens(*static_cast<const arrow::ListType&>(from).value_type(),
                        *static_cast<const arrow::ListType&>(to).value_type());
  }
  if (from.id() == arrow::Type::MAP && to.id() == arrow::Type::MAP) {
    const auto& a = static_cast<const arrow::MapType&>(from);
    const auto& b = static_cast<const arrow::MapType&>(to);
    return SafelyWidens(*a.key_type(), *b.key_type()) && SafelyWidens(*a.item_type(), *b.item_type());
  }
  return false;
}

bool IsDecimal(arrow::Type::type id) {
  return id == arrow::Type::DECIMAL32 || id == arrow::Type::DECIMAL64 ||
         id == arrow::Type::DECIMAL128 || id == arrow::Type::DECIMAL256;
}

// Whether Delta type widening may change a column of type `from` to `to`.
bool TypeChangeAllowed(const arrow::DataType& from, const arrow::DataType& to) {
  const int rf = IntegerRank(from.id()), rt = IntegerRank(to.id());
  if (rf && rt) return rf < rt;
  if (from.id() == arrow::Type::FLOAT && to.id() == arrow::Type::DOUBLE) return true;
  if (rf && rf <= 3 && to.id() == arrow::Type::DOUBLE) return true;
  if (from.id() == arrow::Type::DATE32 && to.id() == arrow::Type::TIMESTAMP) {
    return static_cast<const arrow::TimestampType&>(to).timezone().empty();
  }
  if (!IsDecimal(to.id())) return false;
  const auto& d = static_cast<const arrow::DecimalType&>(to);
  if (d.precision() > 38 || d.scale() < 0) return false;
  const int integer_digits = d.precision() - d.scale();
  if (IsDecimal(from.id())) {
    const auto& f = static_cast<const arrow::DecimalType&>(from);
    return d.scale() >= f.scale() && integer_digits >= f.precision() - f.scale();
  }
  if (rf && rf <= 3) return integer_digits >= 10;
  if (rf == 4) return integer_digits >= 20;
  return false;
}

// The type a widened column gets: `input` as the Delta schema stores it.
std::shared_ptr<arrow::DataType> StoredType(const std::shared_ptr<arrow::DataType>& input) {
  if (input->id() == arrow::Type::TIMESTAMP) return arrow::timestamp(arrow::TimeUnit::MICRO);
  if (IsDecimal(input->id())) {
    const auto& d = static_cast<const arrow::DecimalType&>(*input);
    return arrow::decimal128(d.precision(), d.scale());
  }
  return input;
}

// One entry of `delta.typeChanges`.
struct TypeChange {
  std::string from_type;
  std::string to_type;
  std::string field_path;  ///< empty for the field itself
};

constexpr const char* kTypeChangesKey = "delta.typeChanges";

// `field` with `changes` appended to its `delta.typeChanges` metadata (existing entries kept).
arrow::Result<std::shared_ptr<arrow::Field>> WithTypeChanges(
    const std::shared_ptr<arrow::Field>& field, const std::vector<TypeChange>& changes,
    const std::string& path) {
  if (changes.empty()) return field;
  rapidjson::Document doc;
  doc.SetArray();
  auto& alloc = doc.GetAllocator();
  auto md = field->metadata() ? field->metadata()->Copy()
                              : std::make_shared<arrow::KeyValueMetadata>();
  if (int i = md->FindKey(kTypeChangesKey); i >= 0) {
    const std::string& existing = md->value(i);
    doc.Parse(existing.data(), existing.size());
    if (doc.HasParseError() || !doc.IsArray()) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("column '{}': field metadata {} is not a JSON array: {}", path,
                                    kTypeChangesKey, existing));
    }
  }
  auto str = [&](const std::string& v) {
    return rapidjson::Value(v.data(), static_cast<rapidjson::SizeType>(v.size()), alloc);
  };
  for (const auto& c : changes) {
    rapidjson::Value entry(rapidjson::kObjectType);
    entry.AddMember("fromType", str(c.from_type), alloc);
    entry.AddMember("toType", str(c.to_type), alloc);
    if (!c.field_path.empty()) entry.AddMember("fieldPath", str(c.field_path), alloc);
    doc.PushBack(entry, alloc);
  }
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  doc.Accept(writer);
  ARROW_RETURN_NOT_OK(md->Set(kTypeChangesKey, buf.GetString()));
  return field->WithMetadata(md);
}

// How far a write may evolve the table schema.
struct Evolution {
  bool merge_schema = false;  ///< add new (nested) struct fields
  bool widen = false;         ///< change types by Delta type widening
  std::vector<std::string>* widened = nullptr;
};

std::string JoinFieldPath(const std::string& base, const std::string& part) {
  return base.empty() ? part : base + "." + part;
}

arrow::Status TypeMismatch(const std::string& path, const arrow::DataType& table,
                           const arrow::DataType& input, const Evolution& ev) {
  std::string hint;
  if (ev.widen) {
    hint = " (not a type change Delta type widening allows)";
  }
  return DeltaError(DeltaErrorCode::kSchemaMismatch,
                    fmt::format("column '{}': the table has type {}, the data has {}{}", path,
                                table.ToString(), input.ToString(), hint));
}

// The type of table column `path` after it takes values of type `input`. Type changes of the
// column itself and of array elements / map keys and values below it are appended to `changes`
// (fieldPath relative to the column, starting at `field_path`); struct fields below record
// their own. `new_fields` says whether new struct fields may be added at this level (not
// inside arrays and maps).
arrow::Result<std::shared_ptr<arrow::DataType>> EvolveType(
    const std::shared_ptr<arrow::DataType>& table, const std::shared_ptr<arrow::DataType>& input,
    const std::string& path, const std::string& field_path, bool new_fields,
    const Evolution& ev, std::vector<TypeChange>* changes) {
  if (SafelyWidens(*input, *table)) return table;
  if (table->id() == arrow::Type::STRUCT && input->id() == arrow::Type::STRUCT) {
    arrow::FieldVector fields = table->fields();
    for (const auto& f : input->fields()) {
      int j = FindField(fields, f->name());
      if (j < 0) {
        if (!ev.merge_schema || !new_fields) {
          return DeltaError(DeltaErrorCode::kSchemaMismatch,
                            fmt::format("column '{}.{}' is not in the table (nested fields inside "
                                        "arrays and maps are not added by mergeSchema)",
                                        path, f->name()));
        }
        fields.push_back(f->WithNullable(true));
        continue;
      }
      const auto& tf = fields[j];
      const std::string child_path = path + "." + tf->name();
      std::vector<TypeChange> child_changes;
      ARROW_ASSIGN_OR_RAISE(auto type, EvolveType(tf->type(), f->type(), child_path, "",
                                                  new_fields, ev, &child_changes));
      ARROW_ASSIGN_OR_RAISE(fields[j], WithTypeChanges(tf->WithType(type), child_changes,
                                                       child_path));
    }
    return arrow::struct_(fields);
  }
  if (ev.widen && table->id() == arrow::Type::LIST && input->id() == arrow::Type::LIST) {
    const auto& t = static_cast<const arrow::ListType&>(*table);
    const auto& in = static_cast<const arrow::ListType&>(*input);
    ARROW_ASSIGN_OR_RAISE(auto element,
                          EvolveType(t.value_type(), in.value_type(), path + ".element",
                                     JoinFieldPath(field_path, "element"), false, ev, changes));
    return arrow::list(t.value_field()->WithType(element));
  }
  if (ev.widen && table->id() == arrow::Type::MAP && input->id() == arrow::Type::MAP) {
    const auto& t = static_cast<const arrow::MapType&>(*table);
    const auto& in = static_cast<const arrow::MapType&>(*input);
    ARROW_ASSIGN_OR_RAISE(auto key, EvolveType(t.key_type(), in.key_type(), path + ".key",
                                               JoinFieldPath(field_path, "key"), false, ev,
                                               changes));
    ARROW_ASSIGN_OR_RAISE(auto value,
                          EvolveType(t.item_type(), in.item_type(), path + ".value",
                                     JoinFieldPath(field_path, "value"), false, ev, changes));
    return std::make_shared<arrow::MapType>(t.key_field()->WithType(key),
                                            t.item_field()->WithType(value), t.keys_sorted());
  }
  if (ev.widen && TypeChangeAllowed(*table, *input)) {
    auto widened = StoredType(input);
    changes->push_back(TypeChange{DeltaTypeName(*table), DeltaTypeName(*widened), field_path});
    if (ev.widened) ev.widened->push_back(path);
    return widened;
  }
  return TypeMismatch(path, *table, *input, ev);
}

// Elements of an array or map column (`elements`, a struct array) that are present must have
// values in their NOT NULL fields (structs nested deeper inside an element are not checked).
arrow::Status CheckNotNullFieldsOfPresentElements(const arrow::Array& elements,
                                                  const std::string& name) {
  if (elements.type_id() != arrow::Type::STRUCT) return arrow::Status::OK();
  const auto& s = static_cast<const arrow::StructArray&>(elements);
  const auto& type = *s.type();
  for (int j = 0; j < type.num_fields(); ++j) {
    const auto& field = type.field(j);
    const auto& child = s.field(j);  // sliced like `s`
    if (!field->nullable()) {
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsValid(i) && child->IsNull(i)) {
          return DeltaError(DeltaErrorCode::kSchemaMismatch,
                            fmt::format("column '{}': field '{}' of type {} has nulls in "
                                        "elements that are present, but it is NOT NULL",
                                        name, field->name(), field->type()->ToString()));
        }
      }
    }
  }
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Array>> CastTo(const std::shared_ptr<arrow::Array>& array,
                                                    const std::shared_ptr<arrow::DataType>& type,
                                                    const std::string& name) {
  if (array->type()->Equals(*type)) return array;
  if (type->id() == arrow::Type::STRUCT && array->type_id() == arrow::Type::STRUCT) {
    auto s = std::static_pointer_cast<arrow::StructArray>(array);
    std::vector<std::shared_ptr<arrow::Array>> children;
    for (const auto& f : type->fields()) {
      int j = FindField(s->type()->fields(), f->name());
      if (j < 0) {
        ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(f->type(), s->length()));
        children.push_back(nulls);
      } else {
        ARROW_ASSIGN_OR_RAISE(auto c, CastTo(s->field(j), f->type(), name + "." + f->name()));
        children.push_back(c);
      }
    }
    std::shared_ptr<arrow::Buffer> validity;
    if (s->null_count() > 0) {
      ARROW_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(arrow::default_memory_pool(),
                                                                  s->null_bitmap_data(),
                                                                  s->offset(), s->length()));
    }
    return std::make_shared<arrow::StructArray>(type, s->length(), children, validity,
                                                s->null_count());
  }
  // Lists and maps: their elements are aligned the same way, so a null struct element may hold
  // nulls in its NOT NULL fields (which Arrow's cast refuses); a null in a NOT NULL field of an
  // element that is present is refused.
  if (type->id() == arrow::Type::LIST && array->type_id() == arrow::Type::LIST) {
    auto l = std::static_pointer_cast<arrow::ListArray>(array);
    const auto& target = static_cast<const arrow::ListType&>(*type);
    ARROW_ASSIGN_OR_RAISE(auto values, CastTo(l->values(), target.value_type(), name + ".element"));
    ARROW_RETURN_NOT_OK(CheckNotNullFieldsOfPresentElements(*values, name));
    return std::make_shared<arrow::ListArray>(type, l->length(), l->value_offsets(), values,
                                              l->null_bitmap(), l->null_count(), l->offset());
  }
  if (type->id() == arrow::Type::MAP && array->type_id() == arrow::Type::MAP) {
    auto m = std::static_pointer_cast<arrow::MapArray>(array);
    const auto& target = static_cast<const arrow::MapType&>(*type);
    ARROW_ASSIGN_OR_RAISE(auto keys, CastTo(m->keys(), target.key_type(), name + ".key"));
    ARROW_ASSIGN_OR_RAISE(auto items, CastTo(m->items(), target.item_type(), name + ".value"));
    ARROW_RETURN_NOT_OK(CheckNotNullFieldsOfPresentElements(*items, name));
    return std::make_shared<arrow::MapArray>(type, m->length(), m->value_offsets(), keys, items,
                                             m->null_bitmap(), m->null_count(), m->offset());
  }
  auto cast = arrow::compute::Cast(*array, type);
  if (!cast.ok()) {
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("column '{}': cannot write {} values into a {} column: {}", name,
                                  array->type()->ToString(), type->ToString(),
                                  cast.status().message()));
  }
  return *cast;
}

}  // namespace

arrow::Result<SchemaAlignment> AlignSchemas(const arrow::Schema& table, const arrow::Schema& input,
                                            bool merge_schema, bool type_widening) {
  SchemaAlignment out;
  const bool widen = merge_schema && type_widening;
  Evolution evolution;
  evolution.merge_schema = merge_schema;
  evolution.widen = widen;
  evolution.widened = &out.widened_columns;
  arrow::FieldVector fields = table.fields();
  std::vector<std::string> extra;
  std::vector<std::string> mismatched;
  for (int i = 0; i < input.num_fields(); ++i) {
    const auto& in = input.field(i);
    int j = FindField(fields, in->name());
    if (j < 0) {
      if (merge_schema) {
        fields.push_back(in->WithNullable(true));
        out.schema_changed = true;
      } else {
        extra.push_back(fmt::format("{} {}", in->name(), in->type()->ToString()));
      }
      continue;
    }
    const auto& tf = fields[j];
    if (SafelyWidens(*in->type(), *tf->type())) continue;
    const auto tid = tf->type()->id();
    const bool same_nesting = tid == in->type()->id() &&
                              (tid == arrow::Type::STRUCT || tid == arrow::Type::LIST ||
                               tid == arrow::Type::MAP);
    const bool evolve =
        (merge_schema && tid == arrow::Type::STRUCT && same_nesting) ||
        (widen && (same_nesting || TypeChangeAllowed(*tf->type(), *in->type())));
    if (evolve) {
      std::vector<TypeChange> changes;
      ARROW_ASSIGN_OR_RAISE(auto merged, EvolveType(tf->type(), in->type(), tf->name(), "", true,
                                                    evolution, &changes));
      if (!merged->Equals(*tf->type()) || !changes.empty()) {
        ARROW_ASSIGN_OR_RAISE(fields[j],
                              WithTypeChanges(tf->WithType(merged), changes, tf->name()));
        out.schema_changed = true;
      }
      continue;
    }
    mismatched.push_back(fmt::format("'{}': table type {}, data type {}", tf->name(),
                                     tf->type()->ToString(), in->type()->ToString()));
  }
  if (!mismatched.empty()) {
    std::string list;
    for (const auto& m : mismatched) list += (list.empty() ? "" : "; ") + m;
    std::string hint = "types can only be widened safely; changing a type needs "
                       "delta.enableTypeWidening";
    if (widen) {
      hint = "not a type change Delta type widening allows";
    } else if (type_widening) {
      hint = "types can only be widened safely; widening a column type needs mergeSchema";
    }
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("the data does not match the table schema: {} ({})", list,
                                  hint));
  }
  if (!extra.empty()) {
    std::string list;
    for (const auto& m : extra) list += (list.empty() ? "" : ", ") + m;
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("the data has columns the table does not have: {} (use "
                                  "mergeSchema to add them)",
                                  list));
  }
  out.table_schema = arrow::schema(fields, table.metadata());
  for (const auto& f : fields) {
    int idx = FindField(input.fields(), f->name());
    if (idx < 0 && !f->nullable()) {
      return DeltaError(DeltaErrorCode::kConstraintViolation,
                        fmt::format("NOT NULL column '{}' is missing from the data", f->name()));
    }
    out.input_index.push_back(idx);
  }
  return out;
}

std::optional<Protocol> ProtocolForTypeWidening(const Protocol& current) {
  for (const auto& f : EffectiveFeatures(current)) {
    if (f == "typeWidening" || f == "typeWidening-preview") return std::nullopt;
  }
  Protocol needed;
  needed.min_reader_version = 3;
  needed.min_writer_version = 7;
  needed.reader_features = std::vector<std::string>{"typeWidening"};
  needed.writer_features = std::vector<std::string>{"typeWidening"};
  return MergeProtocols(current, needed);
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(
    const SchemaAlignment& alignment, const std::shared_ptr<arrow::RecordBatch>& input) {
  std::vector<std::shared_ptr<arrow::Array>> cols;
  const auto& fields = alignment.table_schema->fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    int idx = alignment.input_index[i];
    if (idx < 0) {
      ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(fields[i]->type(), input->num_rows()));
      cols.push_back(nulls);
    } else {
      ARROW_ASSIGN_OR_RAISE(auto c, CastTo(input->column(idx), fields[i]->type(), fields[i]->name()));
      cols.push_back(c);
    }
  }
  return arrow::RecordBatch::Make(alignment.table_schema, input->num_rows(), std::move(cols));
}

}  // namespace deltacpp::internal
