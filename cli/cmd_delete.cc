// `deltacpp delete`: delete the rows of a table matching a predicate.

#include <optional>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/delete.h"

namespace deltacpp::cli {

namespace {

struct DeleteArgs {
  std::string path;
  std::optional<std::string> where;
};

}  // namespace

Action AddDeleteCommand(CLI::App& app) {
  auto args = std::make_shared<DeleteArgs>();
  auto* cmd = app.add_subcommand(
      "delete", "Delete the rows matching a predicate (every row without --where)");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--where", args->where, "Delete only the rows for which this is TRUE (SQL)");
  return [args] {
    if (auto st = CheckTablePath(args->path); !st.ok()) return ReportError(st);
    DeleteBuilder builder(args->path);
    if (args->where) builder.Where(*args->where);
    auto metrics = builder.Execute();
    if (!metrics.ok()) return ReportError(metrics.status());
    return PrintOperationOutcome(metrics->version, metrics->Named());
  };
}

}  // namespace deltacpp::cli
