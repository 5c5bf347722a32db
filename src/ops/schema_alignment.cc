#include "ops/schema_alignment.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include "deltacpp/error.h"
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

// Merges the fields of an input struct into a table struct (mergeSchema on nested columns).
arrow::Result<std::shared_ptr<arrow::DataType>> MergeStruct(const arrow::DataType& table,
                                                            const arrow::DataType& input,
                                                            const std::string& path) {
  arrow::FieldVector fields = table.fields();
  for (const auto& f : input.fields()) {
    int j = FindField(fields, f->name());
    if (j < 0) {
      fields.push_back(f->WithNullable(true));
      continue;
    }
    const auto& tf = fields[j];
    if (tf->type()->id() == arrow::Type::STRUCT && f->type()->id() == arrow::Type::STRUCT) {
      ARROW_ASSIGN_OR_RAISE(auto merged, MergeStruct(*tf->type(), *f->type(), path + "." + tf->name()));
      fields[j] = tf->WithType(merged);
    } else if (!SafelyWidens(*f->type(), *tf->type())) {
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("column '{}.{}': the table has type {}, the data has {}", path,
                                    tf->name(), tf->type()->ToString(), f->type()->ToString()));
    }
  }
  return arrow::struct_(fields);
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
                                            bool merge_schema) {
  SchemaAlignment out;
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
    if (merge_schema && tf->type()->id() == arrow::Type::STRUCT &&
        in->type()->id() == arrow::Type::STRUCT) {
      ARROW_ASSIGN_OR_RAISE(auto merged, MergeStruct(*tf->type(), *in->type(), tf->name()));
      if (!merged->Equals(*tf->type())) {
        fields[j] = tf->WithType(merged);
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
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("the data does not match the table schema: {} (types can only "
                                  "be widened safely; changing a type needs "
                                  "delta.enableTypeWidening)",
                                  list));
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
