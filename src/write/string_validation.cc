#include "write/string_validation.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>

#include "deltacpp/error.h"
#include "util/utf8.h"

namespace deltacpp::internal {

namespace {

// The first value of a column (by index in the array) holding a string that is not valid
// UTF-8, with the leaf it sits in.
struct BadValue {
  int64_t index = 0;
  std::string leaf;         // path below the array, empty for the array itself
  std::string_view value;   // the offending string
};

bool ContainsStrings(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      return true;
    default:
      for (const auto& f : type.fields()) {
        if (ContainsStrings(*f->type())) return true;
      }
      return false;
  }
}

// True when every value in [begin, end) of an offsets-based array is valid UTF-8, checked in
// one pass over the bytes they occupy: when those bytes are valid UTF-8 and no value starts
// inside a character, every value is a run of whole, valid characters. False means some value
// (or a null slot's bytes) is not, or a value starts mid-character.
template <typename ArrayType>
bool AllValuesValid(const ArrayType& strings, int64_t begin, int64_t end) {
  const auto* data = reinterpret_cast<const char*>(strings.raw_data());
  const auto first = strings.value_offset(begin);
  const auto last = strings.value_offset(end);
  if (first == last) return true;  // only empty values (and null slots without bytes)
  if (!IsValidUtf8(std::string_view(data + first, static_cast<size_t>(last - first)))) {
    return false;
  }
  for (int64_t i = begin; i < end; ++i) {
    const auto at = strings.value_offset(i);
    if (at < last && (static_cast<unsigned char>(data[at]) & 0xC0) == 0x80) return false;
  }
  return true;
}

template <typename ArrayType>
std::optional<BadValue> FirstBadString(const arrow::Array& array, int64_t begin, int64_t end) {
  const auto& strings = static_cast<const ArrayType&>(array);
  if constexpr (!std::is_same_v<ArrayType, arrow::StringViewArray> &&
                !std::is_same_v<ArrayType, arrow::BinaryViewArray>) {
    if (AllValuesValid(strings, begin, end)) return std::nullopt;
  }
  for (int64_t i = begin; i < end; ++i) {
    if (strings.IsNull(i)) continue;
    const std::string_view value = strings.GetView(i);
    if (!IsValidUtf8(value)) return BadValue{i, {}, value};
  }
  return std::nullopt;
}

std::string Child(std::string_view name, const std::string& below) {
  return below.empty() ? std::string(name) : fmt::format("{}.{}", name, below);
}

std::optional<BadValue> FirstBad(const arrow::Array& array, int64_t begin, int64_t end);

// The first bad value among the elements [begin, end) of a list-like array, reported at the
// element's list index. Elements of null lists are skipped.
template <typename ListType>
std::optional<BadValue> FirstBadInList(const ListType& list, int64_t begin, int64_t end,
                                       std::string_view element_name) {
  const auto& values = *list.values();
  int64_t from = list.value_offset(begin);
  const int64_t to = list.value_offset(end);
  while (from < to) {
    auto bad = FirstBad(values, from, to);
    if (!bad) return std::nullopt;
    // The list holding that element: the last one that starts at or before it.
    int64_t lo = begin, hi = end;  // invariant: value_offset(lo) <= bad->index
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (list.value_offset(mid) <= bad->index) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    if (!list.IsNull(lo)) {
      const bool is_map = list.type_id() == arrow::Type::MAP;
      return BadValue{lo, is_map ? bad->leaf : Child(element_name, bad->leaf), bad->value};
    }
    from = list.value_offset(lo + 1);
  }
  return std::nullopt;
}

std::optional<BadValue> FirstBad(const arrow::Array& array, int64_t begin, int64_t end) {
  if (begin >= end || !ContainsStrings(*array.type())) return std::nullopt;
  switch (array.type_id()) {
    case arrow::Type::STRING:
      return FirstBadString<arrow::StringArray>(array, begin, end);
    case arrow::Type::LARGE_STRING:
      return FirstBadString<arrow::LargeStringArray>(array, begin, end);
    case arrow::Type::STRING_VIEW:
      return FirstBadString<arrow::StringViewArray>(array, begin, end);
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      std::optional<BadValue> first;
      for (int j = 0; j < s.num_fields(); ++j) {
        const auto child = s.field(j);  // sliced like the struct
        const int64_t stop = first ? first->index : end;  // only earlier rows can win
        int64_t from = begin;
        while (from < stop) {
          auto bad = FirstBad(*child, from, stop);
          if (!bad) break;
          if (s.IsNull(bad->index)) {
            from = bad->index + 1;
            continue;
          }
          first = BadValue{bad->index, Child(s.type()->field(j)->name(), bad->leaf), bad->value};
          break;
        }
      }
      return first;
    }
    case arrow::Type::LIST:
      return FirstBadInList(static_cast<const arrow::ListArray&>(array), begin, end, "element");
    case arrow::Type::LARGE_LIST:
      return FirstBadInList(static_cast<const arrow::LargeListArray&>(array), begin, end,
                            "element");
    case arrow::Type::FIXED_SIZE_LIST:
      return FirstBadInList(static_cast<const arrow::FixedSizeListArray&>(array), begin, end,
                            "element");
    case arrow::Type::MAP:
      // Map entries are structs of `key` and `value`, which name the leaf.
      return FirstBadInList(static_cast<const arrow::MapArray&>(array), begin, end, "");
    default:
      return std::nullopt;
  }
}

// Binary values that must be text: those of binary partition columns.
std::optional<BadValue> FirstBadBinary(const arrow::Array& array, int64_t begin, int64_t end) {
  switch (array.type_id()) {
    case arrow::Type::BINARY:
      return FirstBadString<arrow::BinaryArray>(array, begin, end);
    case arrow::Type::LARGE_BINARY:
      return FirstBadString<arrow::LargeBinaryArray>(array, begin, end);
    case arrow::Type::BINARY_VIEW:
      return FirstBadString<arrow::BinaryViewArray>(array, begin, end);
    default:
      return std::nullopt;
  }
}

}  // namespace

arrow::Status CheckStringsAreUtf8(const arrow::RecordBatch& batch, int64_t rows_before,
                                  std::string_view context,
                                  const std::vector<std::string>& partition_columns) {
  auto first_bad = [&](int column, int64_t end) {
    const auto& name = batch.schema()->field(column)->name();
    for (const auto& p : partition_columns) {
      if (p == name) {
        if (auto bad = FirstBadBinary(*batch.column(column), 0, end)) return bad;
      }
    }
    return FirstBad(*batch.column(column), 0, end);
  };
  for (int i = 0; i < batch.num_columns(); ++i) {
    auto bad = first_bad(i, batch.num_rows());
    if (!bad) continue;
    // Report the earliest row over all columns, as a reader of the input would meet it.
    int column = i;
    for (int k = i + 1; k < batch.num_columns(); ++k) {
      if (auto other = first_bad(k, bad->index)) {
        column = k;
        bad = other;
      }
    }
    const auto& field = *batch.schema()->field(column);
    const bool text = ContainsStrings(*field.type());
    return DeltaError(
        DeltaErrorCode::kSchemaMismatch,
        fmt::format("{}column '{}' row {} of the write: the {} is not valid UTF-8 ({}); {}",
                    context, Child(field.name(), bad->leaf), rows_before + bad->index + 1,
                    text ? "string" : "binary partition value", DescribeInvalidUtf8(bad->value),
                    text ? "string columns hold UTF-8 text (use a binary column for other bytes)"
                         : "partition values are written to the log as text"));
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
