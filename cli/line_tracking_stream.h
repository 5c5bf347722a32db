// A pass-through input stream that remembers where the blank lines are, so that a JSON Lines
// reader's row number (which skips blank lines) can be told as the line an editor shows.
#pragma once

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace deltacpp::cli {

/// Where the blank (empty or white-space) lines of a stream fall among its other lines.
class LineMap {
 public:
  /// The 1-based line of the 0-based `row`, counting only the lines read so far.
  int64_t LineOfRow(int64_t row) const;
  void AddBlankLine(int64_t rows_before);

 private:
  mutable std::mutex mutex_;
  std::vector<int64_t> blank_after_rows_;  // for each blank line: non-blank lines before it
};

/// Serves `inner` unchanged while noting its blank lines in `lines()`.
class LineTrackingStream : public arrow::io::InputStream {
 public:
  explicit LineTrackingStream(std::shared_ptr<arrow::io::InputStream> inner)
      : inner_(std::move(inner)), lines_(std::make_shared<LineMap>()) {}
  arrow::Status Close() override { return inner_->Close(); }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override;
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override;
  const std::shared_ptr<LineMap>& lines() const { return lines_; }

 private:
  void Scan(const uint8_t* data, int64_t size);

  std::shared_ptr<arrow::io::InputStream> inner_;
  std::shared_ptr<LineMap> lines_;
  int64_t rows_ = 0;          // non-blank lines ended so far
  bool line_has_text_ = false;
};

}  // namespace deltacpp::cli
