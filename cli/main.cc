// The `deltacpp` command: parses arguments and dispatches to one subcommand per file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "deltacpp/version.h"

int main(int argc, char** argv) {
  CLI::App app{"deltacpp: a native Delta Lake engine"};
  bool show_version = false;
  app.add_flag("--version", show_version, "Print the library version");
  CLI11_PARSE(app, argc, argv);
  if (show_version) {
    fmt::print("deltacpp {}\n", deltacpp::kVersion);
    return 0;
  }
  fmt::print("{}", app.help());
  return 0;
}
