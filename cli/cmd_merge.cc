// `deltacpp merge`: merge a file of rows into a table (upsert), clause by clause.
#include <fmt/core.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <optional>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "deltacpp/ops/merge.h"
#include "input_reader.h"

namespace deltacpp::cli {

namespace {

using Kind = MergeClause::Kind;
using ClauseAction = MergeClause::Action;

struct MergeArgs {
  std::string path;
  std::string source;
  std::string source_format;
  std::optional<int64_t> source_version;
  bool merge_schema = false;
  std::string on;
  std::string target_alias = "target";
  std::string source_alias = "source";
};

// One clause option: its kind and action, and whether its value is assignments (else an
// optional condition).
struct ClauseOption {
  const char* name;
  const char* help;
  Kind kind;
  ClauseAction action;
  bool assignments;
};

const ClauseOption kClauseOptions[] = {
    {"--when-matched-update",
     "WHEN MATCHED THEN UPDATE: '[AND <condition> THEN] col = expr, ...'", Kind::kMatched,
     ClauseAction::kUpdate, true},
    {"--when-matched-update-all", "WHEN MATCHED THEN UPDATE SET *; optional value: a condition",
     Kind::kMatched, ClauseAction::kUpdateAll, false},
    {"--when-matched-delete", "WHEN MATCHED THEN DELETE; optional value: a condition",
     Kind::kMatched, ClauseAction::kDelete, false},
    {"--when-not-matched-insert",
     "WHEN NOT MATCHED THEN INSERT: '[AND <condition> THEN] col = expr, ...'",
     Kind::kNotMatched, ClauseAction::kInsert, true},
    {"--when-not-matched-insert-all", "WHEN NOT MATCHED THEN INSERT *; optional value: a condition",
     Kind::kNotMatched, ClauseAction::kInsertAll, false},
    {"--when-not-matched-by-source-update",
     "WHEN NOT MATCHED BY SOURCE THEN UPDATE: '[AND <condition> THEN] col = expr, ...'",
     Kind::kNotMatchedBySource, ClauseAction::kUpdate, true},
    {"--when-not-matched-by-source-delete",
     "WHEN NOT MATCHED BY SOURCE THEN DELETE; optional value: a condition",
     Kind::kNotMatchedBySource, ClauseAction::kDelete, false},
};

std::string Trim(const std::string& text) {
  const auto b = text.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  const auto e = text.find_last_not_of(" \t\n");
  return text.substr(b, e - b + 1);
}

std::string Upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// Splits `text` at top-level occurrences of `sep` (a comma, or the word THEN): outside quotes,
// backticks, parentheses and CASE ... END. Returns the pieces, trimmed.
std::vector<std::string> SplitTopLevel(const std::string& text, bool at_then) {
  std::vector<std::string> out;
  int depth = 0;
  int cases = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\' && quote != '`') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (std::isalpha(static_cast<unsigned char>(c)) &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
                            text[i - 1] == '_' || text[i - 1] == '.'))) {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
        ++j;
      }
      const std::string word = Upper(text.substr(i, j - i));
      if (word == "CASE") ++cases;
      if (word == "END" && cases > 0) --cases;
      if (at_then && word == "THEN" && depth == 0 && cases == 0) {
        out.push_back(Trim(text.substr(start, i - start)));
        out.push_back(Trim(text.substr(j)));
        return out;
      }
      i = j - 1;
    } else if (!at_then && c == ',' && depth == 0 && cases == 0) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(Trim(text.substr(start)));
  return out;
}

// A condition as given after a clause option: an optional leading AND is dropped.
std::optional<std::string> ConditionText(const std::string& text) {
  std::string c = Trim(text);
  if (c.size() > 4 && Upper(c.substr(0, 4)) == "AND ") c = Trim(c.substr(4));
  if (c.empty()) return std::nullopt;
  return c;
}

// `[AND <condition> THEN] col = expr, ...` into the condition and the assignments.
arrow::Result<MergeClause> ParseClause(const ClauseOption& option, const std::string& value) {
  MergeClause clause;
  clause.kind = option.kind;
  clause.action = option.action;
  if (!option.assignments) {
    clause.condition = ConditionText(value);
    return clause;
  }
  std::string body = Trim(value);
  if (body.size() > 4 && Upper(body.substr(0, 4)) == "AND ") {
    auto parts = SplitTopLevel(body.substr(4), /*at_then=*/true);
    if (parts.size() != 2) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{} '{}': expected 'AND <condition> THEN col = expr, ...'",
                                    option.name, value));
    }
    clause.condition = ConditionText(parts[0]);
    body = parts[1];
  }
  for (const auto& item : SplitTopLevel(body, /*at_then=*/false)) {
    const auto eq = item.find('=');
    std::string column = eq == std::string::npos ? "" : Trim(item.substr(0, eq));
    std::string expression = eq == std::string::npos ? "" : Trim(item.substr(eq + 1));
    if (column.size() >= 2 && column.front() == '`' && column.back() == '`') {
      column = column.substr(1, column.size() - 2);
    }
    if (column.empty() || expression.empty()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{} '{}': expected 'column = expression' in '{}'",
                                    option.name, value, item));
    }
    clause.assignments.emplace_back(std::move(column), std::move(expression));
  }
  return clause;
}

arrow::Status Run(const MergeArgs& args, const std::vector<MergeClause>& clauses) {
  ARROW_RETURN_NOT_OK(CheckTablePath(args.path));
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(args.path));
  ARROW_ASSIGN_OR_RAISE(auto latest, table->Latest());
  // Source columns named like table columns take their types (CSV and JSON values are
  // converted); other columns are read as the format gives them.
  // A Delta table as the source: named as such, or a directory holding a `_delta_log`.
  std::error_code ec;
  const bool delta_source =
      args.source_format == "delta" ||
      (args.source_format.empty() && args.source != "-" &&
       std::filesystem::is_directory(std::filesystem::path(args.source) / "_delta_log", ec));
  if (args.source_version && !delta_source) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "--source-version needs a Delta table as the source (--source-format delta)");
  }
  std::optional<MergeBuilder> made;
  if (delta_source) {
    ARROW_ASSIGN_OR_RAISE(auto source_table, DeltaTable::Open(args.source));
    ARROW_ASSIGN_OR_RAISE(auto source_snapshot, source_table->SnapshotAt(args.source_version));
    made.emplace(table, std::shared_ptr<const Snapshot>(std::move(source_snapshot)));
  } else {
    InputOptions input;
    input.format = args.source_format;
    input.table_schema = latest->schema();
    input.merge_schema = true;
    ARROW_ASSIGN_OR_RAISE(auto source, OpenInputs({args.source}, input));
    made.emplace(table, std::move(source));
  }
  MergeBuilder& builder = *made;
  builder.TargetAlias(args.target_alias).SourceAlias(args.source_alias).On(args.on);
  builder.WithSchemaEvolution(args.merge_schema);
  for (const auto& c : clauses) {
    switch (c.kind) {
      case Kind::kMatched:
        if (c.action == ClauseAction::kUpdate) {
          builder.WhenMatchedUpdate(c.condition, c.assignments);
        }
        if (c.action == ClauseAction::kUpdateAll) builder.WhenMatchedUpdateAll(c.condition);
        if (c.action == ClauseAction::kDelete) builder.WhenMatchedDelete(c.condition);
        break;
      case Kind::kNotMatched:
        if (c.action == ClauseAction::kInsert) {
          builder.WhenNotMatchedInsert(c.condition, c.assignments);
        }
        if (c.action == ClauseAction::kInsertAll) builder.WhenNotMatchedInsertAll(c.condition);
        break;
      case Kind::kNotMatchedBySource:
        if (c.action == ClauseAction::kUpdate) {
          builder.WhenNotMatchedBySourceUpdate(c.condition, c.assignments);
        }
        if (c.action == ClauseAction::kDelete) builder.WhenNotMatchedBySourceDelete(c.condition);
        break;
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto metrics, builder.Execute());
  PrintOperationOutcome(metrics.version, metrics.Named());
  return arrow::Status::OK();
}

}  // namespace

Action AddMergeCommand(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  auto values = std::make_shared<std::map<std::string, std::vector<std::string>>>();
  auto* cmd = app.add_subcommand(
      "merge",
      "Merge the rows of a file into a table (upsert): WHEN clauses are tried in the order "
      "given on the command line");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--source", args->source,
                  "File of source rows (csv, json, parquet; - = stdin) or a Delta table")
      ->required();
  cmd->add_option("--source-format", args->source_format,
                  "csv, json, parquet or delta (default: by extension; a directory with a "
                  "_delta_log is a Delta table)");
  cmd->add_option("--source-version", args->source_version,
                  "Version of the source Delta table (default: its latest)");
  cmd->add_flag("--merge-schema", args->merge_schema,
                "Schema evolution: update-all and insert-all clauses add the source's new "
                "columns to the table");
  cmd->add_option("--on", args->on, "The merge condition (SQL), e.g. 'target.id = source.id'")
      ->required();
  cmd->add_option("--target-alias", args->target_alias, "Name of the table in expressions")
      ->capture_default_str();
  cmd->add_option("--source-alias", args->source_alias, "Name of the source in expressions")
      ->capture_default_str();
  std::vector<std::pair<CLI::Option*, const ClauseOption*>> options;
  for (const auto& o : kClauseOptions) {
    auto* opt = cmd->add_option(o.name, (*values)[o.name], o.help)
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                    ->allow_extra_args(false);
    if (!o.assignments) opt->expected(0, 1);
    options.emplace_back(opt, &o);
  }
  // The option values live in `values`: the action keeps it alive with the options bound to it.
  return [args, cmd, options, values] {
    // The clauses in command-line order: each occurrence of a clause option is one clause.
    std::vector<MergeClause> clauses;
    std::map<const CLI::Option*, size_t> used;
    for (const auto* opt : cmd->parse_order()) {
      for (const auto& [o, spec] : options) {
        if (o != opt) continue;
        const auto& results = o->results();
        const size_t k = used[o]++;
        const std::string value = k < results.size() ? results[k] : "";
        auto clause = ParseClause(*spec, value);
        if (!clause.ok()) return ReportError(clause.status());
        clauses.push_back(std::move(*clause));
      }
    }
    auto st = Run(*args, clauses);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
