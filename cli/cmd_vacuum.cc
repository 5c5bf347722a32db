// `deltacpp vacuum`: delete the files no version inside the retention window needs.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/ops/vacuum.h"

namespace deltacpp::cli {

Action AddVacuumCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::optional<double> retain_hours;
    bool dry_run = false;
    bool lite = false;
    bool no_retention_check = false;
    int threads = 8;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "vacuum", "Delete files that no version inside the retention window needs");
  cmd->add_option("path", o->path, "Table path")->required();
  cmd->add_option("--retain", o->retain_hours,
                  "Retention in hours (default: the table's delta.deletedFileRetentionDuration, "
                  "7 days)");
  cmd->add_flag("--dry-run", o->dry_run, "List the files that would be deleted; delete nothing");
  cmd->add_flag("--lite", o->lite,
                "Take the files to delete from the log only, without listing the folders");
  cmd->add_flag("--no-retention-check", o->no_retention_check,
                "Allow a retention shorter than the table's");
  cmd->add_option("--threads", o->threads, "Files deleted at once")
      ->check(CLI::Range(1, 256))
      ->default_val(8);
  return [o] {
    if (auto checked = CheckTablePath(o->path); !checked.ok()) return ReportError(checked);
    VacuumBuilder vacuum(o->path);
    if (o->retain_hours) vacuum.RetentionHours(*o->retain_hours);
    vacuum.DryRun(o->dry_run)
        .Mode(o->lite ? VacuumMode::kLite : VacuumMode::kFull)
        .RetentionDurationCheck(!o->no_retention_check)
        .Parallelism(o->threads);
    const bool terminal = isatty(STDERR_FILENO);
    if (terminal) {
      vacuum.OnProgress([](const VacuumProgress& p) {
        if (p.stage == VacuumProgress::Stage::kListing) {
          std::cerr << fmt::format("\rlisted {} files", p.files) << std::flush;
        } else {
          std::cerr << fmt::format("\rdeleted {} of {} files, {}", p.files, p.total,
                                   HumanBytes(p.bytes))
                    << std::flush;
        }
      });
    }
    auto result = vacuum.Execute();
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    if (!result.ok()) return ReportError(result.status());
    for (const auto& refused : result->refused_paths) {
      std::cerr << fmt::format("deltacpp: warning: the log names {}, outside the table root; "
                               "it was left alone\n",
                               refused);
    }
    if (result->dry_run) {
      for (const auto& f : result->files) std::cout << fmt::format("{}\t{}\n", f.path, f.size);
      std::cout << fmt::format(
          "dry run: {} file{} ({}) and {} empty director{} would be deleted from {} "
          "(retention {:.1f} hours)\n",
          result->num_files, result->num_files == 1 ? "" : "s", HumanBytes(result->num_bytes),
          result->num_directories, result->num_directories == 1 ? "y" : "ies", o->path,
          result->retention_ms / 3600000.0);
      return 0;
    }
    std::cout << fmt::format(
        "deleted {} file{} ({}) and {} empty director{} from {} (retention {:.1f} hours; "
        "versions {} and {})\n",
        result->num_files, result->num_files == 1 ? "" : "s", HumanBytes(result->num_bytes),
        result->num_directories, result->num_directories == 1 ? "y" : "ies", o->path,
        result->retention_ms / 3600000.0, result->start_version.value_or(-1),
        result->end_version.value_or(-1));
    return 0;
  };
}

}  // namespace deltacpp::cli
