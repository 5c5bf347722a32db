// Temporary directories for tests, removed when the object goes away.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace deltacpp::testing {

/// A fresh directory under the system temp dir, deleted recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// Every entry under `root` (files with their sizes, directories as -1), relative to it; empty
/// when `root` does not exist. Equal listings before and after an operation mean it added,
/// removed or resized nothing.
std::map<std::string, int64_t> DirectoryTree(const std::string& root);

/// Root of the shared conformance corpus (`<repo>/../shared/conformance`).
std::string ConformanceDir();

}  // namespace deltacpp::testing
