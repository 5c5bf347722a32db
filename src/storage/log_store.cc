// The LogStore defaults: a streamed put for stores that only implement the buffered one.
#include <arrow/io/memory.h>

#include <string_view>

#include "deltacpp/storage.h"

namespace deltacpp {

arrow::Status LogStore::PutIfAbsentStreaming(const std::string& path,
                                             const ContentWriter& write) {
  ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  ARROW_RETURN_NOT_OK(write(sink));
  ARROW_ASSIGN_OR_RAISE(auto content, sink->Finish());
  return PutIfAbsent(path, std::string_view(content->data_as<char>(),
                                            static_cast<size_t>(content->size())));
}

}  // namespace deltacpp
