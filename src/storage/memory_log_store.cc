#include <arrow/buffer.h>
#include <arrow/filesystem/mockfs.h>
#include <arrow/io/memory.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "util/clock.h"
#include "deltacpp/error.h"
#include "deltacpp/storage.h"

namespace deltacpp {

namespace {

class MemoryLogStore final : public LogStore {
 public:
  MemoryLogStore()
      : fs_(std::make_shared<arrow::fs::internal::MockFileSystem>(
            std::chrono::time_point_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now()))) {}

  arrow::Result<std::vector<FileEntry>> List(const std::string& dir_in,
                                             std::string_view start_after_name) override {
    std::string dir = dir_in;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string prefix = dir.empty() ? "" : (dir == "/" ? "/" : dir + "/");
    std::vector<FileEntry> entries;
    std::lock_guard<std::mutex> lock(mutex_);
    // Keys sharing the prefix are contiguous in the map and already in name order; keys of
    // nested directories are skipped.
    for (auto it = files_.lower_bound(prefix + std::string(start_after_name));
         it != files_.end() && it->first.starts_with(prefix); ++it) {
      std::string_view name = std::string_view(it->first).substr(prefix.size());
      if (name.empty() || name.find('/') != std::string_view::npos) continue;
      entries.push_back(FileEntry{it->first, it->second.data->size(), it->second.mtime_ms});
    }
    return entries;
  }

  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = files_.find(path);
    if (it == files_.end()) {
      return DeltaError(DeltaErrorCode::kMissingFile,
                        "file " + path + " does not exist in the in-memory store");
    }
    return it->second.data;
  }

  arrow::Status PutIfAbsent(const std::string& path, std::string_view data) override {
    // Copy outside the lock: the data can be large and the copy does not need the map.
    return Insert(path, arrow::Buffer::FromString(std::string(data)));
  }

  arrow::Status PutIfAbsentStreaming(const std::string& path,
                                     const ContentWriter& write) override {
    {
      // A name already taken loses anyway; finding out first saves producing the content.
      std::lock_guard<std::mutex> lock(mutex_);
      if (files_.count(path) > 0) return VersionExists(path);
    }
    // The content is produced outside the lock; it only becomes visible whole, in Insert.
    ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
    ARROW_RETURN_NOT_OK(write(sink));
    ARROW_ASSIGN_OR_RAISE(auto content, sink->Finish());
    return Insert(path, std::move(content));
  }

  arrow::Status PutReplace(const std::string& path, std::string_view data) override {
    auto buffer = arrow::Buffer::FromString(std::string(data));
    std::lock_guard<std::mutex> lock(mutex_);
    files_[path] = File{std::move(buffer), internal::WallClockMillis()};
    return arrow::Status::OK();
  }

  arrow::Status Delete(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mutex_);
    files_.erase(path);
    return arrow::Status::OK();
  }

  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override { return fs_; }

 private:
  static arrow::Status VersionExists(const std::string& path) {
    return DeltaError(
        DeltaErrorCode::kVersionExists,
        "file " + path + " already exists (written concurrently by another writer)");
  }

  arrow::Status Insert(const std::string& path, std::shared_ptr<arrow::Buffer> content) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] =
        files_.try_emplace(path, File{std::move(content), internal::WallClockMillis()});
    if (!inserted) return VersionExists(path);
    return arrow::Status::OK();
  }

  struct File {
    std::shared_ptr<arrow::Buffer> data;
    int64_t mtime_ms = 0;
  };

  std::mutex mutex_;
  std::map<std::string, File> files_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
};

}  // namespace

std::shared_ptr<LogStore> MakeMemoryLogStore() { return std::make_shared<MemoryLogStore>(); }

}  // namespace deltacpp
