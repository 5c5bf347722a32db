// Fuzz target: JSON Lines input of a write into an existing table (values converted to the
// table's types) and into a new one (types inferred).
#include <arrow/api.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "deltacpp/api.h"
#include "input_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string* path = [] {
    deltacpp::Initialize();
    std::string pattern = "/tmp/deltacpp-fuzz-json.XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    return new std::string(pattern + "/input.json");
  }();
  FILE* f = std::fopen(path->c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  deltacpp::cli::InputOptions options;
  options.format = "json";
  if (size % 2 == 0) {
    options.table_schema = arrow::schema(
        {arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
         arrow::field("price", arrow::decimal128(10, 2)), arrow::field("day", arrow::date32()),
         arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
         arrow::field("tags", arrow::list(arrow::utf8()))});
  }
  auto reader = deltacpp::cli::OpenInputs({*path}, options);
  if (!reader.ok()) return 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  while ((*reader)->ReadNext(&batch).ok() && batch) {
  }
  return 0;
}
