// On-demand checkpoints: write a checkpoint of a table's latest version.
#pragma once

#include <arrow/result.h>

#include <string_view>

namespace deltacpp {

/// Writes a checkpoint of the latest version of the table at `location` (classic
/// `<version>.checkpoint.parquet`, or a V2 checkpoint when the table asks for them) and points
/// `_last_checkpoint` at it. Returns true when one was written, false when that version already
/// had a checkpoint (it is left alone). Then, as after an automatic checkpoint, expired log
/// files are cleaned up by `delta.logRetentionDuration` and `delta.enableExpiredLogCleanup`
/// (with old temporary files of killed writers); a failed deletion is not an error.
///
/// Errors: TableNotFound; UnsupportedFeature when deltacpp cannot write the table (a writer
/// feature it does not support); InvalidArgument for malformed retention properties; I/O errors.
arrow::Result<bool> CheckpointTable(std::string_view location);

}  // namespace deltacpp
