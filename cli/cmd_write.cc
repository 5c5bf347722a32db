// `deltacpp write`: append or overwrite data from CSV, JSON Lines or Parquet files.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <iostream>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/write.h"
#include "input_reader.h"
#include "deltacpp/schema.h"
#include "write_progress.h"

namespace deltacpp::cli {

namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

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
  std::string schema;
  bool no_header = false;
  std::optional<std::string> user_metadata;
  std::vector<std::string> properties;
  std::vector<std::string> files;
};

// The declared types, checked against the table's: a column the table has keeps its type
// unless the write replaces the table's schema.
arrow::Result<std::shared_ptr<arrow::Schema>> DeclaredTypes(
    const std::string& ddl, const std::shared_ptr<arrow::Schema>& table_schema,
    bool overwrite_schema) {
  if (ddl.empty()) return nullptr;
  auto declared = SchemaFromDdl(ddl);
  if (!declared.ok()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("--schema: {}", declared.status().message()));
  }
  if (table_schema && !overwrite_schema) {
    for (const auto& f : (*declared)->fields()) {
      for (const auto& t : table_schema->fields()) {
        if (!EqualsIgnoringCase(f->name(), t->name())) continue;
        if (!f->type()->Equals(*t->type())) {
          return DeltaError(DeltaErrorCode::kSchemaMismatch,
                            fmt::format("--schema gives column \"{}\" the type {}, but the "
                                        "table has it as {}",
                                        f->name(), DeltaTypeName(*f->type()),
                                        DeltaTypeName(*t->type())));
        }
      }
    }
  }
  return *declared;
}

arrow::Status Run(const WriteArgs& args) {
  std::shared_ptr<arrow::Schema> table_schema;
  ARROW_RETURN_NOT_OK(CheckTablePath(args.path));
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Locate(args.path));
  // The snapshot read here for the input's types is the one the write starts from: the handle
  // keeps it, so the log is read once.
  if (auto latest = table->Latest(); latest.ok()) {
    table_schema = (*latest)->schema();
  } else if (!IsDeltaError(latest.status(), DeltaErrorCode::kTableNotFound)) {
    return latest.status();
  }
  if (table_schema && !args.properties.empty() && !args.overwrite_schema) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("--property sets properties of a table the write creates, and "
                                  "{} already exists: use `deltacpp alter {} set-properties ...`",
                                  args.path, args.path));
  }
  InputOptions input_options;
  input_options.format = args.input_format;
  input_options.table_schema = table_schema;
  ARROW_ASSIGN_OR_RAISE(input_options.declared,
                        DeclaredTypes(args.schema, table_schema, args.overwrite_schema));
  input_options.header = !args.no_header;
  input_options.merge_schema = args.merge_schema || args.overwrite_schema;
  ARROW_ASSIGN_OR_RAISE(auto input, OpenInputs(args.files, input_options));
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
  for (const auto& p : args.properties) {
    ARROW_ASSIGN_OR_RAISE(auto kv, SplitKeyValue(p, "--property"));
    options.properties[kv.first] = kv.second;
  }
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
  cmd->add_option("--property", args->properties,
                  "Table property key=value of a new table (repeatable)");
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
  cmd->add_option("--schema", args->schema,
                  "Types of input columns the table does not have, e.g. 'id INT, price "
                  "DECIMAL(10,2)' (CSV and JSON; other new CSV columns are strings)");
  cmd->add_flag("--no-header", args->no_header,
                "CSV input has no header line: its fields are the --schema columns, or the "
                "table's, in order");
  cmd->add_option("files", args->files, "Input files ('-' for stdin)")->required();
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
