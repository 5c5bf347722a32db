#include "ops/merge_join.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

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

// A 64-bit mix of `x` whose every bit depends on every bit of `x` (the finalizer of the
// MurmurHash3 family): the slot index takes the low bits.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Bytes of a fixed-width key column's value in a packed key; 0 for a type without a fixed
// width (strings, binaries).
int PackedWidth(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
      return 1;
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return 0;
    default:
      return static_cast<const arrow::FixedWidthType&>(type).bit_width() / 8;
  }
}

// The value bits of fixed-width `array[row]` (floating point normalised), as a word.
uint64_t ValueBits(const arrow::Array& array, int64_t row, int width) {
  switch (array.type_id()) {
    case arrow::Type::BOOL:
      return static_cast<const arrow::BooleanArray&>(array).Value(row) ? 1 : 0;
    case arrow::Type::FLOAT: {
      float v = static_cast<const arrow::FloatArray&>(array).Value(row);
      if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
      if (v == 0) v = 0;
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      return bits;
    }
    case arrow::Type::DOUBLE: {
      double v = static_cast<const arrow::DoubleArray&>(array).Value(row);
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      if (v == 0) v = 0;
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      return bits;
    }
    default: {
      uint64_t bits = 0;
      const uint8_t* data = array.data()->buffers[1]->data();
      std::memcpy(&bits, data + (array.offset() + row) * width, width);
      return bits;
    }
  }
}

template <typename T>
void PackPlain(const arrow::Array& array, int shift, uint64_t* words) {
  const T* values = array.data()->GetValues<T>(1);
  for (int64_t row = 0; row < array.length(); ++row) {
    words[row] |= static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(values[row]))
                  << shift;
  }
}

// ORs the bits of every value of `array` into `words`, `shift` bits up.
void PackColumn(const arrow::Array& array, int width, int shift, uint64_t* words) {
  // Plain integers of the common widths: a tight loop over the values.
  switch (array.type_id()) {
    case arrow::Type::INT64:
    case arrow::Type::UINT64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DATE64:
    case arrow::Type::TIME64:
      return PackPlain<int64_t>(array, shift, words);
    case arrow::Type::INT32:
    case arrow::Type::UINT32:
    case arrow::Type::DATE32:
    case arrow::Type::TIME32:
      return PackPlain<int32_t>(array, shift, words);
    default:
      for (int64_t row = 0; row < array.length(); ++row) {
        words[row] |= ValueBits(array, row, width) << shift;
      }
  }
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

struct JoinKeyIndex::Encoded {
  std::vector<uint64_t> words;   ///< per row: the packed key, or the hash of the encoded key
  std::vector<uint8_t> valid;    ///< per row: 0 when a key is NULL
  std::vector<int64_t> offsets;  ///< byte form: row -> start of its key in `bytes` (n + 1)
  std::string bytes;
};

arrow::Status JoinKeyIndex::Encode(const std::vector<std::shared_ptr<arrow::Array>>& keys,
                                   int64_t num_rows, bool packed, Encoded* out) {
  for (const auto& k : keys) {
    if (k->length() != num_rows) {
      return arrow::Status::Invalid("join key column has ", k->length(), " values for ",
                                    num_rows, " rows");
    }
    if (!IsJoinKeyType(*k->type())) {
      return arrow::Status::NotImplemented("join keys of type ", k->type()->ToString());
    }
  }
  out->words.assign(num_rows, 0);
  out->valid.assign(num_rows, 1);
  for (const auto& k : keys) {
    if (k->null_count() == 0) continue;
    for (int64_t row = 0; row < num_rows; ++row) {
      if (k->IsNull(row)) out->valid[row] = 0;
    }
  }
  if (packed) {
    int shift = 0;
    for (const auto& k : keys) {
      const int width = PackedWidth(*k->type());
      PackColumn(*k, width, shift, out->words.data());
      shift += 8 * width;
    }
    return arrow::Status::OK();
  }
  out->offsets.resize(num_rows + 1);
  out->bytes.clear();
  for (int64_t row = 0; row < num_rows; ++row) {
    out->offsets[row] = static_cast<int64_t>(out->bytes.size());
    if (!out->valid[row]) continue;
    for (const auto& k : keys) AppendKey(*k, row, &out->bytes);
    const std::string_view key(out->bytes.data() + out->offsets[row],
                               out->bytes.size() - out->offsets[row]);
    out->words[row] = Mix(std::hash<std::string_view>{}(key));
  }
  out->offsets[num_rows] = static_cast<int64_t>(out->bytes.size());
  return arrow::Status::OK();
}

uint64_t JoinKeyIndex::HashOf(uint64_t word) const { return packed_ ? Mix(word) : word; }

size_t JoinKeyIndex::Find(uint64_t word, std::string_view bytes) const {
  size_t i = HashOf(word) & mask_;
  for (;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.first < 0) return i;
    if (slot.key != word) continue;
    if (packed_) return i;
    const int64_t b = key_offsets_[slot.first];
    const std::string_view other(key_bytes_.data() + b,
                                 static_cast<size_t>(key_offsets_[slot.first + 1] - b));
    if (bytes == other) return i;
  }
}

std::string_view JoinKeyIndex::BytesOf(const Encoded& batch, int64_t row) {
  if (batch.offsets.empty()) return {};
  return std::string_view(batch.bytes.data() + batch.offsets[row],
                          static_cast<size_t>(batch.offsets[row + 1] - batch.offsets[row]));
}

arrow::Result<JoinKeyIndex> JoinKeyIndex::Build(
    const std::vector<std::shared_ptr<arrow::Array>>& keys, int64_t num_rows) {
  JoinKeyIndex index;
  int width = 0;
  for (const auto& k : keys) {
    const int w = PackedWidth(*k->type());
    width = (w == 0 || width < 0) ? -1 : width + w;
  }
  index.packed_ = width >= 0 && width <= 8;
  Encoded encoded;
  ARROW_RETURN_NOT_OK(Encode(keys, num_rows, index.packed_, &encoded));
  size_t capacity = 16;
  while (capacity < 2 * static_cast<size_t>(num_rows)) capacity *= 2;
  index.slots_.assign(capacity, Slot{0, -1});
  index.mask_ = capacity - 1;
  index.next_.assign(num_rows, -1);
  if (!index.packed_) {
    index.key_offsets_ = std::move(encoded.offsets);
    index.key_bytes_ = std::move(encoded.bytes);
  }
  // A bit per word of the filter, set for every indexed key's hash: most probes of keys the
  // source lacks stop at one bit of a small array instead of a slot of the large table.
  size_t filter_bits = 64;
  while (filter_bits < 8 * static_cast<size_t>(num_rows)) filter_bits *= 2;
  index.filter_.assign(filter_bits / 64, 0);
  index.filter_mask_ = filter_bits - 1;
  // Rows go in last to first, each at the head of its key's chain: chains in row order.
  for (int64_t row = num_rows - 1; row >= 0; --row) {
    if (!encoded.valid[row]) continue;
    ++index.num_indexed_;
    std::string_view bytes;
    if (!index.packed_) {
      bytes = std::string_view(index.key_bytes_.data() + index.key_offsets_[row],
                               static_cast<size_t>(index.key_offsets_[row + 1] -
                                                   index.key_offsets_[row]));
    }
    const uint64_t hash = index.HashOf(encoded.words[row]);
    index.filter_[(hash >> 32 & index.filter_mask_) / 64] |= uint64_t{1} << ((hash >> 32) % 64);
    Slot& slot = index.slots_[index.Find(encoded.words[row], bytes)];
    if (slot.first >= 0) index.next_[row] = slot.first;
    slot = Slot{encoded.words[row], row};
  }
  return index;
}

arrow::Status JoinKeyIndex::Probe(const std::vector<std::shared_ptr<arrow::Array>>& keys,
                                  int64_t num_rows,
                                  const std::function<void(int64_t, int64_t)>& emit) const {
  Encoded encoded;
  ARROW_RETURN_NOT_OK(Encode(keys, num_rows, packed_, &encoded));
  // The table is larger than the caches when the source is large: fetch the slot of a row a
  // few rows ahead while this one is looked up (and the filter rules most misses out).
  constexpr int64_t kAhead = 16;
  for (int64_t row = 0; row < num_rows; ++row) {
    if (row + kAhead < num_rows) {
      __builtin_prefetch(&slots_[HashOf(encoded.words[row + kAhead]) & mask_]);
    }
    if (!encoded.valid[row]) continue;
    const uint64_t hash = HashOf(encoded.words[row]);
    if (!(filter_[(hash >> 32 & filter_mask_) / 64] >> ((hash >> 32) % 64) & 1)) continue;
    const Slot& slot = slots_[Find(encoded.words[row], BytesOf(encoded, row))];
    for (int64_t r = slot.first; r >= 0; r = next_[r]) emit(row, r);
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
