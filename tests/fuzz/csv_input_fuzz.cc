// Fuzz target: CSV input of a write, read against a table schema of common types (values are
// converted to the table's types; errors name column and line).
#include <arrow/api.h>
#include <arrow/io/memory.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "csv_input.h"
#include "deltacpp/api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* schema = [] {
    deltacpp::Initialize();
    return new std::shared_ptr<arrow::Schema>(arrow::schema(
        {arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
         arrow::field("price", arrow::decimal128(10, 2)), arrow::field("day", arrow::date32()),
         arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
         arrow::field("ok", arrow::boolean()), arrow::field("d", arrow::float64())}));
  }();
  deltacpp::cli::CsvInputOptions options;
  options.header = (size % 2) == 0;  // both modes from one corpus
  if (!options.header) {
    for (const auto& f : (*schema)->fields()) options.column_names.push_back(f->name());
  }
  options.types = *schema;
  options.table_schema = *schema;
  auto buffer = std::make_shared<arrow::Buffer>(data, static_cast<int64_t>(size));
  auto stream = std::make_shared<arrow::io::BufferReader>(buffer);
  auto reader = deltacpp::cli::OpenCsvInput(stream, "fuzz.csv", options);
  if (!reader.ok()) return 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  while ((*reader)->ReadNext(&batch).ok() && batch) {
  }
  return 0;
}
