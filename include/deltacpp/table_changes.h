// Reading a table's change data feed: the rows inserted, deleted and updated by the commits of a
// version range, with the change type, commit version and commit timestamp of each.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp {

class DeltaTable;

/// Name of the change type column (`insert`, `delete`, `update_preimage`, `update_postimage`).
inline constexpr std::string_view kChangeTypeColumn = "_change_type";
/// Name of the commit version column (int64).
inline constexpr std::string_view kCommitVersionColumn = "_commit_version";
/// Name of the commit timestamp column (timestamp[us, UTC]).
inline constexpr std::string_view kCommitTimestampColumn = "_commit_timestamp";

/// Settings of a change data feed read. A bound is a version or a timestamp (ms since the epoch,
/// UTC), never both.
struct TableChangesOptions {
  std::optional<int64_t> starting_version;
  std::optional<int64_t> starting_timestamp_ms;
  /// Inclusive; the latest version when neither is set.
  std::optional<int64_t> ending_version;
  std::optional<int64_t> ending_timestamp_ms;
  /// Output columns (case-insensitive): table columns and the three change columns; all of
  /// them, table columns first, when empty.
  std::vector<std::string> columns;
  /// SQL-like predicate over the table columns and the change columns
  /// (`_change_type = 'delete' AND id > 5`); empty for none.
  std::string filter;
  /// Rows per output batch (upper bound).
  int64_t batch_size = 64 * 1024;
};

/// A planned change data feed read over a resolved version range.
class TableChanges {
 public:
  virtual ~TableChanges() = default;
  /// Output schema: the requested table columns with their logical types, then (when
  /// requested) `_change_type` string, `_commit_version` int64, `_commit_timestamp`
  /// timestamp[us, UTC], as delta-spark returns them.
  virtual const std::shared_ptr<arrow::Schema>& schema() const = 0;
  /// First version of the range.
  virtual int64_t start_version() const = 0;
  /// Last version of the range; start_version() - 1 when the range is empty (two timestamps
  /// between the same pair of commits).
  virtual int64_t end_version() const = 0;
  /// Streams the changes, version by version. Errors name the table, version and file.
  virtual arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Execute() const = 0;
  /// Reads every change into one table.
  arrow::Result<std::shared_ptr<arrow::Table>> ToTable() const;
};

/// Builds a TableChanges, following delta-spark's batch `readChangeFeed` semantics:
/// - per commit, the rows of its `cdc` files when it has any; otherwise its data-changing adds
///   as `insert` and removes as `delete` (a removed file as it was before the commit, i.e. with
///   the remove's deletion vector applied); a file removed and added again with another
///   deletion vector contributes only the rows whose deletion state changed; commits without
///   data changes (OPTIMIZE) contribute nothing;
/// - the feed (`delta.enableChangeDataFeed`) must be on at every version of the range;
/// - a starting timestamp resolves to the first commit at or after it, an ending timestamp to
///   the last commit at or before it;
/// - the rows come in the schema of the latest version, or of the ending version when column
///   mapping is on; a range holding a schema change that data of another schema cannot be read
///   with (a dropped or renamed column, a type change) is refused.
///
/// Errors reported by Build(): InvalidArgument for no starting bound, both a version and a
/// timestamp for one bound, a negative version, an end before the start, or an unknown
/// column; VersionNotFound for a start after the latest version or before the earliest
/// reconstructable one, and for a version in the range whose change data was not recorded
/// (the feed was off); TimestampOutOfRange for a starting timestamp after the latest commit and
/// an ending timestamp outside the table's commits; SchemaMismatch for an incompatible schema
/// change in the range; UnsupportedFeature for a reader feature deltacpp does not support;
/// InvalidExpression for a filter that does not parse or bind.
class TableChangesBuilder {
 public:
  explicit TableChangesBuilder(std::shared_ptr<const DeltaTable> table)
      : table_(std::move(table)) {}
  TableChangesBuilder& StartingVersion(int64_t version) {
    options_.starting_version = version;
    return *this;
  }
  /// `timestamp_ms`: ms since the epoch, UTC.
  TableChangesBuilder& StartingTimestamp(int64_t timestamp_ms) {
    options_.starting_timestamp_ms = timestamp_ms;
    return *this;
  }
  TableChangesBuilder& EndingVersion(int64_t version) {
    options_.ending_version = version;
    return *this;
  }
  /// `timestamp_ms`: ms since the epoch, UTC.
  TableChangesBuilder& EndingTimestamp(int64_t timestamp_ms) {
    options_.ending_timestamp_ms = timestamp_ms;
    return *this;
  }
  /// Restricts the output to these columns (see TableChangesOptions::columns).
  TableChangesBuilder& Columns(std::vector<std::string> columns) {
    options_.columns = std::move(columns);
    return *this;
  }
  /// Keeps only rows for which `predicate` is TRUE (see TableChangesOptions::filter).
  TableChangesBuilder& Filter(std::string predicate) {
    options_.filter = std::move(predicate);
    return *this;
  }
  TableChangesBuilder& Options(TableChangesOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// Resolves the range, checks it and plans the files to read.
  arrow::Result<std::shared_ptr<TableChanges>> Build() const;

 private:
  std::shared_ptr<const DeltaTable> table_;
  TableChangesOptions options_;
};

}  // namespace deltacpp
