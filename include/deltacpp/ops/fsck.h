// FSCK: find the live files of a table that are missing from storage and, unless asked only to
// list them, commit their removal so that the latest version reads again.
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
#include "deltacpp/transaction.h"

namespace deltacpp {

/// A live file of the table that storage does not have (or has only in part).
struct FsckMissingFile {
  std::string path;    ///< add.path as recorded in the log
  int64_t size = 0;    ///< add.size
  bool data_file_missing = false;        ///< the Parquet file itself is gone
  bool deletion_vector_missing = false;  ///< its deletion vector file is gone
  std::string detail;  ///< the absent path(s), for people
};

/// What an FSCK found and did.
struct FsckResult {
  bool dry_run = false;
  int64_t version_checked = -1;  ///< the version whose files were checked
  int64_t num_files_checked = 0;
  /// Live files that are missing, in the log's order.
  std::vector<FsckMissingFile> missing;
  /// The version that removed them; nullopt in a dry run or when nothing is missing.
  std::optional<int64_t> version;
  int64_t execution_time_ms = 0;
};

/// Progress of a long FSCK: files checked so far out of the live files.
struct FsckProgress {
  int64_t checked = 0;
  int64_t total = 0;
};

/// Checks that every live file of the latest version (and each deletion vector file it uses)
/// is on storage as a regular file: `FsckBuilder(table).DryRun().Execute()` lists what is
/// missing. A repair (not DryRun) commits one `remove` (dataChange=true: the rows are gone) for
/// each missing file, operation FSCK with operationParameters numRemovedFiles and metrics
/// numRemovedFiles, numMissingDataFiles, numMissingDeletionVectors; after it the latest version
/// reads again, without the lost rows. Nothing is committed when nothing is missing. The commit
/// depends on the removed files only: a concurrent commit that removed one of them conflicts.
///
/// Errors: TableNotFound; UnsupportedFeature when deltacpp cannot write the table (a repair
/// only); AppendOnlyViolation for a repair of a `delta.appendOnly` table (its rows may not be
/// removed, even lost ones: turn the property off first); I/O errors other than absence, naming
/// the file; the commit conflicts of Transaction.
class FsckBuilder {
 public:
  explicit FsckBuilder(std::shared_ptr<DeltaTable> table) : table_(std::move(table)) {}
  /// Opens the table at `location` when executed.
  explicit FsckBuilder(std::string_view location) : location_(location) {}

  /// Lists the missing files; commits nothing.
  FsckBuilder& DryRun(bool dry_run = true) {
    dry_run_ = dry_run;
    return *this;
  }
  FsckBuilder& OnProgress(std::function<void(const FsckProgress&)> callback) {
    on_progress_ = std::move(callback);
    return *this;
  }
  FsckBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  arrow::Result<FsckResult> Execute() const;

 private:
  std::shared_ptr<DeltaTable> table_;
  std::string location_;
  bool dry_run_ = false;
  std::function<void(const FsckProgress&)> on_progress_;
  TransactionOptions options_;
};

}  // namespace deltacpp
