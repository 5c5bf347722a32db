// `deltacpp write`: append or overwrite data from CSV, JSON Lines or Parquet files.
#include <fmt/core.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/write.h"
#include "input_reader.h"
#include "write_progress.h"

namespace deltacpp::cli {

namespace {

struct WriteArgs {
  std::string path;
  std::string mode = "append";
  std::string replace_where;
  std::string partition_by;
  bool merge_schema = false;
  bool overwrite_schema = false;
  bool dynamic_partitions = false;
  std::string txn_app_id;
  std::optional<int64_t> txn_version;
  std::string input_format;
  std::optional<std::string> user_metadata;
  std::vector<std::string> files;
};

arrow::Status Run(const WriteArgs& args) {
  std::shared_ptr<arrow::Schema> table_schema;
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Locate(args.path));
  // The snapshot read here for the input's types is the one the write starts from: the handle
  // keeps it, so the log is read once.
  if (auto latest = table->Latest(); latest.ok()) {
    table_schema = (*latest)->schema();
  } else if (!IsDeltaError(latest.status(), DeltaErrorCode::kTableNotFound)) {
    return latest.status();
  }
  ARROW_ASSIGN_OR_RAISE(auto input, OpenInputs(args.files, args.input_format, table_schema));
  WriteOptions options;
  options.mode = args.mode == "overwrite" ? WriteMode::kOverwrite : WriteMode::kAppend;
  if (!args.replace_where.empty()) options.replace_where = args.replace_where;
  options.partition_by = SplitList(args.partition_by);
  options.merge_schema = args.merge_schema;
  options.overwrite_schema = args.overwrite_schema;
  options.dynamic_partition_overwrite = args.dynamic_partitions;
  if (!args.txn_app_id.empty()) options.txn_app_id = args.txn_app_id;
  options.txn_version = args.txn_version;
  options.transaction.user_metadata = args.user_metadata;
  options.on_progress = TerminalWriteProgress();
  ARROW_ASSIGN_OR_RAISE(auto result, WriteTable(table, input, options));
  if (result.skipped) {
    std::cout << fmt::format("skipped: version {} of app '{}' is already in the table\n",
                             *args.txn_version, args.txn_app_id);
  } else {
    std::cout << fmt::format("committed version {}: {} rows in {} files ({} bytes){}\n",
                             *result.version, result.num_rows, result.num_files, result.num_bytes,
                             result.num_removed_files
                                 ? fmt::format(", {} files removed", result.num_removed_files)
                                 : "");
  }
  return arrow::Status::OK();
}

}  // namespace

Action AddWriteCommand(CLI::App& app) {
  auto args = std::make_shared<WriteArgs>();
  auto* cmd = app.add_subcommand("write", "Append or overwrite data from files");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--mode", args->mode, "append or overwrite")
      ->check(CLI::IsMember({"append", "overwrite"}));
  cmd->add_option("--replace-where", args->replace_where,
                  "With --mode overwrite: replace only the rows matching this predicate");
  cmd->add_flag("--dynamic-partition-overwrite", args->dynamic_partitions,
                "With --mode overwrite: replace only the partitions present in the data");
  cmd->add_option("--partition-by", args->partition_by, "Partition columns of a new table");
  cmd->add_flag("--merge-schema", args->merge_schema, "Add new input columns to the table");
  cmd->add_flag("--overwrite-schema", args->overwrite_schema,
                "With --mode overwrite: replace the table schema");
  auto* app_id = cmd->add_option("--txn-app-id", args->txn_app_id, "Idempotent write: application id");
  auto* version = cmd->add_option("--txn-version", args->txn_version,
                                  "Idempotent write: version of this write for the application");
  app_id->needs(version);
  version->needs(app_id);
  cmd->add_option("--user-metadata", args->user_metadata,
                  "Text recorded as the commit's userMetadata");
  cmd->add_option("--input-format", args->input_format, "csv, json or parquet (default: by extension)")
      ->check(CLI::IsMember({"csv", "json", "parquet"}));
  cmd->add_option("files", args->files, "Input files ('-' for stdin)")->required();
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
