// `deltacpp describe`: version and schema, then every fact of DESCRIBE DETAIL (format, id,
// name, description, dates, partitioning, clustering, protocol, features, properties, size).
#include <arrow/api.h>
#include <fmt/chrono.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/describe_detail.h"
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
  ARROW_ASSIGN_OR_RAISE(auto d, DescribeDetail(*snap));
  auto iso = [](int64_t ms) {  // 2026-01-31T12:00:00.123Z, as DESCRIBE DETAIL shows it
    const int64_t seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                       std::chrono::sys_seconds(std::chrono::seconds(seconds)),
                       ms - seconds * 1000);
  };
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("location", snap->table_root());
  rows.emplace_back("version", std::to_string(snap->version()));
  rows.emplace_back("format", d.format);
  rows.emplace_back("id", d.id);
  if (d.name) rows.emplace_back("name", *d.name);
  if (d.description) rows.emplace_back("description", *d.description);
  if (d.created_at_ms) rows.emplace_back("created at", iso(*d.created_at_ms));
  rows.emplace_back("last modified", iso(d.last_modified_ms));
  for (const auto& f : snap->schema()->fields()) {
    rows.emplace_back("column " + f->name(),
                      DeltaTypeName(*f->type()) + (f->nullable() ? "" : " NOT NULL"));
  }
  rows.emplace_back("partition columns", fmt::format("{}", fmt::join(d.partition_columns, ", ")));
  if (!d.clustering_columns.empty()) {
    rows.emplace_back("clustering columns",
                      fmt::format("{}", fmt::join(d.clustering_columns, ", ")));
  }
  rows.emplace_back("min reader version", std::to_string(d.min_reader_version));
  rows.emplace_back("min writer version", std::to_string(d.min_writer_version));
  rows.emplace_back("table features", fmt::format("{}", fmt::join(d.table_features, ", ")));
  for (const auto& [k, v] : d.properties) rows.emplace_back("property " + k, v);
  rows.emplace_back("number of files", std::to_string(d.num_files));
  rows.emplace_back("size in bytes", std::to_string(d.size_in_bytes));
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
