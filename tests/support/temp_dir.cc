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

std::map<std::string, int64_t> DirectoryTree(const std::string& root) {
  std::map<std::string, int64_t> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto rel = std::filesystem::relative(it->path(), root).string();
    out[rel] = it->is_regular_file() ? static_cast<int64_t>(it->file_size()) : -1;
  }
  return out;
}

std::string ConformanceDir() { return std::string(DELTACPP_SHARED_DIR) + "/conformance"; }

}  // namespace deltacpp::testing
