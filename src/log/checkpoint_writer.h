// Writes checkpoints (classic single-file Parquet in delta-spark's schema, or V2 UUID-named
// Parquet when the table supports v2Checkpoint) and `_last_checkpoint`, and removes expired log
// files.
#pragma once

#include <arrow/status.h>

#include "deltacpp/snapshot.h"

namespace deltacpp::internal {

/// Writes the checkpoint of `snapshot` at its version: protocol, metaData, txns, live domains,
/// live adds (stats as JSON string plus stats_parsed and partitionValues_parsed) and unexpired
/// remove tombstones (`delta.deletedFileRetentionDuration`, default 1 week), streamed in bounded
/// batches. Put-if-absent: an existing checkpoint (a lost race) is left alone and is not an
/// error. Then replaces `_last_checkpoint` atomically.
arrow::Status WriteCheckpoint(const Snapshot& snapshot);

/// Deletes commits and checkpoints older than `delta.logRetentionDuration` (default 30 days),
/// only below the newest checkpoint that is itself older than the cutoff, so every version from
/// that checkpoint on stays readable.
arrow::Status CleanupExpiredLogs(const Snapshot& snapshot, int64_t now_ms);

}  // namespace deltacpp::internal
