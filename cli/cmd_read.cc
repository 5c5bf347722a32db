// `deltacpp read`: scan a table version (optionally by timestamp) with projection and filter.
#include <fmt/core.h>

#include "commands.h"
#include "deltacpp/api.h"

namespace deltacpp::cli {

namespace {

struct ReadArgs {
  std::string path;
  std::optional<int64_t> version;
  std::string timestamp;
  std::string columns;
  std::string where;
  OutputChoice out;
};


arrow::Status Run(const ReadArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  std::shared_ptr<Snapshot> snapshot;
  if (!args.timestamp.empty()) {
    ARROW_ASSIGN_OR_RAISE(int64_t ms, ParseTimestampMillis(args.timestamp));
    ARROW_ASSIGN_OR_RAISE(snapshot, table->SnapshotAtTimestamp(ms));
  } else {
    ARROW_ASSIGN_OR_RAISE(snapshot, table->SnapshotAt(args.version));
  }
  ScanBuilder builder = snapshot->NewScan();
  if (!args.columns.empty()) builder.Columns(SplitList(args.columns));
  if (!args.where.empty()) builder.Filter(args.where);
  ARROW_ASSIGN_OR_RAISE(auto scan, builder.Build());
  ARROW_ASSIGN_OR_RAISE(auto reader, scan->Execute());
  return args.out.Write(*reader);
}

}  // namespace

Action AddReadCommand(CLI::App& app) {
  auto args = std::make_shared<ReadArgs>();
  auto* cmd = app.add_subcommand("read", "Read rows of a table version");
  cmd->add_option("path", args->path, "Table path")->required();
  auto* v = cmd->add_option("--version", args->version, "Version to read (default: latest)");
  auto* t = cmd->add_option("--timestamp", args->timestamp,
                            "Read the version current at this ISO-8601 time (zone-less = UTC)");
  v->excludes(t);
  cmd->add_option("--columns", args->columns, "Comma-separated columns to return");
  cmd->add_option("--where", args->where, "Row filter, e.g. \"id > 5 AND country = 'ID'\"");
  args->out.AddOptions(cmd, true);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
