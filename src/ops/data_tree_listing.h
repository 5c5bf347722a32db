// The data folders of a table listed as VACUUM sees them: every file and folder under the root
// except hidden names, without following symbolic links.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/storage.h"

namespace deltacpp::internal {

/// True when a file or folder named `name` (one path segment) is hidden from VACUUM: it starts
/// with `_` or `.`, unless it is `_change_data`, `_delta_index` or a partition folder of one of
/// `partition_columns` (`<column>=...`, for a column whose name starts with `_`).
bool IsHiddenDataName(std::string_view name, const std::vector<std::string>& partition_columns);

/// True when any segment of `relative_path` (relative to the table root, `/`-separated) is
/// hidden by IsHiddenDataName: `_delta_log/...`, `_checkpoints/x`, `a=1/.tmp/x`.
bool HasHiddenSegment(std::string_view relative_path,
                      const std::vector<std::string>& partition_columns);

/// One folder of the listing.
struct DataDir {
  std::string path;               ///< relative to the table root, '/'-separated
  int64_t modification_time_ms = 0;
  int32_t parent = -1;            ///< index in DataTree::dirs, -1 for a folder in the root
  int64_t num_entries = 0;        ///< everything directly inside, hidden names included
};

/// One regular file of the listing.
struct DataFile {
  std::string path;               ///< relative to the table root
  int64_t size = 0;
  int64_t modification_time_ms = 0;
  int32_t dir = -1;               ///< index in DataTree::dirs, -1 for a file in the root
};

/// The visible files and folders under a table root.
struct DataTree {
  std::vector<DataDir> dirs;      ///< parents before their children
  std::vector<DataFile> files;
  int64_t num_other = 0;          ///< symbolic links, FIFOs, sockets, devices: left alone
};

/// Lists `table_root` recursively through `store` (ListDataDir), several folders at once,
/// skipping hidden names (IsHiddenDataName) and not descending into them or into symbolic
/// links. `on_progress(files so far)` is called from the caller's thread after each level.
arrow::Result<DataTree> ListDataTree(LogStore& store, const std::string& table_root,
                                     const std::vector<std::string>& partition_columns,
                                     const std::function<void(int64_t)>& on_progress = {});

}  // namespace deltacpp::internal
