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

}  // namespace deltacpp::internal
