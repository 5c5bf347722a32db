// The columnar layout deltacpp keeps file actions (add/remove) in during replay and in snapshots.
#pragma once

#include <arrow/api.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
/// Rows where the struct itself is null are kept (callers filter them). An integer field held in
/// a column of another type (float, string) or whose values do not fit the field's width is
/// CorruptLog naming the column as `<action>.<field>`.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> NormalizeCheckpointFileActions(
    const std::shared_ptr<arrow::StructArray>& actions, std::string_view action = "add");

/// The reconciliation key of row `row` of a batch in FileActionSchema() or ReplayBatchSchema()
/// layout, as replay matches adds and removes: the canonical path (CanonicalFilePath against
/// `table_root`) and, when the row has a deletion vector, its storage type, path or inline
/// data and offset. Two spellings of one file with one deletion vector give one key.
std::string FileActionKey(const arrow::RecordBatch& batch, int64_t row,
                          std::string_view table_root);

/// The partition values (keys as in the log, null values as nullopt) of row `row` of a batch
/// in FileActionSchema() or ReplayBatchSchema() layout.
std::map<std::string, std::optional<std::string>> PartitionValuesAt(const arrow::RecordBatch& batch,
                                                                    int64_t row);

}  // namespace deltacpp::internal
