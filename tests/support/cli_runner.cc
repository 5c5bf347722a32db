#include "support/cli_runner.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace deltacpp::testing {

RunResult RunCli(const std::string& args, const TempDir& scratch, int timeout_seconds) {
  std::string err_file = scratch.str() + "/stderr.txt";
  std::string cmd = std::string(DELTACPP_CLI_PATH) + " " + args + " 2>" + err_file;
  if (timeout_seconds > 0) {
    cmd = "timeout -k 5 " + std::to_string(timeout_seconds) + " " + cmd;
  }
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  return r;
}

}  // namespace deltacpp::testing
