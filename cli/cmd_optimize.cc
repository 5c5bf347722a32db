// `deltacpp optimize`: compact small files, Z-order or cluster rows, purge deletion vectors.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "deltacpp/ops/optimize.h"

namespace deltacpp::cli {

Action AddOptimizeCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::optional<std::string> where;
    std::string zorder_by;
    std::optional<int64_t> target_size;
    std::optional<int64_t> min_size;
    bool purge = false;
    bool full = false;
    int threads = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "optimize", "Compact small files (bin-packing), Z-order or cluster rows, or purge "
                  "deletion vectors; the rows stay as they are");
  cmd->add_option("path", o->path, "Table path")->required();
  cmd->add_option("--where", o->where, "Only partitions matching this partition predicate");
  cmd->add_option("--zorder-by", o->zorder_by, "Columns to Z-order the rows by: 'a, b'");
  cmd->add_option("--target-size", o->target_size,
                  "Bytes per file written (default: delta.targetFileSize, else 1 GiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-size", o->min_size,
                  "Files at least this large are left alone (default: the target size)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--purge", o->purge,
                "Rewrite every file with a deletion vector without its deleted rows "
                "(REORG ... APPLY (PURGE))");
  cmd->add_flag("--full", o->full, "On a clustered table, recluster every file");
  cmd->add_option("--threads", o->threads, "Bins rewritten at once (0: one per core, at most 4)")
      ->check(CLI::Range(0, 64))
      ->default_val(0);
  return [o] {
    if (auto checked = CheckTablePath(o->path); !checked.ok()) return ReportError(checked);
    OptimizeBuilder optimize(o->path);
    if (o->where) optimize.Where(*o->where);
    if (!o->zorder_by.empty()) optimize.ZOrderBy(SplitList(o->zorder_by));
    if (o->target_size) optimize.TargetFileSize(*o->target_size);
    if (o->min_size) optimize.MinFileSize(*o->min_size);
    optimize.Purge(o->purge).Full(o->full).Parallelism(o->threads);
    const bool terminal = isatty(STDERR_FILENO);
    if (terminal) {
      optimize.OnProgress([](const OptimizeProgress& p) {
        std::cerr << fmt::format("\rread {} of {} files ({} of {}), wrote {} files",
                                 p.files_read, p.files_to_read, HumanBytes(p.bytes_read),
                                 HumanBytes(p.bytes_to_read), p.files_written)
                  << std::flush;
      });
    }
    auto result = optimize.Execute();
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    if (!result.ok()) return ReportError(result.status());
    const auto& m = *result;
    if (!m.version) {
      std::cout << fmt::format("nothing to rewrite in {} ({} files considered); nothing "
                               "committed\n",
                               o->path, m.total_considered_files);
      return 0;
    }
    std::cout << fmt::format(
        "committed version {}: {} file{} ({}) rewritten as {} ({}), {} rows, {} partition{}",
        *m.version, m.num_files_removed, m.num_files_removed == 1 ? "" : "s",
        HumanBytes(m.files_removed.total_size), m.num_files_added,
        HumanBytes(m.files_added.total_size), m.num_rows, m.partitions_optimized,
        m.partitions_optimized == 1 ? "" : "s");
    if (!m.clustering_columns.empty()) {
      std::string cols;
      for (const auto& c : m.clustering_columns) cols += (cols.empty() ? "" : ", ") + c;
      std::cout << fmt::format(", ordered by ({})", cols);
    }
    if (m.num_deletion_vectors_removed > 0) {
      std::cout << fmt::format(", {} deletion vector{} ({} rows) purged",
                               m.num_deletion_vectors_removed,
                               m.num_deletion_vectors_removed == 1 ? "" : "s",
                               m.num_deletion_vector_rows_removed);
    }
    std::cout << "\n";
    for (const auto& [name, value] : m.Named()) std::cout << fmt::format("{}: {}\n", name, value);
    if (m.zorder_stats) {
      const ZOrderStats& z = *m.zorder_stats;
      std::cout << fmt::format(
          "zOrderStats: strategyName {}, inputCubeFiles {} ({} bytes), inputOtherFiles {} ({} "
          "bytes), inputNumCubes {}, mergedFiles {} ({} bytes), numOutputCubes {}, "
          "mergedNumCubes {}\n",
          z.strategy_name, z.input_cube_files.num, z.input_cube_files.size,
          z.input_other_files.num, z.input_other_files.size, z.input_num_cubes,
          z.merged_files.num, z.merged_files.size, z.num_output_cubes, z.merged_num_cubes);
    }
    return 0;
  };
}

}  // namespace deltacpp::cli
