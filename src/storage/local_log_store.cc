#include <arrow/buffer.h>
#include <arrow/filesystem/localfs.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "storage/fd_output_stream.h"
#include "storage/regular_file.h"

namespace deltacpp {

namespace {

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

arrow::Status ErrnoError(std::string_view what, const std::string& path, int err) {
  return arrow::Status::IOError(what, " ", path, ": ", ErrnoText(err));
}

arrow::Status VersionExists(const std::string& path) {
  return DeltaError(DeltaErrorCode::kVersionExists,
                    "file " + path + " already exists (written concurrently by another writer)");
}

// Trailing slashes would otherwise produce "dir//name" entry paths.
std::string StripTrailingSlashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

arrow::Result<std::pair<std::string, std::string>> SplitParent(const std::string& path) {
  auto slash = path.rfind('/');
  std::pair<std::string, std::string> parts;
  if (slash == std::string::npos) {
    parts = {".", path};
  } else if (slash == 0) {
    parts = {"/", path.substr(1)};
  } else {
    parts = {path.substr(0, slash), path.substr(slash + 1)};
  }
  if (parts.second.empty() || parts.second == "." || parts.second == "..") {
    return arrow::Status::Invalid("cannot write ", path, ": not a file path");
  }
  return parts;
}

// Writers leave these only while a put is in flight (or after a crash); they are never part of
// the directory's visible content.
bool IsTempName(std::string_view name) {
  return name.size() > 5 && name.front() == '.' && name.ends_with(".tmp");
}

int64_t ToMillis(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

arrow::Status SyncDir(const std::string& dir, const std::string& written_path) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) {
    return arrow::Status::IOError(written_path, " was written but opening directory ", dir,
                                  " to sync it failed: ", ErrnoText(errno));
  }
  if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != ENOTSUP) {
    // EINVAL/ENOTSUP: the filesystem has no directory sync; nothing more can be done there.
    return arrow::Status::IOError(written_path, " was written but syncing directory ", dir,
                                  " failed: ", ErrnoText(errno));
  }
  return arrow::Status::OK();
}

arrow::Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  // A concurrent writer may have created it between the check and the mkdir.
  if (ec && !std::filesystem::is_directory(dir)) {
    return arrow::Status::IOError("failed to create directory ", dir, ": ", ec.message());
  }
  return arrow::Status::OK();
}

// A hidden temporary file next to a target path, written through a stream. Removed again unless
// released (after a rename) or removed explicitly (after a link).
class TempFile {
 public:
  ~TempFile() {
    stream_.reset();  // closes the descriptor before the name goes
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  // Creates the file and runs `write` on a stream over it, then flushes, fsyncs and closes it.
  arrow::Status Write(const std::string& dir, const std::string& name, const std::string& target,
                      const LogStore::ContentWriter& write) {
    ARROW_RETURN_NOT_OK(Create(dir, name, target));
    ARROW_RETURN_NOT_OK(write(stream_));
    ARROW_RETURN_NOT_OK(stream_->Close());
    stream_.reset();
    return arrow::Status::OK();
  }

  const std::string& path() const { return path_; }

  // After a rename the temporary name no longer exists, so there is nothing to remove.
  void Release() { path_.clear(); }

  // Removing it before the directory sync makes the removal durable together with the publish.
  void Remove() {
    if (!path_.empty()) ::unlink(path_.c_str());
    path_.clear();
  }

 private:
  arrow::Status Create(const std::string& dir, const std::string& name,
                       const std::string& target) {
    // Random bytes come from the kernel on every call, so forked processes never share names;
    // O_EXCL turns any remaining collision into a retry.
    for (int attempt = 0;; ++attempt) {
      uint64_t rnd = 0;
      if (::getrandom(&rnd, sizeof(rnd), 0) != static_cast<ssize_t>(sizeof(rnd))) {
        rnd ^= static_cast<uint64_t>(::getpid()) << 32 ^ static_cast<uint64_t>(attempt);
      }
      char suffix[32];
      std::snprintf(suffix, sizeof(suffix), ".%016llx.tmp", static_cast<unsigned long long>(rnd));
      std::string candidate = (dir == "/" ? "" : dir) + "/." + name + suffix;
      int raw = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (raw >= 0) {
        path_ = candidate;
        // Write errors name the target the caller knows, and the temporary file.
        stream_ = std::make_shared<internal::FdOutputStream>(
            raw, target + " (temporary file " + candidate + ")");
        return arrow::Status::OK();
      }
      if (errno != EEXIST || attempt >= 16) {
        return ErrnoError("failed to create temporary file for", target, errno);
      }
    }
  }

  std::string path_;
  std::shared_ptr<internal::FdOutputStream> stream_;
};

// The content writer of a buffered put.
LogStore::ContentWriter WriteBytes(std::string_view data) {
  return [data](const std::shared_ptr<arrow::io::OutputStream>& out) {
    return out->Write(data.data(), static_cast<int64_t>(data.size()));
  };
}

class LocalLogStore final : public LogStore {
 public:
  LocalLogStore() : fs_(std::make_shared<arrow::fs::LocalFileSystem>()) {}

  arrow::Result<std::vector<FileEntry>> List(const std::string& dir_in,
                                             std::string_view start_after_name) override {
    return ListEntries(dir_in, start_after_name, /*include_special=*/false);
  }

  arrow::Result<std::vector<FileEntry>> ListAll(const std::string& dir_in,
                                                std::string_view start_after_name) override {
    return ListEntries(dir_in, start_after_name, /*include_special=*/true);
  }

  arrow::Result<std::vector<FileEntry>> ListEntries(const std::string& dir_in,
                                                    std::string_view start_after_name,
                                                    bool include_special) {
    const std::string dir = StripTrailingSlashes(dir_in);
    std::vector<FileEntry> entries;
    ARROW_ASSIGN_OR_RAISE(auto names, ReadNames(dir, start_after_name, /*regular_only=*/false));
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    entries.reserve(names.size());
    for (auto& name : names) {
      FileEntry entry;
      entry.path = prefix + name;
      struct stat st;
      if (::stat(entry.path.c_str(), &st) != 0) {
        // Deleted between readdir and stat: it is simply no longer part of the listing.
        if (errno == ENOENT) continue;
        return ErrnoError("failed to stat", entry.path, errno);
      }
      if (!S_ISREG(st.st_mode)) {
        if (include_special) {
          entry.regular = false;
          entries.push_back(std::move(entry));
        }
        continue;
      }
      entry.size = static_cast<int64_t>(st.st_size);
      entry.modification_time_ms = ToMillis(st.st_mtim);
      entries.push_back(std::move(entry));
    }
    return entries;
  }

  arrow::Result<std::vector<std::string>> ListNames(const std::string& dir_in,
                                                    std::string_view start_after_name) override {
    return ReadNames(StripTrailingSlashes(dir_in), start_after_name, /*regular_only=*/true);
  }

  arrow::Result<FileEntry> Stat(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT || err == ENOTDIR) {
        return DeltaError(DeltaErrorCode::kMissingFile,
                          "file " + path + " does not exist: " + ErrnoText(err));
      }
      return ErrnoError("failed to stat", path, err);
    }
    if (!S_ISREG(st.st_mode)) {
      return arrow::Status::IOError("file ", path, " is not a regular file (",
                                    internal::FileTypeName(st.st_mode), ")");
    }
    FileEntry entry;
    entry.path = path;
    entry.size = static_cast<int64_t>(st.st_size);
    entry.modification_time_ms = ToMillis(st.st_mtim);
    return entry;
  }

  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) override {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) {
      const int err = errno;
      if (err == ENOENT || err == ENOTDIR) {
        return DeltaError(DeltaErrorCode::kMissingFile,
                          "file " + path + " does not exist: " + ErrnoText(err));
      }
      return ErrnoError("failed to open", path, err);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return ErrnoError("failed to stat", path, errno);
    if (!S_ISREG(st.st_mode)) {
      return arrow::Status::IOError("failed to read ", path, ": not a regular file (",
                                    internal::FileTypeName(st.st_mode), ")");
    }
    // One spare byte lets the read that sees EOF happen without growing the buffer; reading to
    // EOF rather than trusting st_size copes with a file that changed after the stat.
    int64_t capacity = static_cast<int64_t>(st.st_size) + 1;
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateResizableBuffer(capacity));
    int64_t filled = 0;
    while (true) {
      if (filled == capacity) {
        capacity *= 2;
        ARROW_RETURN_NOT_OK(buffer->Resize(capacity, /*shrink_to_fit=*/false));
      }
      ssize_t n = ::read(fd.get(), buffer->mutable_data() + filled,
                         static_cast<size_t>(capacity - filled));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("failed to read", path, errno);
      }
      if (n == 0) break;
      filled += n;
    }
    ARROW_RETURN_NOT_OK(buffer->Resize(filled, /*shrink_to_fit=*/false));
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }

  arrow::Status PutIfAbsent(const std::string& path, std::string_view data) override {
    return PutIfAbsentStreaming(path, WriteBytes(data));
  }

  arrow::Status PutIfAbsentStreaming(const std::string& path,
                                     const ContentWriter& write) override {
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitParent(path));
    const auto& [dir, name] = parts;
    // A name already taken loses anyway; finding out first saves producing the content.
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) return VersionExists(path);
    ARROW_RETURN_NOT_OK(EnsureDir(dir));
    TempFile temp;
    ARROW_RETURN_NOT_OK(temp.Write(dir, name, path, write));
    // link(2) publishes the complete file under its final name or fails if the name is taken,
    // which rename(2) cannot do without overwriting.
    if (::link(temp.path().c_str(), path.c_str()) != 0) {
      int err = errno;
      if (err == EEXIST) return VersionExists(path);
      ARROW_RETURN_NOT_OK(PublishWithoutLink(temp, path, err));
    }
    temp.Remove();
    return SyncDir(dir, path);
  }

  arrow::Status PutReplace(const std::string& path, std::string_view data) override {
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitParent(path));
    const auto& [dir, name] = parts;
    ARROW_RETURN_NOT_OK(EnsureDir(dir));
    TempFile temp;
    ARROW_RETURN_NOT_OK(temp.Write(dir, name, path, WriteBytes(data)));
    if (::rename(temp.path().c_str(), path.c_str()) != 0) {
      return ErrnoError("failed to replace", path, errno);
    }
    temp.Release();
    return SyncDir(dir, path);
  }

  arrow::Status Delete(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoError("failed to delete", path, errno);
    }
    return arrow::Status::OK();
  }

  arrow::Result<std::vector<FileEntry>> ListDataDir(const std::string& dir_in) override {
    const std::string dir = StripTrailingSlashes(dir_in);
    std::vector<FileEntry> entries;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
      if (errno == ENOENT) return entries;
      return ErrnoError("failed to list directory", dir, errno);
    }
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    while (true) {
      errno = 0;
      struct dirent* ent = ::readdir(d);
      if (ent == nullptr) {
        const int err = errno;
        ::closedir(d);
        if (err != 0) return ErrnoError("failed to list directory", dir, err);
        break;
      }
      std::string_view name(ent->d_name);
      if (name == "." || name == "..") continue;
      FileEntry entry;
      entry.path = prefix + std::string(name);
      struct stat st;
      // lstat: a symbolic link is reported as itself, never followed.
      if (::lstat(entry.path.c_str(), &st) != 0) {
        if (errno == ENOENT) continue;  // gone between readdir and lstat
        const int err = errno;
        ::closedir(d);
        return ErrnoError("failed to stat", entry.path, err);
      }
      entry.regular = S_ISREG(st.st_mode);
      entry.directory = S_ISDIR(st.st_mode);
      if (entry.regular) entry.size = static_cast<int64_t>(st.st_size);
      entry.modification_time_ms = ToMillis(st.st_mtim);
      entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(),
              [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
    return entries;
  }

  arrow::Status DeleteDataFile(const std::string& path) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return arrow::Status::OK();
      return ErrnoError("failed to stat", path, errno);
    }
    if (S_ISDIR(st.st_mode)) {
      return arrow::Status::IOError("refusing to delete ", path, ": it is a folder, not a file");
    }
    return Delete(path);
  }

  arrow::Result<bool> RemoveDataDirIfEmpty(const std::string& dir) override {
    if (::rmdir(dir.c_str()) == 0) return true;
    const int err = errno;
    if (err == ENOTEMPTY || err == EEXIST || err == ENOENT || err == ENOTDIR) return false;
    return ErrnoError("failed to remove directory", dir, err);
  }

  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override { return fs_; }

  arrow::Result<std::vector<FileEntry>> ListTemporaryFiles(const std::string& dir) override {
    std::vector<FileEntry> out;
    ARROW_RETURN_NOT_OK(ForEachEntry(dir, [&](const struct dirent& ent) {
      if (!IsTempName(ent.d_name)) return;
      FileEntry entry;
      entry.path = (dir == "/" ? "" : dir) + "/" + ent.d_name;
      struct stat st;
      if (::lstat(entry.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
      entry.size = st.st_size;
      entry.modification_time_ms = ToMillis(st.st_mtim);
      out.push_back(std::move(entry));
    }));
    std::sort(out.begin(), out.end(),
              [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
    return out;
  }

 private:
  // Sorted names in `dir` from `start_after_name` on, without dot-dirs and in-flight temporary
  // files. With `regular_only`, entries the directory reports as something other than a
  // regular file are left out (those it cannot classify are stat'ed).
  static arrow::Result<std::vector<std::string>> ReadNames(const std::string& dir,
                                                           std::string_view start_after_name,
                                                           bool regular_only) {
    std::vector<std::string> names;
    ARROW_RETURN_NOT_OK(ForEachEntry(dir, [&](const struct dirent& ent) {
      std::string_view name(ent.d_name);
      if (name == "." || name == ".." || IsTempName(name)) return;
      if (!start_after_name.empty() && name < start_after_name) return;
      if (regular_only && ent.d_type != DT_REG) {
        if (ent.d_type != DT_UNKNOWN) return;
        struct stat st;
        const std::string path = (dir == "/" ? "" : dir) + "/" + std::string(name);
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
      }
      names.emplace_back(name);
    }));
    std::sort(names.begin(), names.end());
    return names;
  }

  // Calls `visit` for every entry of `dir` (unsorted, "." and ".." included); a missing
  // directory has none.
  template <typename Visit>
  static arrow::Status ForEachEntry(const std::string& dir, Visit&& visit) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
      if (errno == ENOENT) return arrow::Status::OK();
      return ErrnoError("failed to list directory", dir, errno);
    }
    while (true) {
      errno = 0;
      struct dirent* ent = ::readdir(d);
      if (ent == nullptr) {
        const int err = errno;
        ::closedir(d);
        if (err != 0) return ErrnoError("failed to list directory", dir, err);
        return arrow::Status::OK();
      }
      visit(*ent);
    }
  }

  // Some filesystems (FAT, certain FUSE and network mounts) have no hard links; a no-replace
  // rename is equally atomic there.
  static arrow::Status PublishWithoutLink(TempFile& temp, const std::string& path, int link_err) {
    const bool no_links = link_err == EPERM || link_err == ENOTSUP || link_err == EOPNOTSUPP ||
                          link_err == EMLINK || link_err == ENOSYS;
#ifdef RENAME_NOREPLACE
    if (no_links) {
      if (::renameat2(AT_FDCWD, temp.path().c_str(), AT_FDCWD, path.c_str(),
                      RENAME_NOREPLACE) == 0) {
        temp.Release();
        return arrow::Status::OK();
      }
      if (errno == EEXIST) return VersionExists(path);
      return arrow::Status::IOError("failed to publish ", path, ": link: ", ErrnoText(link_err),
                                    "; no-replace rename: ", ErrnoText(errno));
    }
#endif
    (void)no_links;
    return ErrnoError("failed to publish", path, link_err);
  }

  std::shared_ptr<arrow::fs::FileSystem> fs_;
};

}  // namespace

std::shared_ptr<LogStore> MakeLocalLogStore() { return std::make_shared<LocalLogStore>(); }

}  // namespace deltacpp
