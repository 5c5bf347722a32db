#include "ops/data_writer_settings.h"

#include <fmt/core.h>

#include <set>

#include "deltacpp/table_config.h"
#include "protocol/schema_json.h"
#include "util/uri.h"
#include "write/stats_collector.h"

namespace deltacpp::internal {

arrow::Result<DataWriterOptions> WriterOptionsFor(const std::string& root,
                                                  const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                                  const std::shared_ptr<arrow::Schema>& schema,
                                                  const Metadata& metadata,
                                                  const std::string& compression) {
  const auto config = TableConfig::Parse(metadata.configuration);
  // These steer what is written: a malformed value is refused, never defaulted.
  const std::string context = fmt::format("table {}", root);
  for (const char* key :
       {"delta.columnMapping.mode", "delta.targetFileSize", "delta.dataSkippingNumIndexedCols",
        "delta.dataSkippingStringPrefixLength", "delta.randomizeFilePrefixes",
        "delta.randomPrefixLength", "delta.parquet.compression.codec"}) {
    ARROW_RETURN_NOT_OK(config.CheckValid(key, context));
  }
  DataWriterOptions o;
  o.table_root = root;
  o.fs = fs;
  o.table_schema = schema;
  o.partition_columns = metadata.partition_columns;
  o.column_mapping_mode = config.column_mapping_mode;
  o.target_file_size = config.target_file_size.value_or(o.target_file_size);
  o.num_indexed_cols = static_cast<int32_t>(
      std::min<int64_t>(config.data_skipping_num_indexed_cols, INT32_MAX));
  o.string_prefix_length = static_cast<int32_t>(
      std::min<int64_t>(config.data_skipping_string_prefix_length, INT32_MAX / 2));
  if (config.randomize_file_prefixes) {
    o.random_prefix_length = static_cast<int32_t>(std::min<int64_t>(config.random_prefix_length, 64));
  }
  // The write's codec, else the table's `delta.parquet.compression.codec`, else snappy.
  o.compression = compression;
  if (o.compression.empty()) o.compression = config.parquet_compression_codec.value_or("snappy");
  if (config.data_skipping_stats_columns) {
    std::vector<std::string> cols;
    size_t start = 0;
    const std::string& v = *config.data_skipping_stats_columns;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      if (comma == std::string::npos) comma = v.size();
      std::string c = v.substr(start, comma - start);
      auto b = c.find_first_not_of(' ');
      auto e = c.find_last_not_of(' ');
      if (b != std::string::npos) cols.push_back(c.substr(b, e - b + 1));
      start = comma + 1;
    }
    o.stats_columns = cols;
  }
  return o;
}

arrow::Status IndexClusteringColumns(const Snapshot& snapshot,
                                     const std::shared_ptr<arrow::Schema>& schema,
                                     DataWriterOptions* options) {
  auto domain = snapshot.domain_metadata().find("delta.clustering");
  if (domain == snapshot.domain_metadata().end() || options->stats_columns) {
    return arrow::Status::OK();
  }
  // Top-level clustering columns by physical name; nested ones are rare and left to the
  // default selection.
  std::vector<std::string> clustering;
  const std::string& conf = domain->second.configuration;
  for (const auto& f : schema->fields()) {
    const std::string quoted = "\"" + PhysicalName(*f) + "\"";
    if (conf.find(quoted) != std::string::npos) clustering.push_back(f->name());
  }
  if (clustering.empty()) return arrow::Status::OK();
  arrow::FieldVector data_fields;
  for (const auto& f : schema->fields()) {
    bool partition = false;
    for (const auto& p : options->partition_columns) partition |= EqualsIgnoreCase(p, f->name());
    if (!partition) data_fields.push_back(f);
  }
  auto data_schema = arrow::schema(data_fields);
  ARROW_ASSIGN_OR_RAISE(auto leaves, SelectStatsLeaves(*data_schema, options->num_indexed_cols,
                                                       std::nullopt, options->partition_columns));
  std::vector<std::string> names;
  std::set<std::string> covered;
  for (const auto& leaf : leaves) {
    std::string name;
    const arrow::Field* field = nullptr;
    const arrow::FieldVector* level = &data_fields;
    for (int idx : leaf.path) {
      field = (*level)[idx].get();
      name += (name.empty() ? "" : ".") + ("`" + field->name() + "`");
      level = &field->type()->fields();
    }
    names.push_back(name);
    if (leaf.path.size() == 1) covered.insert(data_fields[leaf.path[0]]->name());
  }
  bool missing = false;
  for (const auto& c : clustering) {
    if (!covered.count(c)) {
      names.push_back("`" + c + "`");
      missing = true;
    }
  }
  if (missing) options->stats_columns = names;
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
