#include "txn/conflict_checker.h"

#include <arrow/array.h>
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "deltacpp/error.h"
#include "expr/data_skipping.h"
#include "log/file_action_schema.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "protocol/table_features.h"
#include "txn/commit_info.h"
#include "txn/metadata_allow_list.h"
#include "txn/writer_features.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

// One file action of a winning commit, read from the columnar batch.
struct WinnerFile {
  std::string path;
  bool is_add = false;
  bool data_change = true;
  int64_t row = 0;
};

std::vector<WinnerFile> WinnerFiles(const ParsedActions& actions) {
  std::vector<WinnerFile> out;
  const auto& batch = actions.file_actions;
  if (!batch) return out;
  const auto& paths = static_cast<const arrow::StringArray&>(*batch->column(kPathCol));
  const auto& data_change = static_cast<const arrow::BooleanArray&>(*batch->column(kDataChangeCol));
  const auto& is_add =
      static_cast<const arrow::BooleanArray&>(*batch->column(kNumFileActionColumns));
  out.reserve(batch->num_rows());
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    WinnerFile f;
    f.path = std::string(paths.GetView(i));
    f.is_add = is_add.Value(i);
    f.data_change = !data_change.IsValid(i) || data_change.Value(i);
    f.row = i;
    out.push_back(std::move(f));
  }
  return out;
}

std::string PartitionText(const std::map<std::string, std::optional<std::string>>& values) {
  if (values.empty()) return "the table (unpartitioned)";
  std::string out = "partition [";
  bool first = true;
  for (const auto& [k, v] : values) {
    if (!first) out += ", ";
    first = false;
    out += k + "=" + (v ? *v : std::string("null"));
  }
  return out + "]";
}

std::string Context(const LosingTransaction& loser, const WinningCommit& winner) {
  return fmt::format("table {}: a concurrent commit (version {}) conflicts with this transaction "
                     "(read version {})",
                     loser.table_root, winner.version, loser.read_version);
}

arrow::Status CheckProtocol(const LosingTransaction& loser, const WinningCommit& winner,
                            RebasedTableState* state) {
  const auto& winner_protocol = winner.actions.protocol;
  if (loser.read_version < 0) {
    return DeltaError(DeltaErrorCode::kProtocolChanged,
                      fmt::format("{}: both created the table (version 0 already exists)",
                                  Context(loser, winner)));
  }
  if (!winner_protocol) return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(CheckWriteSupported(*winner_protocol,
                                          winner.actions.metadata.value_or(state->metadata),
                                          loser.table_root, winner.version,
                                          loser.enforced_features));
  if (loser.changes_protocol) {
    return DeltaError(DeltaErrorCode::kProtocolChanged,
                      fmt::format("{}: both changed the protocol", Context(loser, winner)));
  }
  const auto before = EffectiveFeatures(state->protocol);
  const auto after = EffectiveFeatures(*winner_protocol);
  for (const auto& f : before) {
    if (std::find(after.begin(), after.end(), f) == after.end()) {
      return DeltaError(DeltaErrorCode::kProtocolChanged,
                        fmt::format("{}: it removed table feature '{}' from the protocol",
                                    Context(loser, winner), f));
    }
  }
  state->protocol = *winner_protocol;
  return arrow::Status::OK();
}

arrow::Status CheckMetadata(const LosingTransaction& loser, const WinningCommit& winner,
                            RebasedTableState* state) {
  const auto& winner_metadata = winner.actions.metadata;
  if (!winner_metadata) return arrow::Status::OK();
  if (loser.changes_metadata) {
    return DeltaError(DeltaErrorCode::kMetadataChanged,
                      fmt::format("{}: both changed the table metadata", Context(loser, winner)));
  }
  if (auto why = DisallowedMetadataChange(state->metadata, *winner_metadata)) {
    return DeltaError(DeltaErrorCode::kMetadataChanged,
                      fmt::format("{}: it changed the table metadata: {}", Context(loser, winner),
                                  *why));
  }
  ARROW_RETURN_NOT_OK(
      CheckWriteSupported(state->protocol, *winner_metadata, loser.table_root, winner.version,
                          loser.enforced_features));
  state->metadata = *winner_metadata;
  return arrow::Status::OK();
}

arrow::Status CheckDomains(const LosingTransaction& loser, const WinningCommit& winner) {
  for (const auto& d : winner.actions.domains) {
    if (loser.domains.count(d.domain)) {
      return DeltaError(DeltaErrorCode::kConcurrentTransaction,
                        fmt::format("{}: both changed metadata domain '{}'",
                                    Context(loser, winner), d.domain));
    }
  }
  return arrow::Status::OK();
}

arrow::Status CheckAppTransactions(const LosingTransaction& loser, const WinningCommit& winner) {
  for (const auto& t : winner.actions.txns) {
    if (loser.app_ids.count(t.app_id)) {
      return DeltaError(DeltaErrorCode::kConcurrentTransaction,
                        fmt::format("{}: it recorded txn version {} for appId '{}', which this "
                                    "transaction depends on",
                                    Context(loser, winner), t.version, t.app_id));
    }
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<PartitionValuesView> TypedPartitionValues(
    const std::map<std::string, std::optional<std::string>>& raw,
    const std::vector<std::pair<std::string, std::shared_ptr<arrow::DataType>>>& columns) {
  PartitionValuesView view;
  for (const auto& [physical, type] : columns) {
    auto it = raw.find(physical);
    std::optional<std::string_view> value;
    if (it != raw.end() && it->second) value = *it->second;
    auto scalar = ParsePartitionValue(value, type);
    if (!scalar.ok()) {
      return arrow::Status::Invalid(
          fmt::format("partition column '{}': {}", physical, scalar.status().message()));
    }
    view[physical] = *scalar;
  }
  return view;
}

namespace {

// Same typed value in every partition column (null equals null).
bool SamePartition(const PartitionValuesView& read, const PartitionValuesView& added) {
  for (const auto& [column, value] : read) {
    auto it = added.find(column);
    if (it == added.end()) return false;
    const bool a_null = !value || !value->is_valid;
    const bool b_null = !it->second || !it->second->is_valid;
    if (a_null || b_null) {
      if (a_null != b_null) return false;
      continue;
    }
    if (!value->Equals(*it->second)) return false;
  }
  return true;
}

arrow::Status CheckConcurrentAppends(const LosingTransaction& loser, const WinningCommit& winner,
                                     const std::vector<WinnerFile>& files) {
  if (loser.isolation == IsolationLevel::kSnapshotIsolation || loser.is_blind_append) {
    return arrow::Status::OK();
  }
  if (!loser.read_whole_table && loser.read_predicates.empty() && loser.read_files.empty() &&
      !loser.read_partitions_given) {
    return arrow::Status::OK();
  }
  // WriteSerializable lets blind appends through unless this transaction changes metadata.
  if (loser.isolation == IsolationLevel::kWriteSerializable && !loser.changes_metadata &&
      winner.is_blind_append.value_or(false)) {
    return arrow::Status::OK();
  }
  // Without a predicate to test (whole table, unpartitioned table, or only files named) every
  // new file could have been among the ones read.
  const bool match_all = loser.read_whole_table || loser.partition_columns.empty() ||
                         (loser.read_predicates.empty() && !loser.read_partitions_given);
  const auto& batch = winner.actions.file_actions;
  for (const auto& f : files) {
    // dataChange=false adds hold rows that were already in the table (compaction, stats
    // recommits); the removal of their originals is what conflicts.
    if (!f.is_add || !f.data_change) continue;
    auto raw = PartitionValuesAt(*batch, f.row);
    std::optional<std::string> matched;
    if (match_all) {
      matched = loser.read_whole_table ? std::string("the whole table")
                                       : std::string("the files it read");
    } else {
      auto typed = TypedPartitionValues(raw, loser.partition_columns);
      if (!typed.ok()) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("table {}: commit {}: file {}: {}", loser.table_root,
                                      winner.path, f.path, typed.status().message()));
      }
      const PartitionValuesView& view = *typed;
      for (const auto& p : loser.read_predicates) {
        if (!CanSkipFile(p.bound, FileStats{}, view)) {
          matched = "predicate '" + p.sql + "'";
          break;
        }
      }
      for (size_t i = 0; !matched && i < loser.read_partitions.size(); ++i) {
        if (SamePartition(loser.read_partitions[i], view)) matched = "the partitions it replaces";
      }
    }
    if (matched) {
      return DeltaError(DeltaErrorCode::kConcurrentAppend,
                        fmt::format("{}: it added file {} to {}, which this transaction read "
                                    "({}); re-run the operation",
                                    Context(loser, winner), f.path, PartitionText(raw),
                                    *matched));
    }
  }
  return arrow::Status::OK();
}

arrow::Status CheckDeletes(const LosingTransaction& loser, const WinningCommit& winner,
                           const std::vector<WinnerFile>& files) {
  for (const auto& f : files) {
    if (f.is_add) continue;
    if (loser.read_files.count(ConflictKey(f.path, loser.table_root))) {
      return DeltaError(DeltaErrorCode::kConcurrentDeleteRead,
                        fmt::format("{}: it removed file {}, which this transaction read; re-run "
                                    "the operation",
                                    Context(loser, winner), f.path));
    }
  }
  if (loser.read_whole_table) {
    for (const auto& f : files) {
      if (f.is_add) continue;
      return DeltaError(DeltaErrorCode::kConcurrentDeleteRead,
                        fmt::format("{}: it removed file {} and this transaction read the whole "
                                    "table; re-run the operation",
                                    Context(loser, winner), f.path));
    }
  }
  for (const auto& f : files) {
    if (f.is_add) continue;
    if (loser.removed_files.count(ConflictKey(f.path, loser.table_root))) {
      return DeltaError(DeltaErrorCode::kConcurrentDeleteDelete,
                        fmt::format("{}: both removed file {}; re-run the operation",
                                    Context(loser, winner), f.path));
    }
  }
  return arrow::Status::OK();
}

}  // namespace

int64_t WinningCommit::Timestamp() const {
  if (actions.commit_info && actions.commit_info->in_commit_timestamp) {
    return *actions.commit_info->in_commit_timestamp;
  }
  return modification_time_ms;
}

arrow::Result<WinningCommit> ReadWinningCommit(LogStore& store, const LogFile& file) {
  WinningCommit w;
  w.version = file.name.version;
  w.path = file.entry.path;
  w.modification_time_ms = file.entry.modification_time_ms;
  ARROW_ASSIGN_OR_RAISE(auto buf, store.Read(file.entry.path));
  ARROW_ASSIGN_OR_RAISE(
      w.actions,
      ParseActionFile(std::string_view(buf->data_as<char>(), buf->size()), file.entry.path));
  if (w.actions.commit_info) {
    auto summary = SummarizeCommitInfo(*w.actions.commit_info);
    w.is_blind_append = summary.is_blind_append;
    w.txn_id = std::move(summary.txn_id);
  }
  return w;
}

std::string ConflictKey(const std::string& path, const std::string& table_root) {
  return CanonicalFilePath(path, table_root);
}

arrow::Status CheckWinningCommit(const LosingTransaction& loser, const WinningCommit& winner,
                                 RebasedTableState* state) {
  ARROW_RETURN_NOT_OK(CheckProtocol(loser, winner, state));
  ARROW_RETURN_NOT_OK(CheckMetadata(loser, winner, state));
  ARROW_RETURN_NOT_OK(CheckDomains(loser, winner));
  ARROW_RETURN_NOT_OK(CheckAppTransactions(loser, winner));
  const auto files = WinnerFiles(winner.actions);
  ARROW_RETURN_NOT_OK(CheckConcurrentAppends(loser, winner, files));
  return CheckDeletes(loser, winner, files);
}

}  // namespace deltacpp::internal
