// `deltacpp restore`: bring a table back to an earlier version in one new commit.
#include <fmt/core.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/ops/restore.h"

namespace deltacpp::cli {

Action AddRestoreCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::optional<int64_t> version;
    std::string timestamp;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("restore", "Restore the table to an earlier version");
  cmd->add_option("path", o->path, "Table path")->required();
  auto* version = cmd->add_option("--version", o->version, "Version to restore");
  auto* timestamp = cmd->add_option(
      "--timestamp", o->timestamp, "Restore the last version committed at or before this time");
  version->excludes(timestamp);
  return [o] {
    if (auto checked = CheckTablePath(o->path); !checked.ok()) return ReportError(checked);
    RestoreBuilder restore(o->path);
    if (o->version) {
      restore.ToVersion(*o->version);
    } else if (!o->timestamp.empty()) {
      auto ms = ParseTimestampMillis(o->timestamp);
      if (!ms.ok()) return ReportError(ms.status());
      restore.ToTimestamp(*ms, o->timestamp);
    } else {
      return ReportError(arrow::Status::Invalid("restore needs --version or --timestamp"));
    }
    auto metrics = restore.Execute();
    if (!metrics.ok()) return ReportError(metrics.status());
    std::cout << fmt::format("restored version {} as version {}\n", metrics->restored_version,
                             metrics->version);
    for (const auto& [name, value] : metrics->Named()) {
      std::cout << fmt::format("{}: {}\n", name, value);
    }
    return 0;
  };
}

}  // namespace deltacpp::cli
