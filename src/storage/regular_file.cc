#include "storage/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <arrow/io/file.h>
#include <fmt/core.h>

#include "deltacpp/error.h"

namespace deltacpp::internal {

const char* FileTypeName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown type";
}

arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenRegularFile(
    arrow::fs::FileSystem& fs, const std::string& path) {
  if (fs.type_name() != "local") {
    auto file = fs.OpenInputFile(path);
    if (!file.ok()) {
      auto info = fs.GetFileInfo(path);
      if (info.ok() && info->type() == arrow::fs::FileType::NotFound) {
        return DeltaError(DeltaErrorCode::kMissingFile, "file " + path + " does not exist");
      }
      if (info.ok() && info->type() == arrow::fs::FileType::Directory) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          "file " + path + " is not a regular file (a directory)");
      }
    }
    return file;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string why = std::error_code(err, std::generic_category()).message();
    if (err == ENOENT || err == ENOTDIR) {
      return DeltaError(DeltaErrorCode::kMissingFile,
                        fmt::format("file {} does not exist: {}", path, why));
    }
    return arrow::Status::IOError(fmt::format("cannot open {}: {}", path, why));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return arrow::Status::IOError(fmt::format(
        "cannot stat {}: {}", path, std::error_code(err, std::generic_category()).message()));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return DeltaError(DeltaErrorCode::kCorruptLog, fmt::format("file {} is not a regular file ({})",
                                                               path, FileTypeName(st.st_mode)));
  }
  // Back to blocking reads: O_NONBLOCK was only for open(2).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  // The descriptor belongs to the ReadableFile from here on, also when Open fails.
  ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(fd));
  return std::shared_ptr<arrow::io::RandomAccessFile>(std::move(file));
}

}  // namespace deltacpp::internal
