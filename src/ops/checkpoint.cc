// CHECKPOINT: a checkpoint of the latest version, on demand.
#include "deltacpp/ops/checkpoint.h"

#include "deltacpp/table.h"
#include "log/checkpoint_writer.h"
#include "txn/writer_features.h"
#include "util/clock.h"

namespace deltacpp {

arrow::Result<bool> CheckpointTable(std::string_view location) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(location));
  ARROW_ASSIGN_OR_RAISE(auto snapshot, table->Latest());
  // A checkpoint carries the table's state forward, so it is a writer's job; it adds no rows, so
  // the row-level duties do not apply.
  ARROW_RETURN_NOT_OK(internal::CheckWriteSupported(
      snapshot->protocol(), snapshot->metadata(), snapshot->table_root(), snapshot->version(),
      internal::RowLevelWriterFeatures()));
  ARROW_ASSIGN_OR_RAISE(auto result,
                        internal::WriteCheckpoint(*snapshot, internal::CheckpointOptions{}));
  // As after an automatic checkpoint (and delta-spark's): log files that expired before the
  // newest expired checkpoint go; a failure to delete them leaves the table as it is.
  (void)internal::CleanupExpiredLogs(*snapshot, internal::WallClockMillis());
  return result.written;
}

}  // namespace deltacpp
