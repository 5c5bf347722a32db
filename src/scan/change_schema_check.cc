#include "scan/change_schema_check.h"

#include <map>
#include <set>

#include "deltacpp/schema.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

// Physical path -> logical name of every field, through structs and list / map elements. An
// unmapped schema uses the logical names as physical ones (as switching column mapping on does).
void CollectPhysical(const arrow::DataType& type, bool mapped, const std::string& prefix,
                     std::map<std::string, std::string>* out) {
  switch (type.id()) {
    case arrow::Type::STRUCT:
      for (const auto& f : type.fields()) {
        std::string path = prefix + "\x1f" + (mapped ? PhysicalName(*f) : f->name());
        (*out)[path] = f->name();
        CollectPhysical(*f->type(), mapped, path, out);
      }
      break;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
      CollectPhysical(*type.field(0)->type(), mapped, prefix + "\x1f" + "element", out);
      break;
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(type);
      CollectPhysical(*m.key_type(), mapped, prefix + "\x1f" + "key", out);
      CollectPhysical(*m.item_type(), mapped, prefix + "\x1f" + "value", out);
      break;
    }
    default:
      break;
  }
}

bool SamePartitioning(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

bool NoColumnMappingChange(const SchemaVersion& newer, const SchemaVersion& older) {
  const bool old_mapped = older.mode != ColumnMappingMode::kNone;
  const bool new_mapped = newer.mode != ColumnMappingMode::kNone;
  if (!new_mapped) return !old_mapped;  // reading across turning column mapping off is refused
  std::map<std::string, std::string> old_fields, new_fields;
  CollectPhysical(*arrow::struct_(older.schema->fields()), old_mapped, "", &old_fields);
  CollectPhysical(*arrow::struct_(newer.schema->fields()), true, "", &new_fields);
  for (const auto& [path, name] : old_fields) {
    auto it = new_fields.find(path);
    if (it == new_fields.end()) return false;  // dropped
    if (it->second != name) return false;      // renamed
  }
  return SamePartitioning(newer.partition_columns, older.partition_columns);
}

bool NullabilityCompatible(bool existing_nullable, bool read_nullable, bool forbid_tighten) {
  return forbid_tighten ? (read_nullable || !existing_nullable)
                        : (existing_nullable || !read_nullable);
}

bool TypeReadCompatible(const arrow::DataType& existing, const arrow::DataType& read,
                        bool forbid_tighten);

bool StructReadCompatible(const arrow::FieldVector& existing, const arrow::FieldVector& read,
                          bool forbid_tighten) {
  std::map<std::string, std::shared_ptr<arrow::Field>> by_lower;
  for (const auto& f : existing) by_lower[AsciiLower(f->name())] = f;
  std::set<std::string> read_lower;
  for (const auto& f : read) read_lower.insert(AsciiLower(f->name()));
  for (const auto& [lower, f] : by_lower) {
    if (!read_lower.count(lower)) return false;  // a column the read schema no longer has
  }
  for (const auto& rf : read) {
    auto it = by_lower.find(AsciiLower(rf->name()));
    if (it == by_lower.end()) continue;  // added later: reads as null
    const auto& ef = it->second;
    if (ef->name() != rf->name()) return false;
    if (!NullabilityCompatible(ef->nullable(), rf->nullable(), forbid_tighten)) return false;
    if (!TypeReadCompatible(*ef->type(), *rf->type(), forbid_tighten)) return false;
  }
  return true;
}

bool TypeReadCompatible(const arrow::DataType& existing, const arrow::DataType& read,
                        bool forbid_tighten) {
  if (existing.id() == arrow::Type::STRUCT && read.id() == arrow::Type::STRUCT) {
    return StructReadCompatible(existing.fields(), read.fields(), forbid_tighten);
  }
  if (existing.id() == arrow::Type::LIST && read.id() == arrow::Type::LIST) {
    const auto& e = *existing.field(0);
    const auto& r = *read.field(0);
    return NullabilityCompatible(e.nullable(), r.nullable(), forbid_tighten) &&
           TypeReadCompatible(*e.type(), *r.type(), forbid_tighten);
  }
  if (existing.id() == arrow::Type::MAP && read.id() == arrow::Type::MAP) {
    const auto& e = static_cast<const arrow::MapType&>(existing);
    const auto& r = static_cast<const arrow::MapType&>(read);
    return NullabilityCompatible(e.item_field()->nullable(), r.item_field()->nullable(),
                                 forbid_tighten) &&
           TypeReadCompatible(*e.key_type(), *r.key_type(), forbid_tighten) &&
           TypeReadCompatible(*e.item_type(), *r.item_type(), forbid_tighten);
  }
  return existing.Equals(read, /*check_metadata=*/false);
}

}  // namespace

bool IsChangeDataReadCompatible(const SchemaVersion& data, const SchemaVersion& read) {
  const bool data_first = data.version <= read.version;
  const SchemaVersion& newer = data_first ? read : data;
  const SchemaVersion& older = data_first ? data : read;
  if (!NoColumnMappingChange(newer, older)) return false;
  // The older schema must be contained in the newer one; nullability may only loosen towards
  // the read schema.
  return data_first
             ? StructReadCompatible(data.schema->fields(), read.schema->fields(), true)
             : StructReadCompatible(read.schema->fields(), data.schema->fields(), false);
}

}  // namespace deltacpp::internal
