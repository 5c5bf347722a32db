// Which files make up a given version of a table: the newest usable checkpoint plus the
// contiguous commits after it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "deltacpp/storage.h"
#include "log/log_file_name.h"

namespace deltacpp::internal {

/// A listed log file with its parsed name.
struct LogFile {
  FileEntry entry;
  LogFileName name;
};

/// The files needed to reconstruct one version.
struct LogSegment {
  std::string table_root;
  std::string log_dir;
  int64_t version = -1;                        ///< the version this segment reconstructs
  std::optional<int64_t> checkpoint_version;   ///< set when a checkpoint is used
  std::vector<LogFile> checkpoint_files;       ///< one file, or every part of a multi-part one
  std::vector<LogFile> commits;                ///< checkpoint_version+1 .. version, ascending
  std::optional<LogFile> version_commit;       ///< V.json of `version` when it exists
};

/// `<table_root>/_delta_log`.
std::string LogDir(const std::string& table_root);

/// Lists every recognised log file, sorted by version. A missing `_delta_log` or one with no
/// commit and no checkpoint is TableNotFound. A recognised name that is not a regular file (a
/// directory, FIFO, ...) is CorruptLog: skipping it would silently read another version.
arrow::Result<std::vector<LogFile>> ListLogFiles(LogStore& store, const std::string& table_root,
                                                 std::string_view start_after_name = {});

/// The version `_last_checkpoint` names; nullopt when the file is missing, torn (not parsable
/// JSON), has no version, or any of `version`, `size`, `parts`, `sizeInBytes`, `numOfAddFiles`
/// is not an integer of its type and range: it is only ever a hint, and the listing replaces
/// it. Error (CorruptLog naming the file): it cannot be read (a directory, FIFO, no permission).
arrow::Result<std::optional<int64_t>> ReadLastCheckpointHint(LogStore& store,
                                                             const std::string& log_dir);

/// Builds the segment for `version` (latest when absent). Uses `_last_checkpoint` as a hint
/// only: a missing, stale or corrupt hint falls back to the listing. Errors: TableNotFound,
/// VersionNotFound (beyond the latest or before the earliest reconstructable version),
/// CorruptLog (gaps in the commits). With `checkpoint_below`, only checkpoints of lower versions
/// are used (to replay without one that cannot be read).
arrow::Result<LogSegment> BuildLogSegment(LogStore& store, const std::string& table_root,
                                          std::optional<int64_t> version,
                                          std::optional<int64_t> checkpoint_below = std::nullopt);

/// The earliest version that can be reconstructed from the given listing: 0 when commit 0
/// exists, otherwise the oldest complete checkpoint.
std::optional<int64_t> EarliestReconstructableVersion(const std::vector<LogFile>& files);

}  // namespace deltacpp::internal
