#include "storage/local_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace deltacpp::internal {

namespace {

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// fsync through a read-only descriptor: Linux flushes the inode's data whatever the open mode.
arrow::Status SyncPath(const std::string& target, bool directory, const std::string& written) {
  const int fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) {
    return arrow::Status::IOError(written, " was written but opening ", target,
                                  " to sync it failed: ",
                                  std::error_code(errno, std::generic_category()).message());
  }
  int err = 0;
  if (::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err != 0 && !(directory && (err == EINVAL || err == ENOTSUP))) {
    return arrow::Status::IOError(written, " was written but syncing ", target, " failed: ",
                                  std::error_code(err, std::generic_category()).message());
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Status SyncWrittenLocalFile(const arrow::fs::FileSystem& fs, const std::string& path,
                                   const std::vector<std::string>& new_dirs) {
  if (fs.type_name() != "local") return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(SyncPath(path, /*directory=*/false, path));
  ARROW_RETURN_NOT_OK(SyncPath(Parent(path), /*directory=*/true, path));
  for (const std::string& dir : new_dirs) {
    ARROW_RETURN_NOT_OK(SyncPath(Parent(dir), /*directory=*/true, path));
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
