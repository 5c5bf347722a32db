// `deltacpp checkpoint`: write a checkpoint of a table's latest version.
#include <fmt/core.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/api.h"
#include "deltacpp/ops/checkpoint.h"

namespace deltacpp::cli {

Action AddCheckpointCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("checkpoint", "Write a checkpoint of the latest version");
  cmd->add_option("path", *path, "Table path")->required();
  return [path] {
    auto written = CheckpointTable(*path);
    if (!written.ok()) return ReportError(written.status());
    // The version the newest checkpoint covers, for the message.
    std::string version;
    if (auto table = DeltaTable::Open(*path); table.ok()) {
      if (auto latest = (*table)->Latest(); latest.ok() && (*latest)->state().checkpoint_version) {
        version = fmt::format(" of version {}", *(*latest)->state().checkpoint_version);
      }
    }
    if (*written) {
      std::cout << fmt::format("wrote a checkpoint{} at {}\n", version, *path);
    } else {
      std::cout << fmt::format("a checkpoint{} already exists at {}; nothing written\n", version,
                               *path);
    }
    return 0;
  };
}

}  // namespace deltacpp::cli
