#include "write_progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <iostream>
#include <string>

namespace deltacpp::cli {

std::string FormatWriteProgress(const WriteProgress& p) {
  return fmt::format("wrote {} rows, {:.1f} MiB in {} file{}{}", p.rows, p.bytes / 1048576.0,
                     p.files, p.files == 1 ? "" : "s", p.done ? "; committing" : "");
}

std::function<void(const WriteProgress&)> TerminalWriteProgress() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](const WriteProgress& p) {
    std::cerr << "\r" << FormatWriteProgress(p) << (p.done ? "\n" : "") << std::flush;
  };
}

}  // namespace deltacpp::cli
