// Commit timestamps for time travel and history: monotonised file times before in-commit
// timestamps were enabled, in-commit timestamps after.
#pragma once

#include <arrow/result.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/table_config.h"
#include "deltacpp/storage.h"
#include "log/log_segment.h"
#include "protocol/actions.h"

namespace deltacpp::internal {

/// The table's commits with what is needed to date them.
class CommitTimeline {
 public:
  /// Lists the log and notes, from the latest version's table properties, whether and since
  /// when in-commit timestamps are in force.
  static arrow::Result<CommitTimeline> Load(std::shared_ptr<LogStore> store,
                                            const std::string& table_root,
                                            const TableConfig& latest_config);

  /// Earliest reconstructable and latest versions.
  int64_t earliest() const { return earliest_; }
  int64_t latest() const { return latest_; }

  /// The listed commit files by version.
  const std::map<int64_t, FileEntry>& commits() const { return commits_; }

  /// True when `version` is dated by its in-commit timestamp rather than its file time.
  bool UsesInCommitTimestamp(int64_t version) const {
    return ict_since_.has_value() && version >= *ict_since_;
  }

  /// Timestamp of commit `version` (reads the commit for in-commit timestamps).
  arrow::Result<int64_t> TimestampOf(int64_t version) const;

  /// The last version whose timestamp is <= `timestamp_ms`; TimestampOutOfRange before the
  /// earliest reconstructable commit or after the latest one.
  arrow::Result<int64_t> VersionAt(int64_t timestamp_ms) const;

 private:
  std::shared_ptr<LogStore> store_;
  std::string table_root_;
  std::map<int64_t, FileEntry> commits_;
  std::map<int64_t, int64_t> file_times_;  ///< monotonised commit file times
  std::optional<int64_t> ict_since_;       ///< first version with in-commit timestamps
  int64_t earliest_ = 0;
  int64_t latest_ = 0;
};

}  // namespace deltacpp::internal
