// VACUUM: delete the files of a table that no version inside the retention window needs.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/table.h"

namespace deltacpp {

/// How VACUUM finds the files it may delete.
enum class VacuumMode {
  /// Lists the table's folders: tombstoned files, leftovers of crashed writers and expired
  /// change data alike.
  kFull,
  /// Takes the candidates from the log only (removes and cdc actions), without listing the
  /// folders: cheaper on large tables, but files no log entry names (orphans of crashed
  /// writers, files whose removes left the log) are only found by kFull.
  kLite,
};

/// One file VACUUM deletes (or, in a dry run, would delete).
struct VacuumFile {
  std::string path;  ///< relative to the table root, as on storage (not percent-encoded)
  int64_t size = 0;
};

/// What a VACUUM did, under delta-spark's metric names where it has them.
struct VacuumResult {
  bool dry_run = false;
  int64_t retention_ms = 0;       ///< the retention used
  int64_t delete_before_ms = 0;   ///< files older than this (and unneeded) were deletable
  /// Files deleted (a dry run: deletable), sorted by path.
  std::vector<VacuumFile> files;
  int64_t num_files = 0;          ///< numFilesToDelete / numDeletedFiles
  int64_t num_bytes = 0;          ///< sizeOfDataToDelete
  /// Directories left empty and removed (a dry run: that would be), numVacuumedDirectories.
  int64_t num_directories = 0;
  int64_t num_listed_files = 0;   ///< files met in the listing (kFull) or named by the log
  /// Paths the log names that lie outside the table root (`../x`, `%2E%2E`, an absolute path
  /// elsewhere, another scheme): never deleted, never read, reported here.
  std::vector<std::string> refused_paths;
  std::optional<int64_t> start_version;  ///< the `VACUUM START` commit (none in a dry run)
  std::optional<int64_t> end_version;    ///< the `VACUUM END` commit
  int64_t execution_time_ms = 0;
};

/// Progress of a long VACUUM, reported from the caller's thread: what stage it is in and the
/// running counts of that stage.
struct VacuumProgress {
  enum class Stage { kListing, kDeleting } stage = Stage::kListing;
  int64_t files = 0;  ///< files listed so far, or deleted so far
  int64_t total = 0;  ///< files to delete (kDeleting only)
  int64_t bytes = 0;  ///< bytes deleted so far (kDeleting only)
};

/// Deletes the files of a table that no version inside the retention window references:
/// `VacuumBuilder(table).RetentionHours(24).Execute()`.
///
/// Retention: `delta.deletedFileRetentionDuration` (7 days) unless given. A retention shorter
/// than the table's is refused (InvalidArgument saying so) unless RetentionDurationCheck(false),
/// as delta-spark's `spark.databricks.delta.retentionDurationCheck.enabled`; a negative one
/// always is. With `delete_before` = now - retention, a file is kept when the latest version
/// has it (data file or deletion vector file), when its remove is not older than
/// `delete_before` (a version inside the window still reads it), or when it was modified at or
/// after `delete_before` (a writer's fresh files that are not committed yet). Everything else
/// the listing finds is deleted: tombstoned files, leftovers of crashed writers, expired change
/// data under `_change_data/`. The listing skips hidden names (starting with `_` or `.`), so
/// `_delta_log/` and any `_checkpoints/` beside the data are never touched, except
/// `_change_data/`, `_delta_index/` and partition folders of a column whose name starts with
/// `_`. Directories left empty are removed. Nothing outside the table root is deleted or
/// followed: symbolic links are neither followed nor deleted, and log paths that lead outside
/// the root are refused and reported (VacuumResult::refused_paths).
///
/// A real run (not DryRun) commits `VACUUM START` (operationParameters retentionCheckEnabled,
/// defaultRetentionMillis, specifiedRetentionMillis; metrics numFilesToDelete,
/// sizeOfDataToDelete), deletes on several threads, then commits `VACUUM END` (status
/// COMPLETED, or FAILED when a deletion failed; metrics numDeletedFiles,
/// numVacuumedDirectories). Both commits hold only commitInfo, so concurrent writers never
/// conflict with them. A version whose files were vacuumed then fails to read with MissingFile
/// naming the file.
///
/// Errors: TableNotFound; UnsupportedFeature when deltacpp cannot write the table (the writer
/// protocol is always checked, as `vacuumProtocolCheck` requires); InvalidArgument for the
/// retention; CorruptLog for a malformed log or retention property; I/O errors naming the file.
class VacuumBuilder {
 public:
  explicit VacuumBuilder(std::shared_ptr<DeltaTable> table) : table_(std::move(table)) {}
  /// Opens the table at `location` when executed.
  explicit VacuumBuilder(std::string_view location) : location_(location) {}

  /// Keeps files needed by versions of the last `hours` hours (fractions allowed).
  VacuumBuilder& RetentionHours(double hours) {
    retention_hours_ = hours;
    return *this;
  }
  /// Lists what would be deleted, deletes nothing and commits nothing.
  VacuumBuilder& DryRun(bool dry_run = true) {
    dry_run_ = dry_run;
    return *this;
  }
  VacuumBuilder& Mode(VacuumMode mode) {
    mode_ = mode;
    return *this;
  }
  /// false allows a retention shorter than the table's (delta-spark's
  /// `retentionDurationCheck.enabled`).
  VacuumBuilder& RetentionDurationCheck(bool enabled) {
    retention_check_ = enabled;
    return *this;
  }
  /// Files deleted at once (default 8: deletes wait on storage, not on the CPU).
  VacuumBuilder& Parallelism(int threads) {
    parallelism_ = threads;
    return *this;
  }
  /// Called now and then while listing and deleting.
  VacuumBuilder& OnProgress(std::function<void(const VacuumProgress&)> callback) {
    on_progress_ = std::move(callback);
    return *this;
  }
  arrow::Result<VacuumResult> Execute() const;

 private:
  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  std::optional<double> retention_hours_;
  bool dry_run_ = false;
  VacuumMode mode_ = VacuumMode::kFull;
  bool retention_check_ = true;
  int parallelism_ = 8;
  std::function<void(const VacuumProgress&)> on_progress_;
};

}  // namespace deltacpp
