// `deltacpp history`: the commits of a table, newest first.
#include <arrow/api.h>

#include "commands.h"
#include "deltacpp/api.h"

namespace deltacpp::cli {

namespace {

struct HistoryArgs {
  std::string path;
  OutputChoice out;
};

arrow::Status Run(const HistoryArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  ARROW_ASSIGN_OR_RAISE(auto entries, table->History(args.out.limit));
  arrow::Int64Builder version;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MILLI, "UTC"),
                             arrow::default_memory_pool());
  arrow::StringBuilder op, params, metrics;
  for (const auto& e : entries) {
    ARROW_RETURN_NOT_OK(version.Append(e.version));
    ARROW_RETURN_NOT_OK(ts.Append(e.timestamp_ms));
    ARROW_RETURN_NOT_OK(e.operation ? op.Append(*e.operation) : op.AppendNull());
    ARROW_RETURN_NOT_OK(params.Append(e.operation_parameters));
    ARROW_RETURN_NOT_OK(metrics.Append(e.operation_metrics));
  }
  std::vector<std::shared_ptr<arrow::Array>> cols(5);
  ARROW_RETURN_NOT_OK(version.Finish(&cols[0]));
  ARROW_RETURN_NOT_OK(ts.Finish(&cols[1]));
  ARROW_RETURN_NOT_OK(op.Finish(&cols[2]));
  ARROW_RETURN_NOT_OK(params.Finish(&cols[3]));
  ARROW_RETURN_NOT_OK(metrics.Finish(&cols[4]));
  auto schema = arrow::schema({arrow::field("version", arrow::int64()),
                               arrow::field("timestamp", cols[1]->type()),
                               arrow::field("operation", arrow::utf8()),
                               arrow::field("operationParameters", arrow::utf8()),
                               arrow::field("operationMetrics", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, cols[0]->length(), cols);
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::RecordBatchReader::Make({batch}, schema));
  OutputChoice out = args.out;
  out.limit.reset();  // already applied to the history itself
  return out.Write(*reader);
}

}  // namespace

Action AddHistoryCommand(CLI::App& app) {
  auto args = std::make_shared<HistoryArgs>();
  auto* cmd = app.add_subcommand("history", "Show the commits of a table, newest first");
  cmd->add_option("path", args->path, "Table path")->required();
  args->out.AddOptions(cmd, true);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
