// Unexpired `remove` tombstones of one table version (log replay keeps only the live files).
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>

#include "deltacpp/storage.h"
#include "log/log_segment.h"

namespace deltacpp::internal {

/// The tombstones of the version `segment` reconstructs, in ReplayBatchSchema() layout
/// (`_is_add` false on every row; `deletionTimestamp` as recorded, possibly null).
///
/// A tombstone is the newest action for its (decoded path, deletion vector id) key when that
/// action is a remove: the segment's commits are walked newest first (within one commit adds
/// win over removes, as in replay), then the removes of the checkpoint (and of its sidecars)
/// whose key no commit mentions. Keys made live again by a later add are therefore never
/// tombstones, and live keys and tombstone keys cannot overlap. Only tombstones with
/// deletionTimestamp > `retention_cutoff_ms` are returned (a missing timestamp counts as 0).
/// Errors: CorruptLog for unreadable commits or checkpoints (naming the file), MissingFile.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> LoadTombstones(LogStore& store,
                                                                   const LogSegment& segment,
                                                                   int64_t retention_cutoff_ms);

}  // namespace deltacpp::internal
