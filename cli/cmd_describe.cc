// `deltacpp describe`: version, schema, partitioning, protocol, features, properties, size.
#include <arrow/api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/schema.h"

namespace deltacpp::cli {

namespace {

struct DescribeArgs {
  std::string path;
  std::optional<int64_t> version;
  OutputChoice out;
};

arrow::Status Run(const DescribeArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  ARROW_ASSIGN_OR_RAISE(auto snap, table->SnapshotAt(args.version));
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("location", snap->table_root());
  rows.emplace_back("version", std::to_string(snap->version()));
  rows.emplace_back("id", snap->metadata().id);
  if (snap->metadata().name) rows.emplace_back("name", *snap->metadata().name);
  if (snap->metadata().description) rows.emplace_back("description", *snap->metadata().description);
  for (const auto& f : snap->schema()->fields()) {
    rows.emplace_back("column " + f->name(),
                      DeltaTypeName(*f->type()) + (f->nullable() ? "" : " NOT NULL"));
  }
  rows.emplace_back("partition columns", fmt::format("{}", fmt::join(snap->partition_columns(), ", ")));
  rows.emplace_back("min reader version", std::to_string(snap->protocol().min_reader_version));
  rows.emplace_back("min writer version", std::to_string(snap->protocol().min_writer_version));
  rows.emplace_back("table features", fmt::format("{}", fmt::join(snap->table_features(), ", ")));
  for (const auto& [k, v] : snap->properties()) rows.emplace_back("property " + k, v);
  rows.emplace_back("number of files", std::to_string(snap->num_files()));
  rows.emplace_back("size in bytes", std::to_string(snap->total_size_bytes()));
  arrow::StringBuilder keys, values;
  for (const auto& [k, v] : rows) {
    ARROW_RETURN_NOT_OK(keys.Append(k));
    ARROW_RETURN_NOT_OK(values.Append(v));
  }
  std::shared_ptr<arrow::Array> k, v;
  ARROW_RETURN_NOT_OK(keys.Finish(&k));
  ARROW_RETURN_NOT_OK(values.Finish(&v));
  auto schema = arrow::schema({arrow::field("property", arrow::utf8()),
                               arrow::field("value", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, k->length(), {k, v});
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::RecordBatchReader::Make({batch}, schema));
  return args.out.Write(*reader);
}

}  // namespace

Action AddDescribeCommand(CLI::App& app) {
  auto args = std::make_shared<DescribeArgs>();
  auto* cmd = app.add_subcommand("describe", "Describe a table version");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--version", args->version, "Version (default: latest)");
  args->out.AddOptions(cmd, false);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
