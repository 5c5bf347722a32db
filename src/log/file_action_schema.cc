#include "log/file_action_schema.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include "deltacpp/error.h"
#include "protocol/path_encoding.h"

namespace deltacpp::internal {

const std::shared_ptr<arrow::DataType>& StringMapType() {
  static const auto type = arrow::map(arrow::utf8(), arrow::utf8());
  return type;
}

const std::shared_ptr<arrow::DataType>& DeletionVectorType() {
  static const auto type = arrow::struct_({
      arrow::field("storageType", arrow::utf8()),
      arrow::field("pathOrInlineDv", arrow::utf8()),
      arrow::field("offset", arrow::int32()),
      arrow::field("sizeInBytes", arrow::int32()),
      arrow::field("cardinality", arrow::int64()),
  });
  return type;
}

const std::shared_ptr<arrow::Schema>& FileActionSchema() {
  static const auto schema = arrow::schema({
      arrow::field("path", arrow::utf8()),
      arrow::field("partitionValues", StringMapType()),
      arrow::field("size", arrow::int64()),
      arrow::field("modificationTime", arrow::int64()),
      arrow::field("dataChange", arrow::boolean()),
      arrow::field("stats", arrow::utf8()),
      arrow::field("tags", StringMapType()),
      arrow::field("deletionVector", DeletionVectorType()),
      arrow::field("baseRowId", arrow::int64()),
      arrow::field("defaultRowCommitVersion", arrow::int64()),
      arrow::field("clusteringProvider", arrow::utf8()),
  });
  return schema;
}

const std::shared_ptr<arrow::Schema>& ReplayBatchSchema() {
  static const auto schema = [] {
    auto fields = FileActionSchema()->fields();
    fields.push_back(arrow::field("_is_add", arrow::boolean()));
    fields.push_back(arrow::field("deletionTimestamp", arrow::int64()));
    return arrow::schema(fields);
  }();
  return schema;
}

namespace {

// Re-labels a map array (whatever its entry field names) as map<utf8, utf8>.
arrow::Result<std::shared_ptr<arrow::Array>> ToStringMap(const std::shared_ptr<arrow::Array>& arr) {
  if (arr->type()->id() != arrow::Type::MAP) {
    return arrow::Status::Invalid("expected a map column, got ", arr->type()->ToString());
  }
  auto map = std::static_pointer_cast<arrow::MapArray>(arr);
  auto keys = map->keys();
  auto items = map->items();
  if (keys->type_id() != arrow::Type::STRING) {
    ARROW_ASSIGN_OR_RAISE(auto k, arrow::compute::Cast(*keys, arrow::utf8()));
    keys = k;
  }
  if (items->type_id() != arrow::Type::STRING) {
    ARROW_ASSIGN_OR_RAISE(auto v, arrow::compute::Cast(*items, arrow::utf8()));
    items = v;
  }
  auto data = map->data();
  return std::make_shared<arrow::MapArray>(StringMapType(), data->length, data->buffers[1], keys,
                                           items, data->buffers[0], data->null_count,
                                           data->offset);
}

arrow::Result<std::shared_ptr<arrow::Array>> Conform(const std::shared_ptr<arrow::Array>& arr,
                                                     const std::shared_ptr<arrow::DataType>& type,
                                                     int64_t length, const std::string& field);

arrow::Result<std::shared_ptr<arrow::Array>> ConformStruct(
    const std::shared_ptr<arrow::StructArray>& arr, const std::shared_ptr<arrow::DataType>& type,
    const std::string& field) {
  // Children are taken unsliced so they line up with the struct's own offset and validity.
  auto data = arr->data();
  const int64_t full_length = data->offset + data->length;
  std::vector<std::shared_ptr<arrow::Array>> children;
  for (const auto& f : type->fields()) {
    int idx = static_cast<const arrow::StructType&>(*arr->type()).GetFieldIndex(f->name());
    std::shared_ptr<arrow::Array> child;
    if (idx >= 0) child = arrow::MakeArray(data->child_data[idx]);
    ARROW_ASSIGN_OR_RAISE(auto c, Conform(child, f->type(), full_length, field + "." + f->name()));
    children.push_back(std::move(c));
  }
  return std::make_shared<arrow::StructArray>(type, data->length, children, data->buffers[0],
                                              data->null_count, data->offset);
}

arrow::Result<std::shared_ptr<arrow::Array>> Conform(const std::shared_ptr<arrow::Array>& arr,
                                                     const std::shared_ptr<arrow::DataType>& type,
                                                     int64_t length, const std::string& field) {
  if (!arr) return arrow::MakeArrayOfNull(type, length);
  if (arr->type()->Equals(*type)) return arr;
  if (type->id() == arrow::Type::MAP) return ToStringMap(arr);
  if (type->id() == arrow::Type::STRUCT && arr->type_id() == arrow::Type::STRUCT) {
    return ConformStruct(std::static_pointer_cast<arrow::StructArray>(arr), type, field);
  }
  // An integer field is only taken from an integer column: a float or string one would be
  // rounded or parsed. The cast is a checked one, so a value beyond the field's width fails.
  if (arrow::is_integer(type->id()) && !arrow::is_integer(arr->type_id())) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("column {} has type {}, not an integer type", field,
                                  arr->type()->ToString()));
  }
  auto cast = arrow::compute::Cast(*arr, type);
  if (!cast.ok()) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("column {} of type {} does not fit {}: {}", field,
                                  arr->type()->ToString(), type->ToString(),
                                  cast.status().message()));
  }
  return cast.MoveValueUnsafe();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> NormalizeCheckpointFileActions(
    const std::shared_ptr<arrow::StructArray>& actions, std::string_view action) {
  const auto& schema = FileActionSchema();
  std::vector<std::shared_ptr<arrow::Array>> columns;
  columns.reserve(schema->num_fields());
  // Struct children do not carry the parent's validity: a null struct row may have arbitrary
  // child values, so callers must filter on the struct's validity (path is always set in a
  // valid add).
  for (const auto& f : schema->fields()) {
    std::shared_ptr<arrow::Array> child = actions->GetFieldByName(f->name());  // sliced
    ARROW_ASSIGN_OR_RAISE(auto c, Conform(child, f->type(), actions->length(),
                                          std::string(action) + "." + f->name()));
    columns.push_back(std::move(c));
  }
  return arrow::RecordBatch::Make(schema, actions->length(), std::move(columns));
}

std::map<std::string, std::optional<std::string>> PartitionValuesAt(const arrow::RecordBatch& batch,
                                                                    int64_t row) {
  std::map<std::string, std::optional<std::string>> out;
  const auto& pvs = static_cast<const arrow::MapArray&>(*batch.column(kPartitionValuesCol));
  if (pvs.IsNull(row)) return out;
  const auto& keys = static_cast<const arrow::StringArray&>(*pvs.keys());
  const auto& items = static_cast<const arrow::StringArray&>(*pvs.items());
  for (int64_t j = pvs.value_offset(row); j < pvs.value_offset(row + 1); ++j) {
    std::optional<std::string> v;
    if (items.IsValid(j)) v = std::string(items.GetView(j));
    out.emplace(std::string(keys.GetView(j)), std::move(v));
  }
  return out;
}

std::string FileActionKey(const arrow::RecordBatch& batch, int64_t i,
                          std::string_view table_root) {
  const auto& paths = static_cast<const arrow::StringArray&>(*batch.column(kPathCol));
  const auto& dv = static_cast<const arrow::StructArray&>(*batch.column(kDeletionVectorCol));
  std::string key = CanonicalFilePath(paths.GetView(i), table_root);
  if (dv.IsValid(i)) {
    const auto& storage = static_cast<const arrow::StringArray&>(*dv.field(kDvStorageType));
    const auto& where = static_cast<const arrow::StringArray&>(*dv.field(kDvPathOrInlineDv));
    const auto& offset = static_cast<const arrow::Int32Array&>(*dv.field(kDvOffset));
    key.push_back('\0');
    if (storage.IsValid(i)) key.append(storage.GetView(i));
    if (where.IsValid(i)) key.append(where.GetView(i));
    if (offset.IsValid(i)) key.append("@" + std::to_string(offset.Value(i)));
  }
  return key;
}

}  // namespace deltacpp::internal
