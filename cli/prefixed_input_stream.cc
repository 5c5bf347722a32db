#include "prefixed_input_stream.h"

#include <algorithm>
#include <cstring>

namespace deltacpp::cli {

arrow::Result<int64_t> PrefixedInputStream::Read(int64_t nbytes, void* out) {
  int64_t done = 0;
  if (head_offset_ < head_->size()) {
    done = std::min(nbytes, head_->size() - head_offset_);
    std::memcpy(out, head_->data() + head_offset_, static_cast<size_t>(done));
    head_offset_ += done;
  }
  if (done < nbytes) {
    ARROW_ASSIGN_OR_RAISE(int64_t more,
                          tail_->Read(nbytes - done, static_cast<uint8_t*>(out) + done));
    done += more;
  }
  position_ += done;
  return done;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> PrefixedInputStream::Read(int64_t nbytes) {
  ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateResizableBuffer(nbytes));
  ARROW_ASSIGN_OR_RAISE(int64_t n, Read(nbytes, buffer->mutable_data()));
  ARROW_RETURN_NOT_OK(buffer->Resize(n));
  return std::shared_ptr<arrow::Buffer>(std::move(buffer));
}

}  // namespace deltacpp::cli
