// `deltacpp fsck`: find live files missing from storage; remove them from the table.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/ops/fsck.h"

namespace deltacpp::cli {

Action AddFsckCommand(CLI::App& app) {
  struct Options {
    std::string path;
    bool dry_run = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "fsck", "Find live files missing from storage and remove them from the table, so that "
              "the latest version reads again (the rows they held are lost)");
  cmd->add_option("path", o->path, "Table path")->required();
  cmd->add_flag("--dry-run", o->dry_run, "List the missing files; change nothing");
  return [o] {
    if (auto checked = CheckTablePath(o->path); !checked.ok()) return ReportError(checked);
    FsckBuilder fsck(o->path);
    fsck.DryRun(o->dry_run);
    const bool terminal = isatty(STDERR_FILENO);
    if (terminal) {
      fsck.OnProgress([](const FsckProgress& p) {
        std::cerr << fmt::format("\rchecked {} of {} files", p.checked, p.total) << std::flush;
      });
    }
    auto result = fsck.Execute();
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    if (!result.ok()) return ReportError(result.status());
    for (const auto& m : result->missing) {
      std::cout << fmt::format("missing\t{}\t{}\t{}\n", m.path, m.size, m.detail);
    }
    const auto n = result->missing.size();
    if (n == 0) {
      std::cout << fmt::format("all {} live files of version {} are present; nothing to do\n",
                               result->num_files_checked, result->version_checked);
    } else if (result->dry_run) {
      std::cout << fmt::format("dry run: {} of {} live files of version {} are missing; "
                               "`fsck` without --dry-run removes them\n",
                               n, result->num_files_checked, result->version_checked);
    } else {
      std::cout << fmt::format("committed version {}: removed {} missing file{} of {}\n",
                               result->version.value_or(-1), n, n == 1 ? "" : "s",
                               result->num_files_checked);
    }
    return 0;
  };
}

}  // namespace deltacpp::cli
