// The columnar layout deltacpp keeps file actions (add/remove) in during replay and in snapshots.
#pragma once

#include <arrow/api.h>

#include <memory>

namespace deltacpp::internal {

/// Column positions in FileActionSchema().
enum FileActionColumn : int {
  kPathCol = 0,
  kPartitionValuesCol,
  kSizeCol,
  kModificationTimeCol,
  kDataChangeCol,
  kStatsCol,
  kTagsCol,
  kDeletionVectorCol,
  kBaseRowIdCol,
  kDefaultRowCommitVersionCol,
  kClusteringProviderCol,
  kNumFileActionColumns
};

/// Children of the deletionVector struct.
enum DeletionVectorField : int {
  kDvStorageType = 0,
  kDvPathOrInlineDv,
  kDvOffset,
  kDvSizeInBytes,
  kDvCardinality,
};

/// The `add` action as Arrow columns (names as in the protocol): path, partitionValues,
/// size, modificationTime, dataChange, stats, tags, deletionVector, baseRowId,
/// defaultRowCommitVersion, clusteringProvider.
const std::shared_ptr<arrow::Schema>& FileActionSchema();

/// The deletionVector struct type.
const std::shared_ptr<arrow::DataType>& DeletionVectorType();

/// The map<string,string> type used for partitionValues and tags.
const std::shared_ptr<arrow::DataType>& StringMapType();

/// Replay batches carry two extra trailing columns: `_is_add` (bool) and `deletionTimestamp`.
const std::shared_ptr<arrow::Schema>& ReplayBatchSchema();

/// Converts a struct array read from a checkpoint (`add` or `remove` column, any field order,
/// missing or extra fields, map field names as written) into the columns of FileActionSchema().
/// Rows where the struct itself is null are kept (callers filter them).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> NormalizeCheckpointFileActions(
    const std::shared_ptr<arrow::StructArray>& actions);

}  // namespace deltacpp::internal
