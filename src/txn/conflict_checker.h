// Conflict detection between a transaction that lost the race for a version and the commits
// that won it (delta-spark's checks, in delta-spark's order, with its exception kinds).
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>
#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "deltacpp/storage.h"
#include "deltacpp/transaction.h"
#include "expr/bound_expr.h"
#include "expr/data_skipping.h"
#include "log/commit_parser.h"
#include "log/log_segment.h"

namespace deltacpp::internal {

/// A commit that won a race against the transaction being committed.
struct WinningCommit {
  int64_t version = 0;
  std::string path;                   ///< the commit file, for messages
  int64_t modification_time_ms = 0;   ///< file time (dates the commit when it has no ICT)
  ParsedActions actions;
  std::optional<bool> is_blind_append;  ///< commitInfo.isBlindAppend
  std::optional<std::string> txn_id;    ///< commitInfo.txnId

  /// The commit's timestamp for in-commit-timestamp purposes: its inCommitTimestamp, else its
  /// file modification time.
  int64_t Timestamp() const;
};

/// Reads and parses one listed commit file.
arrow::Result<WinningCommit> ReadWinningCommit(LogStore& store, const LogFile& file);

/// A read partition predicate: its SQL text (for messages) and its binding to the table schema.
struct ReadPredicate {
  std::string sql;
  BoundExpr bound;
};

/// The losing transaction as conflict detection sees it. Paths are percent-decoded.
struct LosingTransaction {
  std::string table_root;
  int64_t read_version = -1;
  IsolationLevel isolation = IsolationLevel::kSerializable;  ///< the level in effect
  bool is_blind_append = false;
  bool changes_protocol = false;
  bool changes_metadata = false;
  bool read_whole_table = false;
  std::vector<ReadPredicate> read_predicates;
  /// Partitions read whole (Transaction::ReadPartitions), keyed by physical name.
  std::vector<PartitionValuesView> read_partitions;
  bool read_partitions_given = false;
  std::set<std::string> read_files;
  /// App ids whose txn version was read, plus those this transaction sets.
  std::set<std::string> app_ids;
  std::set<std::string> removed_files;
  std::set<std::string> domains;
  /// Row-level feature duties the loser's caller fulfils (TransactionOptions::enforced_features).
  std::vector<std::string> enforced_features;
  /// Partition columns at read time: (physical name = partitionValues key, type).
  std::vector<std::pair<std::string, std::shared_ptr<arrow::DataType>>> partition_columns;
};

/// The typed values of `raw` (a partitionValues map: physical name -> string, absent or empty
/// is null) for each of `columns`. A value that does not parse as its column's type is an
/// InvalidArgument naming the column; callers add where the map came from.
arrow::Result<PartitionValuesView> TypedPartitionValues(
    const std::map<std::string, std::optional<std::string>>& raw,
    const std::vector<std::pair<std::string, std::shared_ptr<arrow::DataType>>>& columns);

/// Protocol and metadata the losing transaction commits on top of; conflict checks move them
/// forward to each winner's protocol and (allow-listed) metadata.
struct RebasedTableState {
  Protocol protocol;
  Metadata metadata;
};

/// Runs, in order, the checks of one winning commit against the loser and returns the first
/// failure: ProtocolChanged (the winner changed the protocol and the loser did too, or removed
/// features; also a concurrent creation of version 0), UnsupportedFeature (the loser cannot write
/// the winner's protocol), MetadataChanged (the winner changed metadata and the loser did too, or
/// the change is not allow-listed), ConcurrentTransaction (same domain, or a txn for an app id
/// the loser read or sets), ConcurrentAppend (an added file the loser's reads would have
/// matched; skipped under SnapshotIsolation), ConcurrentDeleteRead (a removed file the loser
/// read, or any removal when it read the whole table), ConcurrentDeleteDelete (a file both
/// removed). On success `state` takes the winner's protocol and metadata.
arrow::Status CheckWinningCommit(const LosingTransaction& loser, const WinningCommit& winner,
                                 RebasedTableState* state);

/// A path as conflict detection compares them: the canonical spelling reconciliation uses
/// (CanonicalFilePath: decoded, relative to `table_root` when inside it).
std::string ConflictKey(const std::string& path, const std::string& table_root);

}  // namespace deltacpp::internal
