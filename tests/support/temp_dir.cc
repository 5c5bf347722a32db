#include "support/temp_dir.h"

#include <stdlib.h>

#include <stdexcept>

namespace deltacpp::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "deltacpp-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ConformanceDir() { return std::string(DELTACPP_SHARED_DIR) + "/conformance"; }

}  // namespace deltacpp::testing
