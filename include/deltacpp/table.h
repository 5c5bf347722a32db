// Entry point: open a Delta table by path and get snapshots (latest, by version, by timestamp)
// and its history.
#pragma once

#include <arrow/result.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deltacpp/snapshot.h"
#include "deltacpp/storage.h"

namespace deltacpp {

/// One entry of a table's history (newest first in DeltaTable::History).
struct HistoryEntry {
  int64_t version = 0;
  int64_t timestamp_ms = 0;            ///< commit timestamp (ICT or commit file time, monotonised)
  std::optional<std::string> operation;
  std::string operation_parameters;    ///< JSON object text, "{}" when absent
  std::string operation_metrics;       ///< JSON object text, "{}" when absent
  std::string commit_info_json;        ///< the whole commitInfo object, "{}" when absent
};

/// A Delta table at a location. Cheap to create. Every call sees the log as it is now: Latest()
/// keeps the newest snapshot it built and brings it up to date by reading only the commits
/// made since, so a long-lived handle pays for the whole log once. Safe to use from several
/// threads.
class DeltaTable {
 public:
  /// Opens the table at `location` (local path or file:// URI). Fails with TableNotFound when
  /// there is no `_delta_log` with a commit, UnsupportedStorage for other schemes.
  static arrow::Result<std::shared_ptr<DeltaTable>> Open(std::string_view location);

  /// A handle for `location` whether or not a table exists there yet (for creating one).
  /// UnsupportedStorage for schemes other than local paths.
  static arrow::Result<std::shared_ptr<DeltaTable>> Locate(std::string_view location);

  /// True when the location holds a table (a `_delta_log` with at least one commit or
  /// checkpoint).
  arrow::Result<bool> Exists() const;

  /// Opens a table on a given store (tests use the in-memory store).
  static arrow::Result<std::shared_ptr<DeltaTable>> Open(std::string table_root,
                                                         std::shared_ptr<LogStore> store);

  /// The latest snapshot: the handle's previous latest snapshot plus the commits after it when
  /// there is one (a gap or an unreadable new commit falls back to a full load), otherwise
  /// loaded from the newest checkpoint and the commits after it.
  arrow::Result<std::shared_ptr<Snapshot>> Latest() const;

  /// The snapshot at `version` (latest when nullopt). VersionNotFound beyond the latest or
  /// before the earliest reconstructable version.
  arrow::Result<std::shared_ptr<Snapshot>> SnapshotAt(std::optional<int64_t> version) const;

  /// The snapshot of the last commit at or before `timestamp_ms` (ms since the epoch, UTC),
  /// with delta-spark's rules: TimestampOutOfRange before the earliest reconstructable commit
  /// or after the latest commit.
  arrow::Result<std::shared_ptr<Snapshot>> SnapshotAtTimestamp(int64_t timestamp_ms) const;

  /// The version time travel to `timestamp_ms` resolves to (see SnapshotAtTimestamp).
  arrow::Result<int64_t> VersionAtTimestamp(int64_t timestamp_ms) const;

  /// Commit history, newest first, at most `limit` entries.
  arrow::Result<std::vector<HistoryEntry>> History(std::optional<int64_t> limit = std::nullopt) const;

  const std::string& root() const { return root_; }
  const std::shared_ptr<LogStore>& store() const { return store_; }

 private:
  DeltaTable(std::string root, std::shared_ptr<LogStore> store)
      : root_(std::move(root)), store_(std::move(store)) {}
  // The snapshot brought up to date by `cached` and the commits after it; nullptr when the
  // log cannot be read incrementally from there.
  std::shared_ptr<Snapshot> UpdatedFrom(const std::shared_ptr<Snapshot>& cached) const;
  void RememberLatest(const std::shared_ptr<Snapshot>& snapshot) const;

  std::string root_;
  std::shared_ptr<LogStore> store_;
  mutable std::mutex latest_mutex_;
  mutable std::shared_ptr<Snapshot> latest_;  ///< newest snapshot built so far
};

}  // namespace deltacpp

namespace deltacpp {
/// Parses an ISO-8601 timestamp (`2024-01-15`, `2024-01-15T10:00:00`, `2024-01-15 10:00:00.5Z`,
/// `...+02:00`) into milliseconds since the epoch; zone-less text is UTC. InvalidArgument when
/// malformed.
arrow::Result<int64_t> ParseTimestampMillis(std::string_view text);

/// Same as ParseTimestampMillis with microsecond precision.
arrow::Result<int64_t> ParseTimestampMicros(std::string_view text);
}  // namespace deltacpp
