// RESTORE: the difference between the latest version's files and an earlier version's, checked
// to be on storage, committed as one set of removes and re-adds.
#include "deltacpp/ops/restore.h"

#include <fmt/core.h>

#include <unordered_map>

#include "deltacpp/error.h"
#include "log/file_action_schema.h"
#include "ops/op_util.h"
#include "protocol/deletion_vector.h"
#include "protocol/path_encoding.h"
#include "txn/writer_features.h"
#include "util/clock.h"
#include "util/thread_pools.h"

namespace deltacpp {

namespace {

// One file as the log reconciles it: path and deletion vector.
std::string FileKey(const LiveFiles& files, FileRef ref, const std::string& root) {
  return internal::FileActionKey(files.actions(ref), ref.row, root);
}

int64_t SizeOf(const LiveFiles& files, FileRef ref) {
  const auto& size =
      static_cast<const arrow::Int64Array&>(*files.actions(ref).column(internal::kSizeCol));
  return size.IsValid(ref.row) ? size.Value(ref.row) : 0;
}

bool SameMetadata(const Metadata& a, const Metadata& b) {
  return a.id == b.id && a.name == b.name && a.description == b.description &&
         a.format_provider == b.format_provider && a.format_options == b.format_options &&
         a.schema_string == b.schema_string && a.partition_columns == b.partition_columns &&
         a.configuration == b.configuration;
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> RestoreMetrics::Named() const {
  return {{"tableSizeAfterRestore", table_size_after_restore},
          {"numOfFilesAfterRestore", num_files_after_restore},
          {"numRemovedFiles", num_removed_files},
          {"numRestoredFiles", num_restored_files},
          {"removedFilesSize", removed_files_size},
          {"restoredFilesSize", restored_files_size}};
}

arrow::Result<RestoreMetrics> RestoreBuilder::Execute() const {
  if (version_.has_value() == timestamp_ms_.has_value()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "RESTORE needs exactly one of a version and a timestamp");
  }
  std::shared_ptr<DeltaTable> table = table_;
  if (!table) {
    ARROW_ASSIGN_OR_RAISE(table, DeltaTable::Open(location_));
  }
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<const Snapshot> current, table->Latest());
  std::shared_ptr<const Snapshot> target;
  if (version_) {
    ARROW_ASSIGN_OR_RAISE(target, table->SnapshotAt(*version_));
  } else {
    ARROW_ASSIGN_OR_RAISE(target, table->SnapshotAtTimestamp(*timestamp_ms_));
  }
  const std::string& root = current->table_root();
  const std::string context = fmt::format("table {} version {}: RESTORE to version {}", root,
                                          current->version(), target->version());

  // Restored rows were written under the table's rules of their time; RESTORE writes no row.
  TransactionOptions options = options_;
  for (const auto& f : internal::RowLevelWriterFeatures()) options.enforced_features.push_back(f);
  ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::Start(table, current, options));
  txn->ReadWholeTable();

  std::unordered_map<std::string, FileRef> now_files;
  now_files.reserve(static_cast<size_t>(current->num_files()));
  current->live_files().ForEach(
      [&](FileRef ref) { now_files.emplace(FileKey(current->live_files(), ref, root), ref); });
  std::vector<FileRef> to_add;
  std::unordered_map<std::string, bool> in_target;
  in_target.reserve(static_cast<size_t>(target->num_files()));
  RestoreMetrics metrics;
  target->live_files().ForEach([&](FileRef ref) {
    std::string key = FileKey(target->live_files(), ref, root);
    if (!now_files.count(key)) to_add.push_back(ref);
    in_target.emplace(std::move(key), true);
    metrics.table_size_after_restore += SizeOf(target->live_files(), ref);
    ++metrics.num_files_after_restore;
  });

  // Every file to bring back must still be there: VACUUM may have removed it.
  const LiveFiles& old_files = target->live_files();
  auto fs = current->store()->filesystem();
  ARROW_RETURN_NOT_OK(internal::RunFileTasks(static_cast<int>(to_add.size()), [&](int i) {
    const FileRef ref = to_add[static_cast<size_t>(i)];
    std::vector<std::string> needed;
    ARROW_ASSIGN_OR_RAISE(auto data, internal::ResolveFileInTable(root, root, old_files.path(ref)));
    needed.push_back(std::move(data));
    AddFile add = internal::AddForLiveFile(old_files.actions(ref), ref.row);
    if (add.deletion_vector && add.deletion_vector->storage_type != "i") {
      ARROW_ASSIGN_OR_RAISE(auto dv,
                            internal::DeletionVectorAbsolutePath(*add.deletion_vector, root));
      needed.push_back(std::move(dv));
    }
    for (const auto& path : needed) {
      ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(path));
      if (info.type() != arrow::fs::FileType::File) {
        return DeltaError(DeltaErrorCode::kMissingFile,
                          fmt::format("{}: file {} that version {} needs is gone (removed by "
                                      "VACUUM?); nothing was restored",
                                      context, path, target->version()));
      }
    }
    return arrow::Status::OK();
  }));

  const int64_t now = internal::WallClockMillis();
  std::vector<RemoveFile> removes;
  current->live_files().ForEach([&](FileRef ref) {
    if (in_target.count(FileKey(current->live_files(), ref, root))) return;
    removes.push_back(internal::RemoveForLiveFile(current->live_files(), ref, now));
    metrics.removed_files_size += SizeOf(current->live_files(), ref);
  });
  std::vector<AddFile> adds;
  adds.reserve(to_add.size());
  for (FileRef ref : to_add) {
    adds.push_back(internal::AddForLiveFile(old_files.actions(ref), ref.row));
    metrics.restored_files_size += adds.back().size;
  }
  metrics.num_removed_files = static_cast<int64_t>(removes.size());
  metrics.num_restored_files = static_cast<int64_t>(adds.size());
  metrics.restored_version = target->version();

  if (!SameMetadata(current->metadata(), target->metadata())) {
    txn->UpdateMetadata(target->metadata());
  }
  txn->RemoveFiles(std::move(removes));
  txn->AddFiles(std::move(adds));
  std::map<std::string, std::string> parameters;
  if (version_) {
    parameters["version"] = std::to_string(*version_);
  } else {
    parameters["timestamp"] = timestamp_text_;
  }
  std::map<std::string, std::string> named;
  for (const auto& [name, value] : metrics.Named()) named[name] = std::to_string(value);
  ARROW_ASSIGN_OR_RAISE(auto committed, txn->Commit("RESTORE", parameters, named));
  metrics.version = committed.version;
  return metrics;
}

}  // namespace deltacpp
