#include "masked_nulls.h"

#include <arrow/api.h>
#include <arrow/util/bit_util.h>

#include <string>
#include <vector>

namespace deltacpp::cli {

namespace {

// Whether a field below the top level of `type` is declared NOT NULL.
bool HasRequiredNestedField(const arrow::DataType& type) {
  for (const auto& child : type.fields()) {
    if (!child->nullable() || HasRequiredNestedField(*child->type())) return true;
  }
  return false;
}

bool OwnValid(const arrow::ArrayData& data, int64_t i) {
  return data.buffers.empty() || data.buffers[0] == nullptr ||
         arrow::bit_util::GetBit(data.buffers[0]->data(), data.offset + i);
}

// Entry `i` of the offsets buffer of a list or map array, counted from the buffer's start
// (not from the array's offset).
int64_t ListOffset(const arrow::ArrayData& data, int64_t i) {
  if (data.type->id() == arrow::Type::LARGE_LIST) return data.GetValues<int64_t>(1, 0)[i];
  return data.GetValues<int32_t>(1, 0)[i];
}

// `data` (the array of `field`) with masked nulls of NOT NULL descendants cleared; `visible[i]`
// says whether logical position i is reachable through present ancestors.
arrow::Result<std::shared_ptr<arrow::ArrayData>> Cleared(
    const std::shared_ptr<arrow::ArrayData>& data, const arrow::Field& field,
    const std::vector<bool>& visible, const std::string& path) {
  const int64_t n = data->length;
  std::vector<bool> effective(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) effective[i] = visible[i] && OwnValid(*data, i);

  auto out = data;
  auto mutable_copy = [&]() {
    if (out == data) out = data->Copy();
  };
  if (!field.nullable() && data->GetNullCount() != 0) {
    for (int64_t i = 0; i < n; ++i) {
      if (visible[i] && !OwnValid(*data, i)) {
        return arrow::Status::Invalid("field '", path, "' is declared NOT NULL but holds a null");
      }
    }
    mutable_copy();
    out->buffers[0] = nullptr;
    out->null_count = 0;
  }

  const auto id = data->type->id();
  if (id == arrow::Type::STRUCT) {
    for (int k = 0; k < data->type->num_fields(); ++k) {
      const auto& child_field = *data->type->field(k);
      if (child_field.nullable() && !HasRequiredNestedField(*child_field.type())) continue;
      const auto& child = data->child_data[k];
      // A struct's offset applies to its children.
      std::vector<bool> child_visible(static_cast<size_t>(child->length), false);
      for (int64_t i = 0; i < n; ++i) child_visible[data->offset + i] = effective[i];
      ARROW_ASSIGN_OR_RAISE(auto cleared,
                            Cleared(child, child_field, child_visible,
                                    path + "." + child_field.name()));
      if (cleared != child) {
        mutable_copy();
        out->child_data[k] = std::move(cleared);
      }
    }
  } else if (id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST || id == arrow::Type::MAP) {
    const auto& values_field = *data->type->field(0);
    const auto& values = data->child_data[0];
    std::vector<bool> values_visible(static_cast<size_t>(values->length), false);
    for (int64_t i = 0; i < n; ++i) {
      if (!effective[i]) continue;
      const int64_t begin = ListOffset(*data, data->offset + i);
      const int64_t end = ListOffset(*data, data->offset + i + 1);
      for (int64_t j = begin; j < end; ++j) values_visible[j] = true;
    }
    ARROW_ASSIGN_OR_RAISE(auto cleared,
                          Cleared(values, values_field, values_visible,
                                  path + (id == arrow::Type::MAP ? "" : ".element")));
    if (cleared != values) {
      mutable_copy();
      out->child_data[0] = std::move(cleared);
    }
  }
  return out;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> WithMaskedNullsCleared(
    const arrow::RecordBatch& batch) {
  const auto& schema = batch.schema();
  std::vector<std::shared_ptr<arrow::ArrayData>> columns;
  for (int c = 0; c < batch.num_columns(); ++c) {
    const auto& field = schema->field(c);
    auto data = batch.column_data(c);
    if (HasRequiredNestedField(*field->type())) {
      // Top-level nulls are the column's own business (the writer checks them); only the
      // nested fields are examined, so the column itself is treated as nullable here.
      const std::vector<bool> all(static_cast<size_t>(data->length), true);
      ARROW_ASSIGN_OR_RAISE(auto cleared,
                            Cleared(data, *field->WithNullable(true), all, field->name()));
      data = std::move(cleared);
    }
    columns.push_back(std::move(data));
  }
  return arrow::RecordBatch::Make(schema, batch.num_rows(), std::move(columns));
}

}  // namespace deltacpp::cli
