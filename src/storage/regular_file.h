// Opening the files a table references (data, deletion vector, checkpoint and sidecar files)
// so that a directory, FIFO or device in their place is an error and never blocks the reader.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>

namespace deltacpp::internal {

/// What a file of mode `mode` is, for messages: "a directory", "a FIFO", "a socket", ...
const char* FileTypeName(mode_t mode);

/// Opens `path` through `fs` for random access. On the local filesystem the file is opened with
/// O_NONBLOCK (opening a FIFO for reading would otherwise wait in open(2) for a writer) and its
/// type is checked on the open descriptor, so nothing can swap it in between. Errors name
/// `path`: a directory, FIFO, socket or device is CorruptLog ("... is not a regular file (a
/// FIFO)"); a missing file is MissingFile; any other failure (permission denied) is IOError.
/// Other filesystems are opened as they are (their entries are only files and directories).
arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenRegularFile(
    arrow::fs::FileSystem& fs, const std::string& path);

}  // namespace deltacpp::internal
