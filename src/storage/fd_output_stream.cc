#include "storage/fd_output_stream.h"

#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace deltacpp::internal {

namespace {

arrow::Status ErrnoError(std::string_view what, const std::string& path, int err) {
  return arrow::Status::IOError(what, " ", path, ": ",
                                std::error_code(err, std::generic_category()).message());
}

}  // namespace

FdOutputStream::FdOutputStream(int fd, std::string path, int64_t buffer_size)
    : fd_(fd), path_(std::move(path)), buffer_size_(buffer_size > 0 ? buffer_size : 1) {}

FdOutputStream::~FdOutputStream() {
  if (fd_ >= 0) ::close(fd_);
}

arrow::Status FdOutputStream::CheckOpen() const {
  if (fd_ < 0) return arrow::Status::Invalid("write to ", path_, " after it was closed");
  return arrow::Status::OK();
}

arrow::Status FdOutputStream::WriteToFd(const char* data, int64_t nbytes) {
  while (nbytes > 0) {
    ssize_t n = ::write(fd_, data, static_cast<size_t>(nbytes));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("failed to write", path_, errno);
    }
    data += n;
    nbytes -= n;
  }
  return arrow::Status::OK();
}

arrow::Status FdOutputStream::Write(const void* data, int64_t nbytes) {
  ARROW_RETURN_NOT_OK(CheckOpen());
  if (nbytes < 0) return arrow::Status::Invalid("negative write size for ", path_);
  const char* bytes = static_cast<const char*>(data);
  if (static_cast<int64_t>(buffer_.size()) + nbytes > buffer_size_) {
    ARROW_RETURN_NOT_OK(Flush());
    if (nbytes >= buffer_size_) {
      ARROW_RETURN_NOT_OK(WriteToFd(bytes, nbytes));
      position_ += nbytes;
      return arrow::Status::OK();
    }
  }
  buffer_.insert(buffer_.end(), bytes, bytes + nbytes);
  position_ += nbytes;
  return arrow::Status::OK();
}

arrow::Status FdOutputStream::Flush() {
  ARROW_RETURN_NOT_OK(CheckOpen());
  if (buffer_.empty()) return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(WriteToFd(buffer_.data(), static_cast<int64_t>(buffer_.size())));
  buffer_.clear();
  return arrow::Status::OK();
}

arrow::Status FdOutputStream::Close() {
  if (fd_ < 0) return arrow::Status::OK();
  arrow::Status status = Flush();
  if (status.ok() && ::fsync(fd_) != 0) status = ErrnoError("failed to sync", path_, errno);
  // close(2) can report deferred write errors, so its result counts too.
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("failed to close", path_, errno);
  buffer_ = {};
  return status;
}

arrow::Result<int64_t> FdOutputStream::Tell() const { return position_; }

}  // namespace deltacpp::internal
