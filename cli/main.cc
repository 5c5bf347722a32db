// The `deltacpp` command: parses arguments and dispatches to one subcommand per file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <string>

#include "commands.h"
#include "deltacpp/api.h"

int main(int argc, char** argv) {
  deltacpp::Initialize();
  CLI::App app{"deltacpp: a native Delta Lake engine"};
  app.require_subcommand(0, 1);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print the library version");
  std::vector<std::pair<CLI::App*, deltacpp::cli::Action>> commands;
  auto add = [&](deltacpp::cli::Action (*fn)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    auto action = fn(app);
    auto subs = app.get_subcommands({});
    commands.emplace_back(subs[before], std::move(action));
  };
  add(deltacpp::cli::AddReadCommand);
  add(deltacpp::cli::AddChangesCommand);
  add(deltacpp::cli::AddHistoryCommand);
  add(deltacpp::cli::AddDescribeCommand);
  add(deltacpp::cli::AddFilesCommand);
  add(deltacpp::cli::AddCreateCommand);
  add(deltacpp::cli::AddWriteCommand);
  add(deltacpp::cli::AddAlterCommand);
  add(deltacpp::cli::AddCheckpointCommand);
  add(deltacpp::cli::AddDeleteCommand);
  add(deltacpp::cli::AddUpdateCommand);
  add(deltacpp::cli::AddMergeCommand);
  add(deltacpp::cli::AddVacuumCommand);
  add(deltacpp::cli::AddRestoreCommand);
  add(deltacpp::cli::AddOptimizeCommand);
  add(deltacpp::cli::AddFsckCommand);
  add(deltacpp::cli::AddConvertCommand);
  add(deltacpp::cli::AddStreamCommand);
  add(deltacpp::cli::AddDetailCommand);
  // A first word that names no command would otherwise reach the parser as an unexpected
  // argument; say what it is and what the commands are.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    bool known = false;
    std::string names;
    for (const auto& [cmd, action] : commands) {
      known |= cmd->check_name(word);
      names += (names.empty() ? "" : ", ") + cmd->get_name();
    }
    if (!known) {
      fmt::print(stderr, "deltacpp: error: '{}' is not a deltacpp command. Commands: {}\n"
                 "Run 'deltacpp <command> --help' for a command's options.\n", word, names);
      return 2;
    }
  }
  CLI11_PARSE(app, argc, argv);
  if (show_version) {
    fmt::print("deltacpp {}\n", deltacpp::kVersion);
    return 0;
  }
  for (auto& [cmd, action] : commands) {
    if (cmd->parsed()) return action();
  }
  fmt::print("{}", app.help());
  return 0;
}
