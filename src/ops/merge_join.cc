#include "ops/merge_join.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace deltacpp::internal {

namespace {

template <typename T>
void AppendBytes(T value, std::string* out) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

// Appends the encoding of `array[row]` to `out`; false for a NULL.
bool AppendKey(const arrow::Array& array, int64_t row, std::string* out) {
  if (array.IsNull(row)) return false;
  switch (array.type_id()) {
    case arrow::Type::BOOL:
      out->push_back(static_cast<const arrow::BooleanArray&>(array).Value(row) ? 1 : 0);
      return true;
    case arrow::Type::FLOAT: {
      float v = static_cast<const arrow::FloatArray&>(array).Value(row);
      if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
      if (v == 0) v = 0;  // -0.0 equals 0.0
      AppendBytes(v, out);
      return true;
    }
    case arrow::Type::DOUBLE: {
      double v = static_cast<const arrow::DoubleArray&>(array).Value(row);
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      if (v == 0) v = 0;
      AppendBytes(v, out);
      return true;
    }
    case arrow::Type::STRING:
    case arrow::Type::BINARY: {
      auto view = static_cast<const arrow::BinaryArray&>(array).GetView(row);
      AppendBytes(static_cast<uint64_t>(view.size()), out);
      out->append(view.data(), view.size());
      return true;
    }
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: {
      auto view = static_cast<const arrow::LargeBinaryArray&>(array).GetView(row);
      AppendBytes(static_cast<uint64_t>(view.size()), out);
      out->append(view.data(), view.size());
      return true;
    }
    default: {
      // Fixed-width values: their bytes.
      const auto& fixed = static_cast<const arrow::FixedWidthType&>(*array.type());
      const int width = fixed.bit_width() / 8;
      const uint8_t* data = array.data()->buffers[1]->data();
      out->append(reinterpret_cast<const char*>(data + (array.offset() + row) * width), width);
      return true;
    }
  }
}

// The key of every row (nullopt for a row with a NULL key).
arrow::Status EncodeKeys(const std::vector<std::shared_ptr<arrow::Array>>& keys, int64_t num_rows,
                         const std::function<void(int64_t, const std::string*)>& each) {
  for (const auto& k : keys) {
    if (k->length() != num_rows) {
      return arrow::Status::Invalid("join key column has ", k->length(), " values for ",
                                    num_rows, " rows");
    }
    if (!IsJoinKeyType(*k->type())) {
      return arrow::Status::NotImplemented("join keys of type ", k->type()->ToString());
    }
  }
  std::string key;
  for (int64_t row = 0; row < num_rows; ++row) {
    key.clear();
    bool valid = true;
    for (const auto& k : keys) {
      if (!AppendKey(*k, row, &key)) {
        valid = false;
        break;
      }
    }
    each(row, valid ? &key : nullptr);
  }
  return arrow::Status::OK();
}

}  // namespace

bool IsJoinKeyType(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return true;
    default:
      return false;
  }
}

arrow::Result<JoinKeyIndex> JoinKeyIndex::Build(
    const std::vector<std::shared_ptr<arrow::Array>>& keys, int64_t num_rows) {
  JoinKeyIndex index;
  index.next_.assign(num_rows, -1);
  std::unordered_map<std::string, int64_t> last_of;  // key -> its last row so far
  ARROW_RETURN_NOT_OK(EncodeKeys(keys, num_rows, [&](int64_t row, const std::string* key) {
    if (!key) return;
    ++index.num_indexed_;
    auto [it, inserted] = last_of.try_emplace(*key, row);
    if (inserted) {
      index.first_.emplace(*key, row);
    } else {
      index.next_[it->second] = row;
      it->second = row;
    }
  }));
  return index;
}

arrow::Status JoinKeyIndex::Probe(const std::vector<std::shared_ptr<arrow::Array>>& keys,
                                  int64_t num_rows,
                                  const std::function<void(int64_t, int64_t)>& emit) const {
  return EncodeKeys(keys, num_rows, [&](int64_t row, const std::string* key) {
    if (!key) return;
    auto it = first_.find(*key);
    if (it == first_.end()) return;
    for (int64_t r = it->second; r >= 0; r = next_[r]) emit(row, r);
  });
}

}  // namespace deltacpp::internal
