// RESTORE: bring a table back to the state of an earlier version in one new commit.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/table.h"
#include "deltacpp/transaction.h"

namespace deltacpp {

/// What a RESTORE did, under delta-spark's metric names (see Named()).
struct RestoreMetrics {
  int64_t version = -1;                   ///< the version committed
  int64_t restored_version = -1;          ///< the version whose state it now has
  int64_t table_size_after_restore = 0;   ///< tableSizeAfterRestore (bytes)
  int64_t num_files_after_restore = 0;    ///< numOfFilesAfterRestore
  int64_t num_removed_files = 0;          ///< numRemovedFiles
  int64_t num_restored_files = 0;         ///< numRestoredFiles
  int64_t removed_files_size = 0;         ///< removedFilesSize
  int64_t restored_files_size = 0;        ///< restoredFilesSize

  /// The metrics as (delta-spark name, value), in a fixed order; what the commit records.
  std::vector<std::pair<std::string, int64_t>> Named() const;
};

/// Restores a table to an earlier version: `RestoreBuilder(table).ToVersion(3).Execute()`.
///
/// One commit (operation RESTORE, operationParameters `version` or `timestamp`) removes the
/// files the latest version has and the earlier one does not, and adds back those the earlier
/// one had (with their deletion vectors, statistics and row ids), all with dataChange=true, and
/// restores that version's metadata (schema, partitioning, properties) when it differs; the
/// protocol stays as it is (features are never taken away). A file is the same file when its
/// path and deletion vector are the same. Before anything is committed every file to add back
/// (and its deletion vector file) is checked to exist: when VACUUM has removed one, RESTORE
/// fails with MissingFile naming it and the table is left as it was. The commit depends on the
/// whole table: a concurrent commit that changes files conflicts.
///
/// Errors: TableNotFound; InvalidArgument when neither or both of a version and a timestamp
/// are given; VersionNotFound / TimestampOutOfRange for a version time travel cannot reach;
/// MissingFile; UnsupportedFeature when deltacpp cannot write the table; AppendOnlyViolation
/// when files would be removed from a `delta.appendOnly` table; the commit conflicts of
/// Transaction.
class RestoreBuilder {
 public:
  explicit RestoreBuilder(std::shared_ptr<DeltaTable> table) : table_(std::move(table)) {}
  /// Opens the table at `location` when executed.
  explicit RestoreBuilder(std::string_view location) : location_(location) {}

  RestoreBuilder& ToVersion(int64_t version) {
    version_ = version;
    return *this;
  }
  /// The last version committed at or before `timestamp_ms` (as time travel resolves it).
  /// `text` is what the commit records as the `timestamp` parameter (the caller's spelling).
  RestoreBuilder& ToTimestamp(int64_t timestamp_ms, std::string text) {
    timestamp_ms_ = timestamp_ms;
    timestamp_text_ = std::move(text);
    return *this;
  }
  RestoreBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  arrow::Result<RestoreMetrics> Execute() const;

 private:
  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  std::optional<int64_t> version_;
  std::optional<int64_t> timestamp_ms_;
  std::string timestamp_text_;
  TransactionOptions options_;
};

}  // namespace deltacpp
