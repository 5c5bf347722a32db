// An arrow::io::OutputStream over a file descriptor whose Close() makes the content durable.
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <string>
#include <vector>

namespace deltacpp::internal {

/// Writes to an open file descriptor it owns through a bounded buffer (at most `buffer_size`
/// bytes are held; larger writes go straight to the descriptor). Close() flushes, fsyncs and
/// closes, so a successful Close() means the bytes are on disk; it is idempotent. Destroying
/// the stream without Close() drops the buffered bytes and closes the descriptor (for aborting
/// a write). Errors are IOError naming `path`. Not thread-safe.
class FdOutputStream final : public arrow::io::OutputStream {
 public:
  static constexpr int64_t kDefaultBufferSize = 1 << 20;

  FdOutputStream(int fd, std::string path, int64_t buffer_size = kDefaultBufferSize);
  ~FdOutputStream() override;
  FdOutputStream(const FdOutputStream&) = delete;
  FdOutputStream& operator=(const FdOutputStream&) = delete;

  arrow::Status Write(const void* data, int64_t nbytes) override;
  /// Writes the buffered bytes to the descriptor (no fsync).
  arrow::Status Flush() override;
  arrow::Status Close() override;
  bool closed() const override { return fd_ < 0; }
  arrow::Result<int64_t> Tell() const override;

  const std::string& path() const { return path_; }

 private:
  arrow::Status CheckOpen() const;
  arrow::Status WriteToFd(const char* data, int64_t nbytes);

  int fd_;
  std::string path_;
  int64_t buffer_size_;
  std::vector<char> buffer_;  // grows up to buffer_size_, so small contents stay small
  int64_t position_ = 0;      // bytes accepted so far (written or buffered)
};

}  // namespace deltacpp::internal
