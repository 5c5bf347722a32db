// Temporary directories for tests, removed when the object goes away.
#pragma once
#include <filesystem>
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

/// Root of the shared conformance corpus (`<repo>/../shared/conformance`).
std::string ConformanceDir();

}  // namespace deltacpp::testing
