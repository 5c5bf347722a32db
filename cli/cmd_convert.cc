// `deltacpp convert`: make a folder of Parquet files a Delta table in place.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/ops/convert.h"

namespace deltacpp::cli {

Action AddConvertCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::optional<std::string> partition_by;
    bool no_stats = false;
    std::vector<std::string> properties;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "convert", "CONVERT TO DELTA: make a folder of Parquet files (flat or Hive-partitioned) a "
                 "Delta table in place");
  cmd->add_option("path", o->path, "Folder of Parquet files")->required();
  cmd->add_option("--partition-by", o->partition_by,
                  "Partition columns of the folder levels, e.g. 'date DATE, country STRING'");
  cmd->add_flag("--no-stats", o->no_stats, "Do not read the rows to collect statistics");
  cmd->add_option("--property", o->properties, "Table property key=value (repeatable)");
  return [o] {
    if (auto checked = CheckTablePath(o->path); !checked.ok()) return ReportError(checked);
    ConvertToDeltaBuilder convert(o->path);
    if (o->partition_by) convert.PartitionBy(*o->partition_by);
    std::map<std::string, std::string> properties;
    for (const auto& p : o->properties) {
      auto kv = SplitKeyValue(p, "--property");
      if (!kv.ok()) return ReportError(kv.status());
      properties[kv->first] = kv->second;
    }
    convert.Properties(std::move(properties)).CollectStats(!o->no_stats);
    const bool terminal = isatty(STDERR_FILENO);
    if (terminal) {
      convert.OnProgress([](const ConvertProgress& p) {
        std::cerr << fmt::format("\rread {} of {} files", p.files_read, p.files) << std::flush;
      });
    }
    auto result = convert.Execute();
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    if (!result.ok()) return ReportError(result.status());
    std::string parts;
    for (const auto& p : result->partition_columns) parts += (parts.empty() ? "" : ", ") + p;
    std::cout << fmt::format("committed version {}: converted {} file{}{} in {}{}\n",
                             result->version, result->num_files,
                             result->num_files == 1 ? "" : "s",
                             o->no_stats ? "" : fmt::format(" ({} rows)", result->num_rows),
                             o->path, parts.empty() ? "" : " partitioned by " + parts);
    return 0;
  };
}

}  // namespace deltacpp::cli
