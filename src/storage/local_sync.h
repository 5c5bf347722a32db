// Making files written through an arrow::fs::FileSystem durable on the local filesystem.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/status.h>

#include <string>
#include <vector>

namespace deltacpp::internal {

/// When `fs` is the local filesystem: fsyncs the closed file `path`, then the directory holding
/// it and, for each of `new_dirs` (directories the caller created for it, innermost first), the
/// directory holding that one, so the file and its name survive a crash. Filesystems without
/// directory sync (EINVAL/ENOTSUP) are accepted. Other filesystems: nothing to do.
/// Errors: IOError naming `path` and the step that failed.
arrow::Status SyncWrittenLocalFile(const arrow::fs::FileSystem& fs, const std::string& path,
                                   const std::vector<std::string>& new_dirs = {});

}  // namespace deltacpp::internal
