#include "scan/column_resolver.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include "deltacpp/error.h"

namespace deltacpp::internal {

namespace {

std::optional<int32_t> ParquetFieldId(const arrow::Field& f) {
  if (!f.metadata()) return std::nullopt;
  auto v = f.metadata()->Get(std::string(kParquetFieldIdKey));
  if (!v.ok()) return std::nullopt;
  try {
    return std::stoi(*v);
  } catch (...) {
    return std::nullopt;
  }
}

int FindChild(const arrow::FieldVector& file_fields, const arrow::Field& logical,
              ColumnMappingMode mode) {
  const std::optional<int32_t> id =
      mode == ColumnMappingMode::kId ? FieldId(logical) : std::nullopt;
  if (id) {
    for (size_t i = 0; i < file_fields.size(); ++i) {
      if (ParquetFieldId(*file_fields[i]) == id) return static_cast<int>(i);
    }
  }
  const std::string name =
      mode == ColumnMappingMode::kNone ? logical.name() : PhysicalName(logical);
  for (size_t i = 0; i < file_fields.size(); ++i) {
    // By id, a file column carrying another field id is another column, whatever its name.
    if (id && ParquetFieldId(*file_fields[i])) continue;
    if (file_fields[i]->name() == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

int FindFileField(const arrow::Schema& file_schema, const arrow::Field& logical,
                  ColumnMappingMode mode) {
  return FindChild(file_schema.fields(), logical, mode);
}

arrow::Result<std::shared_ptr<arrow::Array>> ConformToLogical(
    const std::shared_ptr<arrow::Array>& array, const arrow::Field& logical,
    ColumnMappingMode mode) {
  const auto& want = logical.type();
  // Equals ignores the names of list elements and map entries, which differ between writers
  // ("element" / "item", "key_value" / "entries" / "map"): nested columns are rebuilt with the
  // logical type unless it matches exactly, so every batch of a scan has the scan's schema.
  if (array->type()->Equals(*want, /*check_metadata=*/false) &&
      (want->num_fields() == 0 || array->type()->ToString(/*show_metadata=*/false) ==
                                      want->ToString(/*show_metadata=*/false))) {
    return array;
  }
  if (want->id() == arrow::Type::NA) return arrow::MakeArrayOfNull(want, array->length());
  switch (want->id()) {
    case arrow::Type::STRUCT: {
      if (array->type_id() != arrow::Type::STRUCT) break;
      // Flatten pushes the struct's own nulls into the children so they can be rebuilt.
      auto s = std::static_pointer_cast<arrow::StructArray>(array);
      const auto& file_fields = s->type()->fields();
      if (IsVariantField(logical)) {
        for (const auto& f : file_fields) {
          if (f->name() == "typed_value") {
            return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                              fmt::format("column '{}' holds a shredded variant, which deltacpp "
                                          "does not read",
                                          logical.name()));
          }
        }
      }
      std::vector<std::shared_ptr<arrow::Array>> children;
      for (const auto& lf : want->fields()) {
        int idx = FindChild(file_fields, *lf, mode);
        if (idx < 0) {
          ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(lf->type(), s->length()));
          children.push_back(nulls);
        } else {
          ARROW_ASSIGN_OR_RAISE(auto c, ConformToLogical(s->field(idx), *lf, mode));
          children.push_back(c);
        }
      }
      std::shared_ptr<arrow::Buffer> validity;
      if (s->null_count() > 0) {
        ARROW_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(
                                            arrow::default_memory_pool(), s->null_bitmap_data(),
                                            s->offset(), s->length()));
      }
      return std::make_shared<arrow::StructArray>(want, s->length(), children, validity,
                                                  s->null_count());
    }
    case arrow::Type::LIST: {
      if (array->type_id() != arrow::Type::LIST && array->type_id() != arrow::Type::LARGE_LIST) break;
      std::shared_ptr<arrow::Array> list = array;
      if (array->type_id() == arrow::Type::LARGE_LIST) {
        ARROW_ASSIGN_OR_RAISE(list, arrow::compute::Cast(*array, arrow::list(
            static_cast<const arrow::LargeListType&>(*array->type()).value_field())));
      }
      auto l = std::static_pointer_cast<arrow::ListArray>(list);
      const auto& elem = static_cast<const arrow::ListType&>(*want).value_field();
      ARROW_ASSIGN_OR_RAISE(auto values, ConformToLogical(l->values(), *elem, mode));
      return std::make_shared<arrow::ListArray>(want, l->length(), l->value_offsets(), values,
                                                l->null_bitmap(), l->null_count(), l->offset());
    }
    case arrow::Type::MAP: {
      if (array->type_id() != arrow::Type::MAP) break;
      auto m = std::static_pointer_cast<arrow::MapArray>(array);
      const auto& mt = static_cast<const arrow::MapType&>(*want);
      ARROW_ASSIGN_OR_RAISE(auto keys, ConformToLogical(m->keys(), *mt.key_field(), mode));
      ARROW_ASSIGN_OR_RAISE(auto items, ConformToLogical(m->items(), *mt.item_field(), mode));
      return std::make_shared<arrow::MapArray>(want, m->length(), m->value_offsets(), keys, items,
                                               m->null_bitmap(), m->null_count(), m->offset());
    }
    default:
      break;
  }
  auto cast = arrow::compute::Cast(*array, want);
  if (!cast.ok()) {
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("column '{}': file type {} cannot be read as {}: {}",
                                  logical.name(), array->type()->ToString(), want->ToString(),
                                  cast.status().message()));
  }
  return *cast;
}

}  // namespace deltacpp::internal
