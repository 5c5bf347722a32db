// The LogStore defaults: a streamed put for stores that only implement the buffered one, and a
// names-only listing and a single-file stat made of a listing.
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/memory.h>

#include <algorithm>

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

arrow::Result<std::vector<FileEntry>> LogStore::ListTemporaryFiles(const std::string& dir) {
  return std::vector<FileEntry>{};
}

arrow::Result<std::vector<FileEntry>> LogStore::ListDataDir(const std::string& dir) {
  arrow::fs::FileSelector selector;
  selector.base_dir = dir;
  selector.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto infos, filesystem()->GetFileInfo(selector));
  std::vector<FileEntry> entries;
  entries.reserve(infos.size());
  for (const auto& info : infos) {
    FileEntry entry;
    entry.path = info.path();
    entry.regular = info.type() == arrow::fs::FileType::File;
    entry.directory = info.type() == arrow::fs::FileType::Directory;
    if (entry.regular) entry.size = info.size();
    entry.modification_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     info.mtime().time_since_epoch())
                                     .count();
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  return entries;
}

arrow::Status LogStore::DeleteDataFile(const std::string& path) {
  auto fs = filesystem();
  ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(path));
  if (info.type() == arrow::fs::FileType::NotFound) return arrow::Status::OK();
  if (info.type() == arrow::fs::FileType::Directory) {
    return arrow::Status::IOError("refusing to delete ", path, ": it is a folder, not a file");
  }
  return fs->DeleteFile(path);
}

arrow::Result<bool> LogStore::RemoveDataDirIfEmpty(const std::string& dir) {
  auto fs = filesystem();
  ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(dir));
  if (info.type() != arrow::fs::FileType::Directory) return false;
  arrow::fs::FileSelector selector;
  selector.base_dir = dir;
  selector.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto children, fs->GetFileInfo(selector));
  if (!children.empty()) return false;
  ARROW_RETURN_NOT_OK(fs->DeleteDir(dir));
  return true;
}

}  // namespace deltacpp
