// Writes checkpoints (classic single-file Parquet in delta-spark's schema, or V2 UUID-named
// Parquet when the table supports v2Checkpoint) and `_last_checkpoint`, and removes expired log
// files.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "deltacpp/snapshot.h"

namespace deltacpp::internal {

/// Tuning and clock for WriteCheckpoint.
struct CheckpointOptions {
  /// Upper bound on the rows of each in-memory batch and each Parquet row group.
  int64_t max_rows_per_row_group = 64 * 1024;
  /// "Now" for tombstone (and txn) expiry, ms since the epoch; the system clock when unset.
  std::optional<int64_t> now_ms;
};

/// What WriteCheckpoint did.
struct CheckpointWriteResult {
  /// False when a checkpoint of that version already existed (or appeared concurrently); the
  /// existing one and `_last_checkpoint` are then left alone.
  bool written = false;
  /// Path of the checkpoint file written (empty when not written).
  std::string path;
  int64_t num_rows = 0;       ///< actions (rows) in the file
  int64_t size_in_bytes = 0;  ///< encoded Parquet size
  int64_t num_adds = 0;
  int64_t num_removes = 0;
  bool v2 = false;  ///< a UUID-named V2 checkpoint (with a checkpointMetadata row)
};

/// Writes the checkpoint of `snapshot` at its version: protocol, metaData, txns, live domains,
/// live adds (stats as JSON string plus stats_parsed and partitionValues_parsed) and unexpired
/// remove tombstones (`delta.deletedFileRetentionDuration`, default 1 week), streamed in bounded
/// batches. Put-if-absent: an existing checkpoint (a lost race) is left alone and is not an
/// error. Then replaces `_last_checkpoint` atomically.
arrow::Status WriteCheckpoint(const Snapshot& snapshot);

/// As WriteCheckpoint(snapshot), with explicit options, reporting what was written.
///
/// Format: a classic `<v>.checkpoint.parquet`, unless the table supports the v2Checkpoint
/// feature and sets `delta.checkpointPolicy=v2`: then only a V2 `<v>.checkpoint.<uuid>.parquet`
/// whose first row is `checkpointMetadata` (file actions inline, no sidecars).
/// Columns (each row holds exactly one action): txn, add, remove, metaData, protocol,
/// domainMetadata (only when a domain is live), checkpointMetadata (V2 only). Adds and removes
/// carry dataChange=false; removes carry no stats or tags, and extendedFileMetadata is true
/// when their size is known. `add.stats` is written unless
/// `delta.checkpoint.writeStatsAsJson=false`; `add.stats_parsed` (numRecords, minValues,
/// maxValues, nullCount, tightBounds over the physical data schema, limited to the columns
/// some file has statistics for) and, for partitioned tables, `add.partitionValues_parsed`
/// are written unless `delta.checkpoint.writeStatsAsStruct=false`. Txns older than
/// `delta.setTransactionRetentionDuration` (when set) are left out.
/// The file is encoded row group by row group straight into LogStore::PutIfAbsentStreaming
/// (memory holds at most one row group, never the whole file); `_last_checkpoint` ({version,
/// size, sizeInBytes, numOfAddFiles}) is then replaced unless it already names a newer version.
/// A failed put leaves no checkpoint file and `_last_checkpoint` untouched.
/// Errors: InvalidArgument for malformed retention properties; CorruptLog for unparsable
/// partition values or an unreadable log; I/O errors of the store.
arrow::Result<CheckpointWriteResult> WriteCheckpoint(const Snapshot& snapshot,
                                                     const CheckpointOptions& options);

/// Deletes commits and checkpoints older than `delta.logRetentionDuration` (default 30 days),
/// only below the newest checkpoint that is itself older than the cutoff, so every version from
/// that checkpoint on stays readable.
///
/// The cutoff is `now_ms` minus the retention, truncated to midnight UTC. The anchor is the
/// newest complete checkpoint at or below the snapshot's version all of whose files were last
/// modified before the cutoff; without one nothing is deleted. Below the anchor, versions are
/// deleted oldest first (their commit, checkpoint and `.crc` files together) for as long as
/// every file of the version is older than the cutoff, so what remains is contiguous.
/// Compaction files lying wholly below the anchor and older than the cutoff go too.
/// `_last_checkpoint`, sidecars and unrecognised files are never touched. Does nothing when
/// `delta.enableExpiredLogCleanup=false`.
/// Errors: InvalidArgument for a malformed `delta.logRetentionDuration`; I/O errors.
arrow::Status CleanupExpiredLogs(const Snapshot& snapshot, int64_t now_ms);


}  // namespace deltacpp::internal
