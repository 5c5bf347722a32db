// Runs the real `deltacpp` command-line binary from tests.
#pragma once

#include <string>

#include "support/temp_dir.h"

namespace deltacpp::testing {

/// What a CLI run left behind: its exit code (-1 when it could not run or did not exit
/// normally) and everything it wrote to stdout and stderr.
struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs the CLI with `args` (already shell-quoted), stdout captured through a pipe and stderr
/// through a file in `scratch`. With `timeout_seconds > 0` the process is killed after that
/// long (exit code 124, or 137 when it ignored SIGTERM, as timeout(1) reports it).
RunResult RunCli(const std::string& args, const TempDir& scratch, int timeout_seconds = 0);

}  // namespace deltacpp::testing
