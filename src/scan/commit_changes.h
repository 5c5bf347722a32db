// The files one commit's change data is read from, and how: its `cdc` files when it has any,
// otherwise its data-changing adds and removes with the deletion vector differences of files
// that were removed and added again.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "log/commit_parser.h"
#include "protocol/actions.h"

namespace deltacpp::internal {

/// One file to read for a commit's changes.
struct ChangeFile {
  std::string path;  ///< as in the log (URI-encoded, relative or absolute)
  std::map<std::string, std::optional<std::string>> partition_values;  ///< physical keys
  /// A `cdc` file: its rows carry their own `_change_type`.
  bool is_cdc = false;
  /// `insert` or `delete` for a data file.
  std::string change_type;
  /// Rows this deletion vector deletes are skipped.
  std::optional<DeletionVectorDescriptor> deletion_vector;
  /// When set, only the rows this deletion vector holds are read (the file without
  /// `deletion_vector`), less those `rows_not_in` holds.
  std::optional<DeletionVectorDescriptor> rows_in;
  std::optional<DeletionVectorDescriptor> rows_not_in;
};

/// The files of one commit's changes, in log order (cdc files; else removes, then adds).
/// Adds and removes without dataChange=true are left out; a MERGE whose metrics say it
/// inserted, updated and deleted no row contributes nothing (delta-spark's rule for merges that
/// rewrote files without changing them).
std::vector<ChangeFile> CommitChangeFiles(const ParsedActions& actions);

/// A data file named by an add action.
struct AddedDataFile {
  std::string path;  ///< as in the log
  std::map<std::string, std::optional<std::string>> partition_values;  ///< physical keys
  std::optional<DeletionVectorDescriptor> deletion_vector;
  int64_t size = 0;
  int64_t modification_time = 0;
};

/// What one commit did to the table's data, as a streaming source sees it: its adds with
/// dataChange=true in log order, and how many removes with dataChange=true it holds.
struct CommitDataChanges {
  std::vector<AddedDataFile> adds;
  int64_t data_removes = 0;
};
CommitDataChanges DataChangesOf(const ParsedActions& actions);

/// The data file of row `row` of a batch in FileActionSchema() or ReplayBatchSchema() layout.
AddedDataFile AddedDataFileAt(const arrow::RecordBatch& batch, int64_t row);

}  // namespace deltacpp::internal
