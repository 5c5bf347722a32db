#include "stream/checkpoint_dir.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "util/random_uuid.h"

namespace fs = std::filesystem;

namespace deltacpp::internal {

namespace {

constexpr const char* kFormatLine = "v1\n";

arrow::Status IoError(const std::string& what, const std::string& path, int err) {
  return arrow::Status::IOError(fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

// Batch ids named by the files of `dir` (names of digits only); others are ignored.
std::map<int64_t, std::string> NumberedFiles(const std::string& dir) {
  std::map<int64_t, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.size() > 18 ||
        name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    out[std::stoll(name)] = e.path().string();
  }
  return out;
}

arrow::Result<std::string> ReadVersioned(const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto text, ReadSmallFile(path));
  if (text.rfind(kFormatLine, 0) != 0) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("streaming checkpoint file {} is not in format v1", path));
  }
  std::string body = text.substr(std::strlen(kFormatLine));
  while (!body.empty() && body.back() == '\n') body.pop_back();
  return body;
}

}  // namespace

// Checkpoint files go through the local log store: its replace is the temporary-name, sync,
// rename and directory-sync sequence the log itself relies on.
const std::shared_ptr<LogStore>& LocalStore() {
  static const std::shared_ptr<LogStore> store = MakeLocalLogStore();
  return store;
}

arrow::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return LocalStore()->PutReplace(path, text);
}

arrow::Result<std::string> ReadSmallFile(const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto buffer, LocalStore()->Read(path));
  return buffer->ToString();
}

arrow::Result<std::unique_ptr<CheckpointDir>> CheckpointDir::Open(const std::string& path) {
  std::error_code ec;
  for (const char* sub : {"offsets", "commits", "sources/0"}) {
    fs::create_directories(fs::path(path) / sub, ec);
    if (ec) {
      return arrow::Status::IOError(
          fmt::format("cannot create checkpoint directory {}: {}", path, ec.message()));
    }
  }
  const std::string lock_path = (fs::path(path) / "lock").string();
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot open", lock_path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("checkpoint {} is in use by another running query", path));
    }
    return IoError("cannot lock", lock_path, err);
  }
  std::unique_ptr<CheckpointDir> dir(new CheckpointDir(path, fd));
  // Temporary files of a writer that died mid-write; the lock says no one is writing now.
  for (const char* sub : {"", "offsets", "commits", "sources/0"}) {
    for (const auto& e : fs::directory_iterator(fs::path(path) / sub, ec)) {
      const auto name = e.path().filename().string();
      if (name.size() > 5 && name[0] == '.' && name.substr(name.size() - 4) == ".tmp") {
        fs::remove(e.path(), ec);
      }
    }
  }

  const std::string metadata = (fs::path(path) / "metadata").string();
  if (fs::exists(metadata, ec)) {
    ARROW_ASSIGN_OR_RAISE(auto text, ReadVersioned(metadata));
    if (text.size() != 36) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("streaming checkpoint {}: metadata holds no query id", path));
    }
    dir->query_id_ = text;
  } else {
    dir->query_id_ = RandomUuidV4();
    ARROW_RETURN_NOT_OK(WriteFileAtomically(metadata, kFormatLine + dir->query_id_ + "\n"));
  }
  for (const auto& [id, file] : NumberedFiles((fs::path(path) / "offsets").string())) {
    ARROW_ASSIGN_OR_RAISE(dir->offsets_[id], ReadVersioned(file));
  }
  for (const auto& entry : NumberedFiles((fs::path(path) / "commits").string())) {
    dir->commits_.insert(entry.first);
  }
  if (!dir->commits_.empty()) dir->latest_commit_ = *dir->commits_.rbegin();
  if (dir->latest_commit_ && !dir->offsets_.count(*dir->latest_commit_)) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("streaming checkpoint {}: batch {} is marked finished but its "
                                  "offset is missing",
                                  path, *dir->latest_commit_));
  }
  return dir;
}

CheckpointDir::~CheckpointDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

std::string CheckpointDir::source_state_dir() const {
  return (fs::path(path_) / "sources" / "0").string();
}

std::optional<std::pair<int64_t, std::string>> CheckpointDir::LatestOffset() const {
  if (offsets_.empty()) return std::nullopt;
  return *offsets_.rbegin();
}

arrow::Result<std::optional<std::string>> CheckpointDir::OffsetOf(int64_t batch_id) const {
  auto it = offsets_.find(batch_id);
  if (it == offsets_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> CheckpointDir::LatestCommit() const { return latest_commit_; }

arrow::Status CheckpointDir::WriteOffset(int64_t batch_id, const std::string& end_offset) {
  ARROW_RETURN_NOT_OK(WriteFileAtomically(
      (fs::path(path_) / "offsets" / std::to_string(batch_id)).string(),
      kFormatLine + end_offset + "\n"));
  offsets_[batch_id] = end_offset;
  return arrow::Status::OK();
}

arrow::Status CheckpointDir::WriteCommit(int64_t batch_id, int64_t keep) {
  ARROW_RETURN_NOT_OK(WriteFileAtomically(
      (fs::path(path_) / "commits" / std::to_string(batch_id)).string(), kFormatLine));
  latest_commit_ = batch_id;
  commits_.insert(batch_id);
  // Old entries go, offsets last, so that a crash in between leaves a commit with its offset.
  std::error_code ec;
  const int64_t below = batch_id - keep + 1;
  for (auto it = commits_.begin(); it != commits_.end() && *it < below;) {
    fs::remove(fs::path(path_) / "commits" / std::to_string(*it), ec);
    it = commits_.erase(it);
  }
  for (auto it = offsets_.begin(); it != offsets_.end() && it->first < below;) {
    fs::remove(fs::path(path_) / "offsets" / std::to_string(it->first), ec);
    it = offsets_.erase(it);
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
