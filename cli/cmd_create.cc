// `deltacpp create`: create a table from column definitions.
#include <fmt/core.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"

namespace deltacpp::cli {

namespace {

struct CreateArgs {
  std::string path;
  std::string schema;
  std::string partition_by;
  std::vector<std::string> properties;
  std::vector<std::string> constraints;
  std::string comment;
  std::optional<std::string> user_metadata;
  bool if_not_exists = false;
  bool or_replace = false;
};


arrow::Status Run(const CreateArgs& args) {
  ARROW_RETURN_NOT_OK(CheckTablePath(args.path));
  CreateTableOptions options;
  ARROW_ASSIGN_OR_RAISE(options.schema, SchemaFromDdl(args.schema));
  options.partition_columns = SplitList(args.partition_by);
  for (const auto& p : args.properties) {
    ARROW_ASSIGN_OR_RAISE(auto kv, SplitKeyValue(p, "--property"));
    options.properties[kv.first] = kv.second;
  }
  for (const auto& c : args.constraints) {
    ARROW_ASSIGN_OR_RAISE(auto kv, SplitKeyValue(c, "--constraint"));
    options.constraints[kv.first] = kv.second;
  }
  if (!args.comment.empty()) options.description = args.comment;
  options.transaction.user_metadata = args.user_metadata;
  options.mode = args.or_replace      ? CreateMode::kOrReplace
                 : args.if_not_exists ? CreateMode::kIfNotExists
                                      : CreateMode::kErrorIfExists;
  ARROW_ASSIGN_OR_RAISE(auto result, CreateTable(args.path, options));
  if (result.created) {
    std::cout << fmt::format("created table at {} (version {})\n", args.path, result.version);
  } else {
    std::cout << fmt::format("table at {} already exists (version {}); nothing done\n", args.path,
                             result.version);
  }
  return arrow::Status::OK();
}

}  // namespace

Action AddCreateCommand(CLI::App& app) {
  auto args = std::make_shared<CreateArgs>();
  auto* cmd = app.add_subcommand("create", "Create a table");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--schema", args->schema,
                  "Columns, e.g. 'id long NOT NULL, name string, price DECIMAL(10,2)'")
      ->required();
  cmd->add_option("--partition-by", args->partition_by, "Comma-separated partition columns");
  cmd->add_option("--property", args->properties, "Table property key=value (repeatable)");
  cmd->add_option("--constraint", args->constraints,
                  "CHECK constraint name='expr' (repeatable)");
  cmd->add_option("--comment", args->comment, "Table description");
  cmd->add_option("--user-metadata", args->user_metadata,
                  "Text recorded as the commit's userMetadata");
  auto* ine = cmd->add_flag("--if-not-exists", args->if_not_exists, "Do nothing if a table exists");
  auto* orr = cmd->add_flag("--or-replace", args->or_replace, "Replace an existing table");
  ine->excludes(orr);
  return [args] {
    auto st = Run(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
