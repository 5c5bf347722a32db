#include "ops/data_tree_listing.h"

#include <utility>

#include "util/thread_pools.h"

namespace deltacpp::internal {

bool IsHiddenDataName(std::string_view name, const std::vector<std::string>& partition_columns) {
  if (name.empty() || (name.front() != '_' && name.front() != '.')) return false;
  if (name == "_change_data" || name == "_delta_index") return false;
  for (const auto& column : partition_columns) {
    if (name.size() > column.size() && name.substr(0, column.size()) == column &&
        name[column.size()] == '=') {
      return false;
    }
  }
  return true;
}

bool HasHiddenSegment(std::string_view relative_path,
                      const std::vector<std::string>& partition_columns) {
  while (!relative_path.empty()) {
    const size_t slash = relative_path.find('/');
    if (IsHiddenDataName(relative_path.substr(0, slash), partition_columns)) return true;
    if (slash == std::string_view::npos) break;
    relative_path.remove_prefix(slash + 1);
  }
  return false;
}

arrow::Result<DataTree> ListDataTree(LogStore& store, const std::string& table_root,
                                     const std::vector<std::string>& partition_columns,
                                     const std::function<void(int64_t)>& on_progress) {
  DataTree tree;
  // Folders of the current level: (index in tree.dirs or -1 for the root).
  std::vector<int32_t> level = {-1};
  const std::string root = table_root.size() > 1 && table_root.back() == '/'
                               ? table_root.substr(0, table_root.size() - 1)
                               : table_root;
  while (!level.empty()) {
    std::vector<std::vector<FileEntry>> listed(level.size());
    ARROW_RETURN_NOT_OK(RunFileTasks(static_cast<int>(level.size()), [&](int i) {
      const int32_t d = level[static_cast<size_t>(i)];
      const std::string dir = d < 0 ? root : root + "/" + tree.dirs[static_cast<size_t>(d)].path;
      ARROW_ASSIGN_OR_RAISE(listed[static_cast<size_t>(i)], store.ListDataDir(dir));
      return arrow::Status::OK();
    }));
    std::vector<int32_t> next;
    for (size_t i = 0; i < level.size(); ++i) {
      const int32_t d = level[i];
      const std::string prefix = d < 0 ? "" : tree.dirs[static_cast<size_t>(d)].path + "/";
      if (d >= 0) tree.dirs[static_cast<size_t>(d)].num_entries =
          static_cast<int64_t>(listed[i].size());
      for (auto& entry : listed[i]) {
        const auto slash = entry.path.rfind('/');
        std::string name =
            slash == std::string::npos ? entry.path : entry.path.substr(slash + 1);
        if (IsHiddenDataName(name, partition_columns)) continue;
        if (entry.directory) {
          next.push_back(static_cast<int32_t>(tree.dirs.size()));
          tree.dirs.push_back(DataDir{prefix + name, entry.modification_time_ms, d, 0});
        } else if (entry.regular) {
          tree.files.push_back(
              DataFile{prefix + name, entry.size, entry.modification_time_ms, d});
        } else {
          ++tree.num_other;
        }
      }
    }
    if (on_progress) on_progress(static_cast<int64_t>(tree.files.size()));
    level = std::move(next);
  }
  return tree;
}

}  // namespace deltacpp::internal
