// The LogStore defaults: a streamed put for stores that only implement the buffered one, and a
// names-only listing and a single-file stat made of a listing.
#include <arrow/io/memory.h>

#include <string_view>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"

namespace deltacpp {

arrow::Result<std::vector<std::string>> LogStore::ListNames(const std::string& dir,
                                                           std::string_view start_after_name) {
  ARROW_ASSIGN_OR_RAISE(auto entries, List(dir, start_after_name));
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (const auto& entry : entries) {
    const auto slash = entry.path.rfind('/');
    names.push_back(slash == std::string::npos ? entry.path : entry.path.substr(slash + 1));
  }
  return names;
}

arrow::Result<std::vector<FileEntry>> LogStore::ListAll(const std::string& dir,
                                                       std::string_view start_after_name) {
  return List(dir, start_after_name);
}

arrow::Result<FileEntry> LogStore::Stat(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (!name.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto entries, List(dir, name));
    for (auto& entry : entries) {
      const auto entry_slash = entry.path.rfind('/');
      std::string_view entry_name(entry.path);
      if (entry_slash != std::string::npos) entry_name.remove_prefix(entry_slash + 1);
      if (entry_name == name) return std::move(entry);
      if (entry_name > name) break;
    }
  }
  return DeltaError(DeltaErrorCode::kMissingFile, "file " + path + " does not exist");
}

arrow::Status LogStore::PutIfAbsentStreaming(const std::string& path,
                                             const ContentWriter& write) {
  ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  ARROW_RETURN_NOT_OK(write(sink));
  ARROW_ASSIGN_OR_RAISE(auto content, sink->Finish());
  return PutIfAbsent(path, std::string_view(content->data_as<char>(),
                                            static_cast<size_t>(content->size())));
}

}  // namespace deltacpp
