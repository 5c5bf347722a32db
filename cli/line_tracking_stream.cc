#include "line_tracking_stream.h"

#include <algorithm>

namespace deltacpp::cli {

int64_t LineMap::LineOfRow(int64_t row) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto blanks_before = std::upper_bound(blank_after_rows_.begin(),
                                              blank_after_rows_.end(), row) -
                             blank_after_rows_.begin();
  return row + 1 + blanks_before;
}

void LineMap::AddBlankLine(int64_t rows_before) {
  std::lock_guard<std::mutex> lock(mutex_);
  blank_after_rows_.push_back(rows_before);
}

void LineTrackingStream::Scan(const uint8_t* data, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    const uint8_t c = data[i];
    if (c == '\n') {
      if (line_has_text_) {
        ++rows_;
      } else {
        lines_->AddBlankLine(rows_);
      }
      line_has_text_ = false;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      line_has_text_ = true;
    }
  }
}

arrow::Result<int64_t> LineTrackingStream::Read(int64_t nbytes, void* out) {
  ARROW_ASSIGN_OR_RAISE(int64_t n, inner_->Read(nbytes, out));
  Scan(static_cast<const uint8_t*>(out), n);
  return n;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> LineTrackingStream::Read(int64_t nbytes) {
  ARROW_ASSIGN_OR_RAISE(auto buffer, inner_->Read(nbytes));
  Scan(buffer->data(), buffer->size());
  return buffer;
}

}  // namespace deltacpp::cli
