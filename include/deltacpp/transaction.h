// Optimistic transactions: what an operation read, what it commits, and the commit loop that
// detects conflicts with concurrent writers the way delta-spark does.
#pragma once

#include <arrow/result.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/actions.h"
#include "deltacpp/snapshot.h"
#include "deltacpp/table.h"

namespace deltacpp {

/// Isolation of one commit. WriteSerializable is a per-commit choice (never written as
/// `delta.isolationLevel`, which a table may only set to Serializable). Commits whose actions all
/// have dataChange=false are checked with SnapshotIsolation automatically.
enum class IsolationLevel { kSerializable, kWriteSerializable, kSnapshotIsolation };

/// Commit settings.
struct TransactionOptions {
  /// Unset: the operation's default. DELETE and UPDATE use the table's level, as delta-spark
  /// does (WriteSerializable, or Serializable when `delta.isolationLevel=Serializable`); WRITE
  /// and a transaction started directly use Serializable.
  std::optional<IsolationLevel> isolation;
  int max_attempts = 100;                                   ///< commit attempts before giving up
  /// Pause after the second lost race, doubled per further one (with jitter); the first retry
  /// after a lost race is immediate.
  std::chrono::milliseconds initial_backoff{1};
  std::chrono::milliseconds max_backoff{50};
  std::optional<std::string> user_metadata;
  /// Row-level writer duties the caller has fulfilled for the rows it commits: any of
  /// "invariants", "checkConstraints", "generatedColumns", "identityColumns". A table that uses one of these
  /// features (a column with `delta.invariants` or `delta.generationExpression`, a
  /// `delta.constraints.*` property) is refused with UnsupportedFeature unless it is listed.
  std::vector<std::string> enforced_features;
};

/// The outcome of a commit.
struct CommitResult {
  int64_t version = -1;      ///< the version written
  int attempts = 1;          ///< 1 when no concurrent commit intervened
  bool checkpointed = false; ///< a checkpoint was written after the commit
};

/// One optimistic transaction against a table. Record what the operation read (for conflict
/// detection), stage actions, then Commit(). Not thread-safe; use one per operation.
class Transaction {
 public:
  /// Starts a transaction reading `read_snapshot` (null: the table does not exist yet and the
  /// commit will be version 0, which must then stage protocol and metaData).
  ///
  /// Errors: InvalidArgument for a null table or invalid options (max_attempts < 1, negative
  /// backoff, SnapshotIsolation requested: it is only chosen automatically, user_metadata that
  /// is not valid UTF-8);
  /// UnsupportedFeature naming the feature when deltacpp cannot write the table (writer version
  /// above 7, a reader or writer feature it does not support, invariants, CHECK constraints,
  /// generated or identity columns in use).
  static arrow::Result<std::unique_ptr<Transaction>> Start(
      std::shared_ptr<DeltaTable> table, std::shared_ptr<const Snapshot> read_snapshot,
      TransactionOptions options = {});

  /// Starts the transaction that creates the table at `table_root` on `store`, without a
  /// DeltaTable handle (any store, the in-memory one included). The commit is version 0 and
  /// must stage protocol and metaData; if the table gets created concurrently it fails with
  /// ProtocolChanged. Errors: InvalidArgument for a null store or invalid options.
  static arrow::Result<std::unique_ptr<Transaction>> StartCreate(std::string table_root,
                                                                 std::shared_ptr<LogStore> store,
                                                                 TransactionOptions options = {});
  virtual ~Transaction() = default;

  /// The snapshot read (null for a new table) and the version the commit builds on (-1 for a
  /// new table).
  virtual const std::shared_ptr<const Snapshot>& read_snapshot() const = 0;
  virtual int64_t read_version() const = 0;

  // --- What was read (drives conflict detection) ---
  /// The operation depends on every file of the table.
  virtual void ReadWholeTable() = 0;
  /// The operation read the files matching this partition predicate (SQL text over the
  /// table's columns; data predicates may be given too, only partition columns are used).
  virtual void ReadPredicate(const std::string& sql) = 0;
  /// The operation read these files (add.path values).
  virtual void ReadFiles(const std::vector<std::string>& paths) = 0;
  /// The operation read the files of exactly these partitions (each an `add.partitionValues`
  /// map, keyed as in the log; null for a null value), as a dynamic partition overwrite does: a
  /// concurrent file added to one of them conflicts, one added elsewhere does not. Values are
  /// compared by their typed value, so spellings of one value by different writers match.
  virtual void ReadPartitions(
      const std::vector<std::map<std::string, std::optional<std::string>>>& partitions) = 0;
  /// The latest `txn` version of `app_id` in the read snapshot; records the app id as read.
  virtual std::optional<int64_t> ReadTxnVersion(const std::string& app_id) = 0;

  // --- What to commit ---
  virtual void UpdateMetadata(Metadata metadata) = 0;
  virtual void UpdateProtocol(Protocol protocol) = 0;
  virtual void AddFiles(std::vector<AddFile> files) = 0;
  virtual void RemoveFiles(std::vector<RemoveFile> files) = 0;
  /// Adds change-data files (`cdc` actions; dataChange is written as false).
  virtual void AddCdcFiles(std::vector<CdcFile> files) = 0;
  /// Records `txn{app_id, version, lastUpdated: commit time}`; one per app id (the last call
  /// wins). A concurrent commit of a txn for the same app id is a ConcurrentTransaction conflict.
  virtual void SetTxn(std::string app_id, int64_t version) = 0;
  /// Stages a domainMetadata action (the table must support `domainMetadata`; system domains
  /// `delta.*` are refused). One per domain (the last call wins).
  virtual void SetDomainMetadata(DomainMetadata domain) = 0;
  /// Sets `commitInfo.tags[key] = value` (e.g. `delta.rowTracking.preserved`: "false" when the
  /// commit copies rows without keeping their row ids).
  virtual void SetCommitTag(std::string key, std::string value) = 0;

  /// Commits with commitInfo {timestamp, inCommitTimestamp when enabled, operation,
  /// operationParameters (values JSON-encoded), operationMetrics, readVersion, isolationLevel,
  /// isBlindAppend, tags when set, engineInfo, txnId}. On a lost race re-reads the winners, checks conflicts
  /// (typed errors: ConcurrentAppend, ConcurrentDeleteRead, ConcurrentDeleteDelete,
  /// MetadataChanged, ProtocolChanged, ConcurrentTransaction) and retries at the next version
  /// with backoff. Writes a checkpoint when `delta.checkpointInterval` says so. A failed commit
  /// leaves the log exactly as it was.
  ///
  /// Other errors: InvalidArgument for an invalid commit (version 0 without protocol and
  /// metaData, partition values that do not match the partition columns, a path added or
  /// removed twice, a protocol with reader version 3 and writer version below 7, a second
  /// Commit() of the same transaction, staged text that is not valid UTF-8 - the message names
  /// the action and field, e.g. `txn` `appId` - as the log holds only UTF-8 JSON); AppendOnlyViolation for a data-changing remove on a
  /// `delta.appendOnly` table; InvalidExpression for a read predicate that does not bind;
  /// VersionExists when `max_attempts` attempts all lost their race. A transaction commits at
  /// most once: after Commit() returns, whatever the outcome, start a new one.
  virtual arrow::Result<CommitResult> Commit(
      const std::string& operation,
      const std::map<std::string, std::string>& operation_parameters = {},
      const std::map<std::string, std::string>& operation_metrics = {}) = 0;
};

}  // namespace deltacpp
