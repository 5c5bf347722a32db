#include "deltacpp/transaction.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <thread>

#include "deltacpp/error.h"
#include "deltacpp/table_config.h"
#include "deltacpp/version.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "log/checkpoint_writer.h"
#include "log/log_file_name.h"
#include "log/log_segment.h"
#include "protocol/action_json_writer.h"
#include "protocol/partition_values.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "txn/commit_info.h"
#include "txn/conflict_checker.h"
#include "util/random_uuid.h"
#include "txn/retry_backoff.h"
#include "txn/row_tracking.h"
#include "txn/writer_features.h"
#include "util/uri.h"
#include "util/utf8.h"

namespace deltacpp {

namespace {

using internal::CheckWinningCommit;
using internal::ConflictKey;
using internal::LosingTransaction;
using internal::RebasedTableState;
using internal::RowIdAssignment;
using internal::WinningCommit;


arrow::Status Invalid(const std::string& table_root, const std::string& what) {
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    fmt::format("table {}: {}", table_root, what));
}

arrow::Status ValidateOptions(const TransactionOptions& options, const std::string& table_root) {
  if (options.max_attempts < 1) {
    return Invalid(table_root, fmt::format("max_attempts must be at least 1 (got {})",
                                           options.max_attempts));
  }
  if (options.initial_backoff.count() < 0 || options.max_backoff.count() < 0) {
    return Invalid(table_root, "commit backoff durations must not be negative");
  }
  if (options.user_metadata && !internal::IsValidUtf8(*options.user_metadata)) {
    return Invalid(table_root, fmt::format("the user metadata (userMetadata) is not valid UTF-8 "
                                           "({})",
                                           internal::DescribeInvalidUtf8(*options.user_metadata)));
  }
  if (options.isolation == IsolationLevel::kSnapshotIsolation) {
    return Invalid(table_root,
                   "SnapshotIsolation cannot be requested; it is used automatically for commits "
                   "that change no data");
  }
  return arrow::Status::OK();
}

// Appends one serialized action line (an error when it cannot be written).
arrow::Status Append(arrow::Result<std::string> line, std::vector<std::string>* lines) {
  ARROW_ASSIGN_OR_RAISE(auto text, std::move(line));
  lines->push_back(std::move(text));
  return arrow::Status::OK();
}

bool HasFeature(const Protocol& protocol, std::string_view feature) {
  auto features = internal::EffectiveFeatures(protocol);
  return std::find(features.begin(), features.end(), feature) != features.end();
}

class TransactionImpl final : public Transaction {
 public:
  TransactionImpl(std::shared_ptr<DeltaTable> table, std::string table_root,
                  std::shared_ptr<LogStore> store, std::shared_ptr<const Snapshot> read_snapshot,
                  TransactionOptions options)
      : table_(std::move(table)),
        table_root_(std::move(table_root)),
        store_(std::move(store)),
        read_snapshot_(std::move(read_snapshot)),
        options_(std::move(options)),
        read_version_(read_snapshot_ ? read_snapshot_->version() : -1) {}

  const std::shared_ptr<const Snapshot>& read_snapshot() const override { return read_snapshot_; }
  int64_t read_version() const override { return read_version_; }

  void ReadWholeTable() override { read_whole_table_ = true; }
  void ReadPredicate(const std::string& sql) override { read_predicates_.push_back(sql); }
  void ReadPartitions(
      const std::vector<std::map<std::string, std::optional<std::string>>>& partitions) override {
    read_partitions_.insert(read_partitions_.end(), partitions.begin(), partitions.end());
    read_any_partitions_ = true;
  }
  void ReadFiles(const std::vector<std::string>& paths) override {
    for (const auto& p : paths) read_files_.insert(ConflictKey(p, table_root_));
  }
  std::optional<int64_t> ReadTxnVersion(const std::string& app_id) override {
    read_app_ids_.insert(app_id);
    if (!read_snapshot_) return std::nullopt;
    return read_snapshot_->txn_version(app_id);
  }

  void UpdateMetadata(Metadata metadata) override { metadata_ = std::move(metadata); }
  void UpdateProtocol(Protocol protocol) override { protocol_ = std::move(protocol); }
  void AddFiles(std::vector<AddFile> files) override {
    for (auto& f : files) adds_.push_back(std::move(f));
  }
  void RemoveFiles(std::vector<RemoveFile> files) override {
    for (auto& f : files) removes_.push_back(std::move(f));
  }
  void AddCdcFiles(std::vector<CdcFile> files) override {
    for (auto& f : files) {
      f.data_change = false;
      cdc_.push_back(std::move(f));
    }
  }
  void SetTxn(std::string app_id, int64_t version) override {
    Txn t;
    t.app_id = app_id;
    t.version = version;
    txns_[std::move(app_id)] = std::move(t);
  }
  void SetDomainMetadata(DomainMetadata domain) override {
    std::string key = domain.domain;
    domains_[std::move(key)] = std::move(domain);
  }

  void SetCommitTag(std::string key, std::string value) override {
    commit_tags_[std::move(key)] = std::move(value);
  }

  arrow::Result<CommitResult> Commit(
      const std::string& operation, const std::map<std::string, std::string>& operation_parameters,
      const std::map<std::string, std::string>& operation_metrics) override;

 private:
  // The protocol and metadata the commit leaves in force, given the state it builds on.
  Protocol NewProtocol(const RebasedTableState& state) const {
    return protocol_ ? *protocol_ : state.protocol;
  }
  Metadata NewMetadata(const RebasedTableState& state) const {
    return metadata_ ? *metadata_ : state.metadata;
  }

  arrow::Status Validate(const RebasedTableState& state) const;
  arrow::Status ValidateFileActions(const Metadata& metadata) const;
  arrow::Status CheckChangeDataFeedColumns(const Metadata& metadata) const;
  IsolationLevel EffectiveIsolation() const;
  bool IsBlindAppend() const;
  arrow::Result<LosingTransaction> DescribeForConflicts(IsolationLevel isolation,
                                                        bool blind_append) const;
  arrow::Result<std::string> BuildCommit(const RebasedTableState& state, int64_t version,
                                         int64_t now_ms,
                          std::optional<int64_t> previous_timestamp, const std::string& operation,
                          const std::map<std::string, std::string>& operation_parameters,
                          const std::map<std::string, std::string>& operation_metrics,
                          IsolationLevel isolation, bool blind_append,
                          const std::string& txn_id,
                          const std::optional<RowIdAssignment>& row_ids) const;
  arrow::Result<std::vector<WinningCommit>> ReadWinners(int64_t first_version) const;
  bool MaybeCheckpoint(int64_t version, const Metadata& metadata) const;

  std::shared_ptr<DeltaTable> table_;
  std::string table_root_;
  std::shared_ptr<LogStore> store_;
  std::shared_ptr<const Snapshot> read_snapshot_;
  TransactionOptions options_;
  int64_t read_version_;

  bool read_whole_table_ = false;
  std::vector<std::string> read_predicates_;
  std::vector<std::map<std::string, std::optional<std::string>>> read_partitions_;
  bool read_any_partitions_ = false;
  std::set<std::string> read_files_;
  std::set<std::string> read_app_ids_;

  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  std::vector<AddFile> adds_;
  std::vector<RemoveFile> removes_;
  std::vector<CdcFile> cdc_;
  std::map<std::string, Txn> txns_;
  std::map<std::string, DomainMetadata> domains_;
  std::map<std::string, std::string> commit_tags_;
  // Materialised row-tracking column names used if the committed metaData needs new ones.
  std::string row_id_column_name_;
  std::string row_commit_version_column_name_;
  bool finished_ = false;
};

arrow::Status TransactionImpl::Validate(const RebasedTableState& state) const {
  const int64_t version = read_version_ + 1;
  if (read_version_ < 0 && (!protocol_ || !metadata_)) {
    return Invalid(table_root_,
                   "the commit creating the table (version 0) must contain protocol and metaData");
  }
  const Protocol protocol = NewProtocol(state);
  const Metadata metadata = NewMetadata(state);
  if (protocol.min_reader_version == 3 && protocol.min_writer_version < 7) {
    return Invalid(table_root_, fmt::format("protocol ({}, {}) is not allowed: reader version 3 "
                                            "requires writer version 7",
                                            protocol.min_reader_version,
                                            protocol.min_writer_version));
  }
  ARROW_RETURN_NOT_OK(internal::CheckWriteSupported(protocol, metadata, table_root_, version,
                                                    options_.enforced_features));
  ARROW_RETURN_NOT_OK(ValidateFileActions(metadata));
  if (metadata_) {
    ARROW_RETURN_NOT_OK(internal::ValidateRowTrackingMetadata(protocol, metadata, table_root_));
    ARROW_RETURN_NOT_OK(CheckChangeDataFeedColumns(metadata));
  }
  if (TableConfig::Parse(metadata.configuration).append_only) {
    for (const auto& r : removes_) {
      if (r.data_change) {
        return DeltaError(DeltaErrorCode::kAppendOnlyViolation,
                          fmt::format("table {}: cannot remove {} (dataChange=true): the table is "
                                      "append-only (delta.appendOnly=true)",
                                      table_root_, r.path));
      }
    }
  }
  if (!domains_.empty() && !HasFeature(protocol, "domainMetadata")) {
    return Invalid(table_root_, fmt::format("cannot write domain metadata ('{}'): the table does "
                                            "not support the domainMetadata feature",
                                            domains_.begin()->first));
  }
  for (const auto& [name, domain] : domains_) {
    if (name.rfind("delta.", 0) == 0) {
      return Invalid(table_root_, fmt::format("metadata domain '{}' is controlled by the Delta "
                                              "protocol and cannot be set directly",
                                              name));
    }
  }
  return arrow::Status::OK();
}

arrow::Status TransactionImpl::CheckChangeDataFeedColumns(const Metadata& metadata) const {
  // The change data feed adds these columns to the rows it returns, so a table that has one of
  // them cannot have the feed (delta-spark refuses both orders: enabling the feed and adding the
  // column). Names compare case-insensitively, as Spark resolves them.
  if (!TableConfig::Parse(metadata.configuration).change_data_feed) {
    return arrow::Status::OK();
  }
  ARROW_ASSIGN_OR_RAISE(auto schema, internal::SchemaFromDeltaJson(metadata.schema_string));
  std::vector<std::string> clashing;
  for (const auto& field : schema->fields()) {
    for (const char* reserved : {"_change_type", "_commit_version", "_commit_timestamp"}) {
      if (internal::EqualsIgnoreCase(field->name(), reserved)) clashing.push_back(field->name());
    }
  }
  if (clashing.empty()) return arrow::Status::OK();
  return Invalid(table_root_,
                 fmt::format("the change data feed (delta.enableChangeDataFeed=true) cannot be used "
                             "with columns named {}: the feed reserves _change_type, "
                             "_commit_version and _commit_timestamp for its own columns; rename "
                             "the columns or leave the feed off",
                             fmt::join(clashing, ", ")));
}

arrow::Status TransactionImpl::ValidateFileActions(const Metadata& metadata) const {
  // partitionValues must name exactly the partition columns, by physical name: those of the new
  // metadata for added files, those the removed files were written under (the read snapshot's;
  // a commit that replaces the definition removes files of the old layout) for removed ones.
  auto partition_keys = [&](const Metadata& m) -> arrow::Result<std::set<std::string>> {
    ARROW_ASSIGN_OR_RAISE(auto schema, internal::SchemaFromDeltaJson(m.schema_string));
    ARROW_ASSIGN_OR_RAISE(auto mode, internal::ParseColumnMappingMode(m.configuration));
    std::set<std::string> keys;
    for (const auto& name : m.partition_columns) {
      auto field = schema->GetFieldByName(name);
      if (!field) {
        return Invalid(table_root_,
                       fmt::format("partition column '{}' is not in the table schema", name));
      }
      keys.insert(mode == ColumnMappingMode::kNone ? name : internal::PhysicalName(*field));
    }
    return keys;
  };
  ARROW_ASSIGN_OR_RAISE(const auto added_keys, partition_keys(metadata));
  std::set<std::string> removed_keys = added_keys;
  if (read_snapshot_ && !removes_.empty()) {
    ARROW_ASSIGN_OR_RAISE(removed_keys, partition_keys(read_snapshot_->metadata()));
  }
  auto check_keys = [&](const std::string& path, const auto& values,
                        const std::set<std::string>& expected) -> arrow::Status {
    std::set<std::string> keys;
    for (const auto& [k, v] : values) keys.insert(k);
    if (keys != expected) {
      std::string want, got;
      for (const auto& k : expected) want += (want.empty() ? "" : ", ") + k;
      for (const auto& k : keys) got += (got.empty() ? "" : ", ") + k;
      return Invalid(table_root_, fmt::format("file {}: partitionValues has [{}] but the "
                                              "partition columns are [{}]",
                                              path, got, want));
    }
    return arrow::Status::OK();
  };
  std::set<std::string> seen;
  for (const auto& a : adds_) {
    ARROW_RETURN_NOT_OK(check_keys(a.path, a.partition_values, added_keys));
    if (!seen.insert(ConflictKey(a.path, table_root_)).second) {
      return Invalid(table_root_, fmt::format("file {} is added twice in one commit", a.path));
    }
  }
  seen.clear();
  for (const auto& r : removes_) {
    if (!r.partition_values.empty() || r.extended_file_metadata) {
      ARROW_RETURN_NOT_OK(check_keys(r.path, r.partition_values, removed_keys));
    }
    if (!seen.insert(ConflictKey(r.path, table_root_)).second) {
      return Invalid(table_root_, fmt::format("file {} is removed twice in one commit", r.path));
    }
  }
  return arrow::Status::OK();
}

IsolationLevel TransactionImpl::EffectiveIsolation() const {
  // Only file actions that change no data (compaction, stats recommits) or an empty commit.
  bool no_data_change = !protocol_ && !metadata_ && txns_.empty() && domains_.empty();
  for (const auto& a : adds_) no_data_change = no_data_change && !a.data_change;
  for (const auto& r : removes_) no_data_change = no_data_change && !r.data_change;
  return no_data_change ? IsolationLevel::kSnapshotIsolation
                        : options_.isolation.value_or(IsolationLevel::kSerializable);
}

bool TransactionImpl::IsBlindAppend() const {
  return removes_.empty() && cdc_.empty() && !read_whole_table_ && read_predicates_.empty() &&
         !read_any_partitions_ && read_files_.empty();
}

arrow::Result<LosingTransaction> TransactionImpl::DescribeForConflicts(IsolationLevel isolation,
                                                                       bool blind_append) const {
  LosingTransaction loser;
  loser.table_root = table_root_;
  loser.read_version = read_version_;
  loser.isolation = isolation;
  loser.is_blind_append = blind_append;
  loser.changes_protocol = protocol_.has_value();
  loser.changes_metadata = metadata_.has_value();
  loser.read_whole_table = read_whole_table_;
  loser.read_files = read_files_;
  loser.enforced_features = options_.enforced_features;
  loser.app_ids = read_app_ids_;
  for (const auto& [app_id, txn] : txns_) loser.app_ids.insert(app_id);
  for (const auto& r : removes_) loser.removed_files.insert(ConflictKey(r.path, table_root_));
  for (const auto& [name, domain] : domains_) loser.domains.insert(name);
  if (!read_snapshot_) return loser;
  const auto& schema = *read_snapshot_->schema();
  for (const auto& sql : read_predicates_) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, internal::ParseExpression(sql));
    ARROW_ASSIGN_OR_RAISE(auto bound, internal::BindPredicate(parsed, schema));
    loser.read_predicates.push_back(internal::ReadPredicate{sql, std::move(bound)});
  }
  for (const auto& name : read_snapshot_->partition_columns()) {
    auto field = schema.GetFieldByName(name);
    if (!field) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("table {} version {}: partition column '{}' is not in the "
                                    "schema",
                                    table_root_, read_version_, name));
    }
    loser.partition_columns.emplace_back(
        read_snapshot_->column_mapping_mode() == ColumnMappingMode::kNone
            ? name
            : internal::PhysicalName(*field),
        field->type());
  }
  loser.read_partitions_given = read_any_partitions_;
  for (const auto& values : read_partitions_) {
    auto view = internal::TypedPartitionValues(values, loser.partition_columns);
    if (!view.ok()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("table {}: read {}", table_root_, view.status().message()));
    }
    loser.read_partitions.push_back(std::move(*view));
  }
  return loser;
}

arrow::Result<std::string> TransactionImpl::BuildCommit(
    const RebasedTableState& state, int64_t version, int64_t now_ms,
    std::optional<int64_t> previous_timestamp, const std::string& operation,
    const std::map<std::string, std::string>& operation_parameters,
    const std::map<std::string, std::string>& operation_metrics, IsolationLevel isolation,
    bool blind_append, const std::string& txn_id,
    const std::optional<RowIdAssignment>& row_ids) const {
  Metadata metadata = NewMetadata(state);
  const bool ict = internal::InCommitTimestampsEnabled(metadata);

  internal::CommitInfoFields info;
  info.timestamp = now_ms;
  if (ict) info.in_commit_timestamp = internal::NextInCommitTimestamp(now_ms, previous_timestamp);
  info.operation = operation;
  info.operation_parameters = operation_parameters;
  info.operation_metrics = operation_metrics;
  if (read_version_ >= 0) info.read_version = read_version_;
  info.isolation_level = internal::IsolationLevelName(isolation);
  info.is_blind_append = blind_append;
  info.user_metadata = options_.user_metadata;
  info.tags = commit_tags_;
  info.engine_info = kEngineInfo;
  info.txn_id = txn_id;

  std::vector<std::string> lines;
  lines.reserve(4 + txns_.size() + domains_.size() + adds_.size() + removes_.size() + cdc_.size());
  ARROW_RETURN_NOT_OK(Append(internal::CommitInfoToJson(info), &lines));
  if (protocol_) ARROW_RETURN_NOT_OK(Append(internal::ProtocolToJson(*protocol_), &lines));
  if (metadata_) {
    // Turning in-commit timestamps on for an existing table records where they start.
    if (ict && read_version_ >= 0 && !internal::InCommitTimestampsEnabled(state.metadata)) {
      metadata.configuration["delta.inCommitTimestampEnablementVersion"] = std::to_string(version);
      metadata.configuration["delta.inCommitTimestampEnablementTimestamp"] =
          std::to_string(*info.in_commit_timestamp);
    }
    internal::SetMaterializedColumnNames(NewProtocol(state),
                                         read_version_ >= 0 ? &state.metadata : nullptr,
                                         row_id_column_name_, row_commit_version_column_name_,
                                         &metadata);
    ARROW_RETURN_NOT_OK(Append(internal::MetadataToJson(metadata), &lines));
  }
  for (const auto& [app_id, txn] : txns_) {
    Txn t = txn;
    t.last_updated = info.in_commit_timestamp.value_or(now_ms);
    ARROW_RETURN_NOT_OK(Append(internal::TxnToJson(t), &lines));
  }
  for (const auto& [name, domain] : domains_) {
    ARROW_RETURN_NOT_OK(Append(internal::DomainMetadataToJson(domain), &lines));
  }
  if (row_ids && row_ids->high_water_mark_domain) {
    ARROW_RETURN_NOT_OK(
        Append(internal::DomainMetadataToJson(*row_ids->high_water_mark_domain), &lines));
  }
  for (const auto& r : removes_) {
    ARROW_RETURN_NOT_OK(Append(internal::RemoveFileToJson(r), &lines));
  }
  for (const auto& a : row_ids ? row_ids->adds : adds_) {
    ARROW_RETURN_NOT_OK(Append(internal::AddFileToJson(a), &lines));
  }
  for (const auto& c : cdc_) ARROW_RETURN_NOT_OK(Append(internal::CdcFileToJson(c), &lines));
  return internal::JoinActionLines(lines);
}

arrow::Result<std::vector<WinningCommit>> TransactionImpl::ReadWinners(int64_t first_version) const {
  ARROW_ASSIGN_OR_RAISE(auto files, internal::ListLogFiles(*store_, table_root_,
                                                           internal::VersionPrefix(first_version)));
  std::vector<WinningCommit> winners;
  int64_t expected = first_version;
  for (const auto& f : files) {
    if (f.name.kind != internal::LogFileKind::kCommit || f.name.version < first_version) continue;
    if (f.name.version != expected) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("table {}: commit {} is missing while commit {} exists",
                                    table_root_, expected, f.name.version));
    }
    ARROW_ASSIGN_OR_RAISE(auto w, internal::ReadWinningCommit(*store_, f));
    winners.push_back(std::move(w));
    ++expected;
  }
  if (winners.empty()) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("table {}: commit {} exists but is not listed", table_root_,
                                  first_version));
  }
  return winners;
}

bool TransactionImpl::MaybeCheckpoint(int64_t version, const Metadata& metadata) const {
  if (version == 0 || version % TableConfig::Parse(metadata.configuration).checkpoint_interval != 0) return false;
  // A checkpoint only speeds up later reads: failing to write one leaves the commit intact.
  std::shared_ptr<DeltaTable> table = table_;
  if (!table) {
    auto opened = DeltaTable::Open(table_root_, store_);
    if (!opened.ok()) return false;
    table = *opened;
  }
  // The handle's latest snapshot is usually this very version, brought up to date from the
  // snapshot the transaction read; otherwise load the version.
  auto snapshot = table->Latest();
  if (snapshot.ok() && (*snapshot)->version() != version) snapshot = table->SnapshotAt(version);
  if (!snapshot.ok()) return false;
  auto written = internal::WriteCheckpoint(**snapshot, internal::CheckpointOptions{});
  if (!written.ok() || !written->written) return false;
  // Expired log files go once a newer checkpoint exists; failing to delete them is harmless.
  (void)internal::CleanupExpiredLogs(**snapshot, internal::WallClockMillis());
  return true;
}

arrow::Result<CommitResult> TransactionImpl::Commit(
    const std::string& operation, const std::map<std::string, std::string>& operation_parameters,
    const std::map<std::string, std::string>& operation_metrics) {
  if (finished_) {
    return Invalid(table_root_, "this transaction already ran Commit(); start a new one");
  }
  finished_ = true;

  RebasedTableState state;
  if (read_snapshot_) {
    state.protocol = read_snapshot_->protocol();
    state.metadata = read_snapshot_->metadata();
  }
  ARROW_RETURN_NOT_OK(Validate(state));
  const IsolationLevel isolation = EffectiveIsolation();
  const bool blind_append = IsBlindAppend();
  ARROW_ASSIGN_OR_RAISE(auto loser, DescribeForConflicts(isolation, blind_append));
  const std::string txn_id = internal::RandomUuidV4();
  const std::string log_dir = internal::LogDir(table_root_);
  row_id_column_name_ = internal::NewMaterializedColumnName("_row-id-col-");
  row_commit_version_column_name_ = internal::NewMaterializedColumnName("_row-commit-version-col-");
  int64_t row_id_high_water_mark = -1;
  if (read_snapshot_) {
    ARROW_ASSIGN_OR_RAISE(row_id_high_water_mark,
                          internal::RowIdHighWaterMark(
                              read_snapshot_->domain_metadata(),
                              fmt::format("table {} version {}", table_root_, read_version_)));
  }

  std::optional<int64_t> previous_timestamp;
  if (read_snapshot_) previous_timestamp = read_snapshot_->timestamp_ms();
  int64_t version = read_version_ + 1;
  CommitResult result;
  for (int attempt = 1;; ++attempt) {
    // Row ids and row commit versions depend on the version this attempt writes.
    std::optional<RowIdAssignment> row_ids;
    if (internal::RowIdAssignmentRequired(NewProtocol(state), NewMetadata(state))) {
      ARROW_ASSIGN_OR_RAISE(row_ids, internal::AssignRowIds(adds_, row_id_high_water_mark,
                                                            version, table_root_));
    }
    auto built = BuildCommit(state, version, internal::WallClockMillis(), previous_timestamp,
                             operation, operation_parameters, operation_metrics, isolation,
                             blind_append, txn_id, row_ids);
    if (!built.ok()) return Invalid(table_root_, built.status().message());
    const std::string content = std::move(*built);
    const std::string path = log_dir + "/" + internal::CommitFileName(version);
    arrow::Status put = store_->PutIfAbsent(path, content);
    if (put.ok()) {
      result.version = version;
      result.attempts = attempt;
      break;
    }
    if (!IsDeltaError(put, DeltaErrorCode::kVersionExists)) {
      // The put failed, but it may have failed after the file became visible (e.g. the
      // directory sync). Read it back: our own bytes there mean the commit landed.
      auto landed = store_->Read(path);
      if (landed.ok() && (*landed)->ToString() == content) {
        result.version = version;
        result.attempts = attempt;
        break;
      }
      if (!landed.ok() && !IsDeltaError(landed.status(), DeltaErrorCode::kMissingFile)) {
        return DeltaError(DeltaErrorCode::kCommitStateUnknown,
                          fmt::format("table {}: writing commit {} failed ({}) and it cannot be "
                                      "read back ({}): the commit may or may not have landed",
                                      table_root_, path, put.message(),
                                      landed.status().message()));
      }
      if (landed.ok()) continue;  // another writer's commit is there: treat as a lost race
      return put;
    }

    if (read_version_ < 0) {
      return DeltaError(DeltaErrorCode::kProtocolChanged,
                        fmt::format("table {}: a concurrent transaction created the table "
                                    "(version 0 already exists)",
                                    table_root_));
    }
    ARROW_ASSIGN_OR_RAISE(auto winners, ReadWinners(version));
    // Our own earlier attempt, reported as lost although it landed.
    if (winners.front().txn_id == txn_id) {
      result.version = winners.front().version;
      result.attempts = attempt;
      break;
    }
    for (const auto& w : winners) {
      ARROW_RETURN_NOT_OK(CheckWinningCommit(loser, w, &state));
      previous_timestamp = w.Timestamp();
      ARROW_ASSIGN_OR_RAISE(auto winner_hwm, internal::RowIdHighWaterMarkSetBy(
                                                 w.actions.domains, w.path));
      if (winner_hwm) row_id_high_water_mark = std::max(row_id_high_water_mark, *winner_hwm);
    }
    // The winners may have changed the table into one this commit may not write as staged.
    ARROW_RETURN_NOT_OK(Validate(state));
    const int64_t first_lost = version;
    version = winners.back().version + 1;
    if (attempt >= options_.max_attempts) {
      return DeltaError(DeltaErrorCode::kVersionExists,
                        fmt::format("table {}: gave up after {} commit attempts (max_attempts): "
                                    "every attempt lost its version to a concurrent commit (the "
                                    "last one lost to versions {}..{}); no conflict was found, so "
                                    "the operation can be retried",
                                    table_root_, attempt, first_lost, version - 1));
    }
    auto delay = internal::BackoffDelay(attempt, options_.initial_backoff, options_.max_backoff);
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
  }
  result.checkpointed = MaybeCheckpoint(result.version, NewMetadata(state));
  return result;
}

}  // namespace

arrow::Result<std::unique_ptr<Transaction>> Transaction::Start(
    std::shared_ptr<DeltaTable> table, std::shared_ptr<const Snapshot> read_snapshot,
    TransactionOptions options) {
  if (!table) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "Transaction::Start: table is null");
  }
  std::string root = table->root();
  ARROW_RETURN_NOT_OK(ValidateOptions(options, root));
  if (read_snapshot) {
    ARROW_RETURN_NOT_OK(internal::CheckWriteSupported(read_snapshot->protocol(),
                                                      read_snapshot->metadata(), root,
                                                      read_snapshot->version(),
                                                      options.enforced_features));
  }
  auto store = table->store();
  return std::unique_ptr<Transaction>(new TransactionImpl(
      std::move(table), std::move(root), std::move(store), std::move(read_snapshot),
      std::move(options)));
}

arrow::Result<std::unique_ptr<Transaction>> Transaction::StartCreate(
    std::string table_root, std::shared_ptr<LogStore> store, TransactionOptions options) {
  if (!store) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "Transaction::StartCreate: store is null");
  }
  ARROW_RETURN_NOT_OK(ValidateOptions(options, table_root));
  return std::unique_ptr<Transaction>(new TransactionImpl(
      nullptr, std::move(table_root), std::move(store), nullptr, std::move(options)));
}

}  // namespace deltacpp
