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
/// through a file in `scratch`.
RunResult RunCli(const std::string& args, const TempDir& scratch);

}  // namespace deltacpp::testing
