// An input stream that serves a buffer already read from a stream and then the rest of it.
#pragma once

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include <memory>

namespace deltacpp::cli {

/// Serves `head` first and then the rest of `tail`: lets the first block of a (possibly
/// unseekable) input be looked at before the real reader starts.
class PrefixedInputStream : public arrow::io::InputStream {
 public:
  PrefixedInputStream(std::shared_ptr<arrow::Buffer> head,
                      std::shared_ptr<arrow::io::InputStream> tail)
      : head_(std::move(head)), tail_(std::move(tail)) {}
  arrow::Status Close() override {
    closed_ = true;
    return tail_->Close();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override;

 private:
  std::shared_ptr<arrow::Buffer> head_;
  int64_t head_offset_ = 0;
  std::shared_ptr<arrow::io::InputStream> tail_;
  int64_t position_ = 0;
  bool closed_ = false;
};

}  // namespace deltacpp::cli
