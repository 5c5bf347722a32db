// `deltacpp update`: set columns of the rows of a table matching a predicate.
#include <fmt/core.h>

#include <optional>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "deltacpp/ops/update.h"

namespace deltacpp::cli {

namespace {

struct UpdateArgs {
  std::string path;
  std::vector<std::string> sets;
  std::optional<std::string> where;
};

std::string Trim(const std::string& text) {
  const auto b = text.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = text.find_last_not_of(" \t");
  return text.substr(b, e - b + 1);
}

// `col = EXPR` (the column may be quoted in backticks) into (col, EXPR).
arrow::Result<std::pair<std::string, std::string>> ParseSet(const std::string& text) {
  const auto eq = text.find('=');
  std::string column = eq == std::string::npos ? "" : Trim(text.substr(0, eq));
  std::string expression = eq == std::string::npos ? "" : Trim(text.substr(eq + 1));
  if (column.size() >= 2 && column.front() == '`' && column.back() == '`') {
    column = column.substr(1, column.size() - 2);
  }
  if (column.empty() || expression.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("--set '{}': expected 'column = expression'", text));
  }
  return std::make_pair(column, expression);
}

}  // namespace

Action AddUpdateCommand(CLI::App& app) {
  auto args = std::make_shared<UpdateArgs>();
  auto* cmd = app.add_subcommand(
      "update", "Set columns of the rows matching a predicate (every row without --where)");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--set", args->sets, "An assignment 'column = expression' (SQL); repeatable")
      ->required();
  cmd->add_option("--where", args->where, "Update only the rows for which this is TRUE (SQL)");
  return [args] {
    if (auto st = CheckTablePath(args->path); !st.ok()) return ReportError(st);
    UpdateBuilder builder(args->path);
    for (const auto& set : args->sets) {
      auto parsed = ParseSet(set);
      if (!parsed.ok()) return ReportError(parsed.status());
      builder.Set(parsed->first, parsed->second);
    }
    if (args->where) builder.Where(*args->where);
    auto metrics = builder.Execute();
    if (!metrics.ok()) return ReportError(metrics.status());
    return PrintOperationOutcome(metrics->version, metrics->Named());
  };
}

}  // namespace deltacpp::cli
