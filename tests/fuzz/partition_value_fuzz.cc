// Fuzz target: partition value text of every type. A value that parses must serialize, and the
// serialized text must parse back to an equal value.
#include <arrow/api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/partition_values.h"

namespace {

const std::vector<std::shared_ptr<arrow::DataType>>& Types() {
  static const auto* types = new std::vector<std::shared_ptr<arrow::DataType>>{
      arrow::int8(), arrow::int16(), arrow::int32(), arrow::int64(), arrow::boolean(),
      arrow::float32(), arrow::float64(), arrow::utf8(), arrow::binary(), arrow::date32(),
      arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::timestamp(arrow::TimeUnit::MICRO),
      arrow::decimal128(10, 2), arrow::decimal128(38, 18), arrow::decimal128(5, 0)};
  return *types;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace deltacpp::internal;  // NOLINT(build/namespaces)
  if (size == 0) return 0;
  const auto& type = Types()[data[0] % Types().size()];
  std::optional<std::string_view> raw;
  if (data[0] < 0xF0) raw = std::string_view(reinterpret_cast<const char*>(data + 1), size - 1);
  auto scalar = ParsePartitionValue(raw, type);
  if (!scalar.ok()) return 0;
  auto text = SerializePartitionValue(**scalar);
  if (!text.ok()) return 0;
  std::optional<std::string_view> again;
  if (*text) again = **text;
  auto reread = ParsePartitionValue(again, type);
  if (!reread.ok() ||
      !(*reread)->Equals(**scalar, arrow::EqualOptions::Defaults().nans_equal(true))) {
    std::fprintf(stderr, "%s value does not survive a write and a read: %s -> '%s' -> %s\n",
                 type->ToString().c_str(), (*scalar)->ToString().c_str(),
                 text->value_or("<null>").c_str(),
                 reread.ok() ? (*reread)->ToString().c_str() : reread.status().ToString().c_str());
    std::abort();
  }
  return 0;
}
