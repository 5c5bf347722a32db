// Reads checkpoints (classic, multi-part, V2 in Parquet or JSON, with sidecars) with column
// projection: file actions come back columnar, the few other actions as structs.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "deltacpp/storage.h"
#include "log/commit_parser.h"
#include "log/log_segment.h"

namespace deltacpp::internal {

/// What a checkpoint holds.
struct CheckpointContent {
  /// protocol, metaData, txns, domains, sidecars, checkpointMetadata (file_actions unused).
  ParsedActions actions;
  /// Live add actions in FileActionSchema() layout; rows with a null path are not adds.
  std::vector<std::shared_ptr<arrow::RecordBatch>> adds;
};

/// Reads every file of the checkpoint in `segment` (parts and sidecars in parallel).
/// Errors name the table, the checkpoint file and the cause.
arrow::Result<CheckpointContent> ReadCheckpoint(LogStore& store, const LogSegment& segment);

}  // namespace deltacpp::internal
