// `deltacpp alter`: add columns, set or unset table properties, add or drop CHECK constraints.
#include <fmt/core.h>

#include <cctype>
#include <iostream>
#include <map>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/alter_table.h"

namespace deltacpp::cli {

namespace {

struct AlterArgs {
  std::string path;
  std::string columns;
  std::vector<std::string> assignments;
  std::vector<std::string> keys;
  bool unset_if_exists = false;
  std::string constraint_name;
  std::string constraint_expr;
  std::string drop_name;
  bool drop_if_exists = false;
  std::optional<std::string> user_metadata;
};

TransactionOptions CommitOptions(const AlterArgs& args) {
  TransactionOptions options;
  options.user_metadata = args.user_metadata;
  return options;
}

std::string Trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Splits column definitions at the commas that are not inside (), <>, quotes or backticks.
std::vector<std::string> SplitDefinitions(const std::string& text) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '(' || c == '<') {
      ++depth;
    } else if ((c == ')' || c == '>') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(Trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(Trim(current));
  return items;
}

std::string QuoteName(const std::string& name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

// One definition `s.inner.x INT COMMENT '...'`: the new column and the struct it goes into.
arrow::Result<NewColumn> ParseColumn(const std::string& definition) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < definition.size()) {
    std::string part;
    if (definition[i] == '`') {
      ++i;
      while (i < definition.size()) {
        if (definition[i] == '`') {
          if (i + 1 < definition.size() && definition[i + 1] == '`') {
            part += '`';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        part += definition[i++];
      }
    } else {
      while (i < definition.size() && definition[i] != '.' && definition[i] != ':' &&
             !std::isspace(static_cast<unsigned char>(definition[i]))) {
        part += definition[i++];
      }
    }
    parts.push_back(part);
    if (i < definition.size() && definition[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  if (parts.empty() || parts.back().empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("column definition '{}' does not start with a name", definition));
  }
  NewColumn column;
  for (size_t p = 0; p + 1 < parts.size(); ++p) {
    const bool plain = parts[p].find_first_of(".`") == std::string::npos;
    column.parent += (p ? "." : "") + (plain ? parts[p] : QuoteName(parts[p]));
  }
  ARROW_ASSIGN_OR_RAISE(auto schema,
                        SchemaFromDdl(QuoteName(parts.back()) + definition.substr(i)));
  if (schema->num_fields() != 1) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("column definition '{}' must define one column", definition));
  }
  column.field = schema->field(0);
  return column;
}

arrow::Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("property '{}' must look like key=value", text));
  }
  std::string value = text.substr(eq + 1);
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    value = value.substr(1, value.size() - 2);
  }
  return std::make_pair(text.substr(0, eq), value);
}

void Report(const std::string& what, const CommitResult& result) {
  std::cout << fmt::format("committed version {}: {}\n", result.version, what);
}

arrow::Status AddColumnsCommand(const AlterArgs& args) {
  std::vector<NewColumn> columns;
  std::string names;
  for (const auto& definition : SplitDefinitions(args.columns)) {
    if (definition.empty()) continue;
    ARROW_ASSIGN_OR_RAISE(auto column, ParseColumn(definition));
    names += (names.empty() ? "" : ", ") +
             (column.parent.empty() ? "" : column.parent + ".") + column.field->name();
    columns.push_back(std::move(column));
  }
  ARROW_ASSIGN_OR_RAISE(auto result, AddColumns(args.path, columns, CommitOptions(args)));
  Report("added " + names, result);
  return arrow::Status::OK();
}

arrow::Status SetPropertiesCommand(const AlterArgs& args) {
  std::map<std::string, std::string> properties;
  for (const auto& a : args.assignments) {
    ARROW_ASSIGN_OR_RAISE(auto kv, SplitAssignment(a));
    properties[kv.first] = kv.second;
  }
  ARROW_ASSIGN_OR_RAISE(auto result,
                        SetTableProperties(args.path, properties, CommitOptions(args)));
  Report(fmt::format("set {} propert{}", properties.size(), properties.size() == 1 ? "y" : "ies"),
         result);
  return arrow::Status::OK();
}

arrow::Status UnsetPropertiesCommand(const AlterArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto result,
                        UnsetTableProperties(args.path, args.keys, args.unset_if_exists,
                                             CommitOptions(args)));
  Report(fmt::format("unset {} propert{}", args.keys.size(), args.keys.size() == 1 ? "y" : "ies"),
         result);
  return arrow::Status::OK();
}

arrow::Status AddConstraintCommand(const AlterArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto result,
                        AddConstraint(args.path, args.constraint_name, args.constraint_expr,
                                      CommitOptions(args)));
  Report(fmt::format("added constraint {} CHECK ({})", args.constraint_name, args.constraint_expr),
         result);
  return arrow::Status::OK();
}

arrow::Status DropConstraintCommand(const AlterArgs& args) {
  ARROW_ASSIGN_OR_RAISE(auto result,
                        DropConstraint(args.path, args.drop_name, args.drop_if_exists,
                                       CommitOptions(args)));
  Report(fmt::format("dropped constraint {}", args.drop_name), result);
  return arrow::Status::OK();
}

}  // namespace

Action AddAlterCommand(CLI::App& app) {
  auto args = std::make_shared<AlterArgs>();
  auto* cmd = app.add_subcommand("alter", "Change a table's columns, properties or constraints");
  cmd->add_option("path", args->path, "Table path")->required();
  cmd->add_option("--user-metadata", args->user_metadata,
                  "Text recorded as the commit's userMetadata");
  cmd->require_subcommand(1);

  auto* add_columns = cmd->add_subcommand("add-columns", "Add nullable columns");
  add_columns
      ->add_option("columns", args->columns,
                   "Column definitions, e.g. 'note string, s.x int' (s.x goes into struct s)")
      ->required();

  auto* set = cmd->add_subcommand("set-properties", "Set table properties");
  set->add_option("properties", args->assignments, "key=value (one or more)")->required();

  auto* unset = cmd->add_subcommand("unset-properties", "Remove table properties");
  unset->add_option("keys", args->keys, "Property keys (one or more)")->required();
  unset->add_flag("--if-exists", args->unset_if_exists, "Ignore keys the table does not have");

  auto* add_constraint = cmd->add_subcommand("add-constraint", "Add a CHECK constraint");
  add_constraint->add_option("name", args->constraint_name, "Constraint name")->required();
  add_constraint->add_option("expr", args->constraint_expr, "Boolean SQL expression")->required();

  auto* drop_constraint = cmd->add_subcommand("drop-constraint", "Drop a CHECK constraint");
  drop_constraint->add_option("name", args->drop_name, "Constraint name")->required();
  drop_constraint->add_flag("--if-exists", args->drop_if_exists,
                            "Succeed when there is no such constraint");

  return [=] {
    arrow::Status st;
    if (add_columns->parsed()) st = AddColumnsCommand(*args);
    else if (set->parsed()) st = SetPropertiesCommand(*args);
    else if (unset->parsed()) st = UnsetPropertiesCommand(*args);
    else if (add_constraint->parsed()) st = AddConstraintCommand(*args);
    else if (drop_constraint->parsed()) st = DropConstraintCommand(*args);
    return st.ok() ? 0 : ReportError(st);
  };
}

}  // namespace deltacpp::cli
