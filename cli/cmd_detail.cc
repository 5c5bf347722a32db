// `deltacpp detail`: delta-spark's DESCRIBE DETAIL columns, one row.
#include <arrow/api.h>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/describe_detail.h"

namespace deltacpp::cli {

namespace {

struct DetailArgs {
  std::string path;
  std::optional<int64_t> version;
  OutputChoice out;
};

arrow::Result<std::shared_ptr<arrow::Array>> Text(const std::optional<std::string>& value) {
  arrow::StringBuilder b;
  ARROW_RETURN_NOT_OK(value ? b.Append(*value) : b.AppendNull());
  return b.Finish();
}

arrow::Result<std::shared_ptr<arrow::Array>> Millis(const std::optional<int64_t>& value) {
  arrow::TimestampBuilder b(arrow::timestamp(arrow::TimeUnit::MILLI, "UTC"),
                            arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(value ? b.Append(*value) : b.AppendNull());
  return b.Finish();
}

arrow::Result<std::shared_ptr<arrow::Array>> Texts(const std::vector<std::string>& values) {
  auto items = std::make_shared<arrow::StringBuilder>();
  arrow::ListBuilder b(arrow::default_memory_pool(), items);
  ARROW_RETURN_NOT_OK(b.Append());
  for (const auto& v : values) ARROW_RETURN_NOT_OK(items->Append(v));
  return b.Finish();
}

arrow::Result<std::shared_ptr<arrow::Array>> Pairs(const std::map<std::string, std::string>& m) {
  auto keys = std::make_shared<arrow::StringBuilder>();
  auto items = std::make_shared<arrow::StringBuilder>();
  arrow::MapBuilder b(arrow::default_memory_pool(), keys, items);
  ARROW_RETURN_NOT_OK(b.Append());
  for (const auto& [k, v] : m) {
    ARROW_RETURN_NOT_OK(keys->Append(k));
    ARROW_RETURN_NOT_OK(items->Append(v));
  }
  return b.Finish();
}

arrow::Result<std::shared_ptr<arrow::Array>> Number(int64_t value) {
  arrow::Int64Builder b;
  ARROW_RETURN_NOT_OK(b.Append(value));
  return b.Finish();
}

arrow::Status Run(const DetailArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  ARROW_ASSIGN_OR_RAISE(auto snap, table->SnapshotAt(args.version));
  ARROW_ASSIGN_OR_RAISE(auto d, DescribeDetail(*snap));
  std::vector<std::pair<std::string, arrow::Result<std::shared_ptr<arrow::Array>>>> columns = {
      {"format", Text(d.format)},
      {"id", Text(d.id)},
      {"name", Text(d.name)},
      {"description", Text(d.description)},
      {"location", Text(d.location)},
      {"createdAt", Millis(d.created_at_ms)},
      {"lastModified", Millis(d.last_modified_ms)},
      {"partitionColumns", Texts(d.partition_columns)},
      {"clusteringColumns", Texts(d.clustering_columns)},
      {"numFiles", Number(d.num_files)},
      {"sizeInBytes", Number(d.size_in_bytes)},
      {"properties", Pairs(d.properties)},
      {"minReaderVersion", Number(d.min_reader_version)},
      {"minWriterVersion", Number(d.min_writer_version)},
      {"tableFeatures", Texts(d.table_features)},
  };
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (auto& [name, array] : columns) {
    ARROW_RETURN_NOT_OK(array.status());
    fields.push_back(arrow::field(name, (*array)->type()));
    arrays.push_back(*array);
  }
  auto schema = arrow::schema(fields);
  auto batch = arrow::RecordBatch::Make(schema, 1, arrays);
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::RecordBatchReader::Make({batch}, schema));
  return args.out.Write(*reader);
}

}  // namespace

Action AddDetailCommand(CLI::App& app) {
  auto args = std::make_shared<DetailArgs>();
  auto* cmd = app.add_subcommand("detail", "DESCRIBE DETAIL: the table's facts in one row");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--version", args->version, "Version (default: latest)");
  args->out.AddOptions(cmd, false);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
