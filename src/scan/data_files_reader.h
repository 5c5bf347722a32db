// The rows of a given list of data files, read with one snapshot's schema: what a streaming
// source emits for the files of its batch.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "deltacpp/snapshot.h"
#include "scan/commit_changes.h"

namespace deltacpp::internal {

/// Streams the rows of `files` in order (deletion vectors applied, partition columns filled in)
/// in the logical schema of `schema_snapshot`; columns a file lacks read as null. `version` is
/// named in errors. Files are read a few at a time on the file task pool.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReadDataFiles(
    const Snapshot& schema_snapshot, std::vector<AddedDataFile> files, int64_t version);

}  // namespace deltacpp::internal
