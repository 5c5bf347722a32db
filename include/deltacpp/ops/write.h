// Writing data: append, overwrite, overwrite with replaceWhere, dynamic partition overwrite,
// with schema enforcement/evolution and idempotent (txnAppId/txnVersion) commits.
#pragma once

#include <arrow/api.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/transaction.h"

namespace deltacpp {

/// How new data relates to the existing rows.
enum class WriteMode { kAppend, kOverwrite };

/// How far a write has got: input rows written, data files started and bytes written to them.
struct WriteProgress {
  int64_t rows = 0;
  int64_t files = 0;
  int64_t bytes = 0;
  bool done = false;  ///< every data file is closed (the commit follows)
};

/// Write settings.
struct WriteOptions {
  WriteMode mode = WriteMode::kAppend;
  /// Overwrite only the rows matching this predicate; new rows must match it too.
  std::optional<std::string> replace_where;
  /// Overwrite only the partitions present in the new data.
  bool dynamic_partition_overwrite = false;
  /// Partition columns when the write creates the table (must match an existing table's).
  std::vector<std::string> partition_by;
  /// Add new columns of the input to the table schema. On a table with
  /// `delta.enableTypeWidening=true` also widen column types to wider input types where Delta
  /// allows it (e.g. int -> long, float -> double, date -> timestamp_ntz, wider decimals),
  /// recording each change in the column's `delta.typeChanges` metadata.
  bool merge_schema = false;
  /// With kOverwrite: replace the table schema with the input's.
  bool overwrite_schema = false;
  /// Idempotent writes: skipped when the table already recorded `txn_version` (or a later one)
  /// for `txn_app_id`; otherwise the txn action is committed with the data.
  std::optional<std::string> txn_app_id;
  std::optional<int64_t> txn_version;
  /// Properties for a table the write creates.
  std::map<std::string, std::string> properties;
  /// Parquet codec of the data files: snappy, zstd, gzip, lz4, brotli or uncompressed. Empty:
  /// the table's `delta.parquet.compression.codec`, or snappy when it has none.
  std::string compression;
  /// A streaming sink's batch: the commit is recorded as delta-spark records one, operation
  /// `STREAMING UPDATE` with parameters outputMode, queryId and epochId.
  struct StreamingBatch {
    std::string output_mode;  ///< "Append" or "Complete"
    std::string query_id;
    int64_t epoch_id = 0;
  };
  std::optional<StreamingBatch> streaming_batch;
  TransactionOptions transaction;
  /// Called on the writing thread about every 200 ms while data is written, and once more when
  /// every data file is closed (`done`). Optional.
  std::function<void(const WriteProgress&)> on_progress;
};

/// Outcome of a write.
struct WriteResult {
  std::optional<int64_t> version;  ///< nullopt when skipped
  bool skipped = false;            ///< the txn version was already recorded
  int64_t num_files = 0;
  int64_t num_rows = 0;
  int64_t num_bytes = 0;
  int64_t num_removed_files = 0;
};

/// Writes `input` to the table at `location`, creating the table when there is none (operation
/// WRITE). Streams the input; a failure before the commit deletes the files written and leaves
/// the log untouched. Generated columns missing from the input are computed and identity
/// columns assigned (the new high-water mark is committed with the data). Errors:
/// SchemaMismatch (naming the columns and types; a string value, or a binary partition value,
/// that is not valid UTF-8, naming the column and the row of the write counting from 1; an
/// input column name or field metadata that is not valid UTF-8), InvalidArgument (an option
/// that is not valid UTF-8: txn app id, replaceWhere, partitionBy, properties, user metadata;
/// nothing is written), ConstraintViolation (NOT NULL, CHECK,
/// invariants, generated-column mismatch, explicit identity values, replaceWhere),
/// UnsupportedFeature (a generation expression deltacpp cannot evaluate), the commit
/// conflicts of Transaction (two concurrent identity-assigning writes: MetadataChanged).
arrow::Result<WriteResult> WriteTable(std::string_view location,
                                      std::shared_ptr<arrow::RecordBatchReader> input,
                                      const WriteOptions& options);

/// The same write through an open table handle (DeltaTable::Locate or Open): the handle keeps
/// the latest snapshot it has seen and brings it up to date by reading only the commits made
/// since, so a process that writes often to one table pays for the log once, not per write.
arrow::Result<WriteResult> WriteTable(const std::shared_ptr<DeltaTable>& table,
                                      std::shared_ptr<arrow::RecordBatchReader> input,
                                      const WriteOptions& options);

/// The same writes from an in-memory `arrow::Table`, read chunk by chunk without copying.
arrow::Result<WriteResult> WriteTable(std::string_view location,
                                      const std::shared_ptr<arrow::Table>& input,
                                      const WriteOptions& options);
arrow::Result<WriteResult> WriteTable(const std::shared_ptr<DeltaTable>& table,
                                      const std::shared_ptr<arrow::Table>& input,
                                      const WriteOptions& options);

}  // namespace deltacpp
