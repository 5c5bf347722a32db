// The CLI's subcommands: each registers its options on the app and runs after parsing.
#pragma once

#include <CLI/CLI.hpp>

#include <arrow/record_batch.h>
#include <arrow/status.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace deltacpp::cli {

/// A subcommand's action; returns the process exit code.
using Action = std::function<int()>;

Action AddReadCommand(CLI::App& app);
Action AddHistoryCommand(CLI::App& app);
Action AddDescribeCommand(CLI::App& app);
Action AddFilesCommand(CLI::App& app);
Action AddCreateCommand(CLI::App& app);
Action AddWriteCommand(CLI::App& app);
Action AddAlterCommand(CLI::App& app);
Action AddCheckpointCommand(CLI::App& app);
Action AddDeleteCommand(CLI::App& app);
Action AddUpdateCommand(CLI::App& app);
Action AddMergeCommand(CLI::App& app);
Action AddChangesCommand(CLI::App& app);
Action AddVacuumCommand(CLI::App& app);
Action AddRestoreCommand(CLI::App& app);
Action AddDetailCommand(CLI::App& app);
Action AddOptimizeCommand(CLI::App& app);
Action AddFsckCommand(CLI::App& app);
Action AddConvertCommand(CLI::App& app);
Action AddStreamCommand(CLI::App& app);

/// Splits `a, b,c` into trimmed, non-empty items.
std::vector<std::string> SplitList(const std::string& text);
/// `name=value` (a value in single quotes loses them) as a pair; InvalidArgument naming `what`
/// (the option, e.g. "--property") otherwise.
arrow::Result<std::pair<std::string, std::string>> SplitKeyValue(const std::string& text,
                                                                  const char* what);

/// IOError when a local table path lies under (or is) something that is not a directory, e.g.
/// a regular file, naming it; OK otherwise (other problems are found when the path is used).
arrow::Status CheckTablePath(const std::string& path);

/// Prints the outcome of a row-level operation: the committed version (or that nothing matched
/// and nothing was committed) and each metric as `name: value`. Returns exit code 0.
int PrintOperationOutcome(const std::optional<int64_t>& version,
                          const std::vector<std::pair<std::string, int64_t>>& metrics);

/// `123 B`, `4.5 KiB`, `6.7 MiB`, `1.23 GiB`: a byte count for people.
std::string HumanBytes(int64_t n);

/// Prints `status` to stderr as `deltacpp: error: ...` and returns the exit code.
int ReportError(const arrow::Status& status);

/// Output format option shared by commands (`--format table|csv|json|parquet`, `--output`).
struct OutputChoice {
  std::string format = "table";
  std::string output;
  std::optional<int64_t> limit;
  std::string order_by;  ///< `--order-by` (query commands): sort before printing
  void AddOptions(CLI::App* cmd, bool with_limit);
  /// Writes the reader to stdout or --output in the chosen format.
  arrow::Status Write(arrow::RecordBatchReader& reader) const;
};

}  // namespace deltacpp::cli
