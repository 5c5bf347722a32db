// Storage for the Delta log: list a prefix in sorted order, read a file, atomic put-if-absent
// (of a buffer or of streamed content).
#pragma once

#include <arrow/buffer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp {

/// One entry of a listing.
struct FileEntry {
  std::string path;               ///< full path (same form as the listed directory + "/" + name)
  int64_t size = 0;
  int64_t modification_time_ms = 0;  ///< milliseconds since the epoch
  /// False for a directory, FIFO, socket, device or symbolic link (only ListAll and
  /// ListDataDir return those).
  bool regular = true;
  /// True for a directory (ListDataDir only; a symbolic link to one is not a directory).
  bool directory = false;
};

/// The log store: the only way deltacpp touches `_delta_log/`. Implementations are safe to call
/// from several threads at once.
class LogStore {
 public:
  virtual ~LogStore() = default;

  /// Files directly inside `dir` whose name is >= `start_after_name` (all files when empty),
  /// sorted by name. A missing directory is an empty listing, not an error.
  virtual arrow::Result<std::vector<FileEntry>> List(const std::string& dir,
                                                     std::string_view start_after_name = {}) = 0;

  /// Like List, but entries that are not regular files (directories, FIFOs, sockets, devices)
  /// are listed too, with `regular` false and no size or time, so a reader can refuse such an
  /// entry under a log file's name instead of overlooking it. The default returns List's
  /// entries (for stores that hold nothing but regular files).
  virtual arrow::Result<std::vector<FileEntry>> ListAll(const std::string& dir,
                                                        std::string_view start_after_name = {});

  /// The bare names (not paths) of the regular files `List` would return, without their sizes
  /// and times: cheaper where those cost a request per file. The default takes them from List.
  virtual arrow::Result<std::vector<std::string>> ListNames(const std::string& dir,
                                                            std::string_view start_after_name = {});

  /// Whole content of a file. A missing file is an IOError carrying DeltaErrorCode::kMissingFile.
  virtual arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) = 0;

  /// The listing entry of one file (size and modification time) without listing its directory.
  /// A missing file is DeltaErrorCode::kMissingFile; an entry that is not a regular file (a
  /// directory, FIFO, ...) is an IOError saying so, so that a caller probing for the next log
  /// file does not take it for an absent one. The
  /// default implementation lists the directory from the file's name on; the local store asks
  /// the filesystem for that one file.
  virtual arrow::Result<FileEntry> Stat(const std::string& path);

  /// Writes `data` at `path` only if nothing is there, atomically: readers see either no file or
  /// the whole file. Losing to an existing file is DeltaErrorCode::kVersionExists and leaves the
  /// existing file untouched. Creates missing parent directories.
  virtual arrow::Status PutIfAbsent(const std::string& path, std::string_view data) = 0;

  /// Produces the content of a streamed put by writing it to `out`. `out` is only valid during
  /// the call; the writer may Close() it (or leave that to the store) but must not keep it. An
  /// error it returns aborts the put.
  using ContentWriter =
      std::function<arrow::Status(const std::shared_ptr<arrow::io::OutputStream>& out)>;

  /// Like PutIfAbsent, but the content is produced by `write` into a stream, so large files
  /// (checkpoints) never have to sit in memory whole. Same atomicity: readers see no file or the
  /// whole file; losing to an existing file is DeltaErrorCode::kVersionExists and leaves it
  /// untouched (the store may report that before calling `write` at all). When `write` fails,
  /// or writing, syncing or publishing the content fails, nothing is left at `path` and the
  /// writer's error (or the I/O error naming `path`) is returned.
  ///
  /// The default implementation collects the content in memory and calls PutIfAbsent, so a
  /// store that only implements PutIfAbsent stays correct; the local store streams to a
  /// temporary file instead.
  virtual arrow::Status PutIfAbsentStreaming(const std::string& path,
                                             const ContentWriter& write);

  /// Atomically replaces (or creates) `path` with `data` (used only for `_last_checkpoint`).
  virtual arrow::Status PutReplace(const std::string& path, std::string_view data) = 0;

  /// Deletes a file; a missing file is not an error.
  virtual arrow::Status Delete(const std::string& path) = 0;

  /// Temporary files of puts in `dir` (regular files only, never listed by List): in flight,
  /// or left behind by a writer killed mid-put. Log cleanup deletes the old ones. The default
  /// (stores whose puts leave nothing behind) returns none.
  virtual arrow::Result<std::vector<FileEntry>> ListTemporaryFiles(const std::string& dir);

  // --- Data folders (VACUUM) ---
  /// Every entry directly inside the data folder `dir`, sorted by name, symbolic links not
  /// followed: a link (to anything) is listed with `regular` and `directory` false, a folder
  /// with `directory` true and its modification time. A missing folder is an empty listing.
  /// The default asks filesystem() (whose stores have no links).
  virtual arrow::Result<std::vector<FileEntry>> ListDataDir(const std::string& dir);
  /// Deletes one data file (never a folder; a symbolic link itself, not its target); a
  /// missing file is not an error. The default asks filesystem().
  virtual arrow::Status DeleteDataFile(const std::string& path);
  /// Removes the data folder `dir` when it is empty; false (and nothing done) when it holds
  /// anything or is gone. The default asks filesystem().
  virtual arrow::Result<bool> RemoveDataDirIfEmpty(const std::string& dir);

  /// Filesystem for data files (Parquet, deletion vectors) under the same root.
  virtual std::shared_ptr<arrow::fs::FileSystem> filesystem() const = 0;
};

/// A store for the local filesystem. put-if-absent (plain or streamed) writes a hidden temporary
/// file in the same directory, fsyncs it, then link(2)s it into place (fails if the target
/// exists), removes the temporary name and fsyncs the directory. A streamed put writes through a
/// bounded buffer, so its memory does not grow with the content; a failed put removes its
/// temporary file.
std::shared_ptr<LogStore> MakeLocalLogStore();

/// A store that keeps everything in memory (for tests). Data-file filesystem is an
/// arrow::fs::internal::MockFileSystem-like in-memory filesystem.
std::shared_ptr<LogStore> MakeMemoryLogStore();

/// Resolves a table location (a local path or `file://` URI) to a normalised absolute local path
/// and the store for it. Any other scheme (`s3://`, `abfss://`, `gs://`, ...) is
/// DeltaErrorCode::kUnsupportedStorage naming the scheme.
arrow::Result<std::pair<std::string, std::shared_ptr<LogStore>>> ResolveTableLocation(
    std::string_view location);

}  // namespace deltacpp
