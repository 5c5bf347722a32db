#include "scan/commit_changes.h"

#include <simdjson.h>

#include "log/file_action_schema.h"

namespace deltacpp::internal {

namespace {

struct FileAction {
  std::string path;
  std::map<std::string, std::optional<std::string>> partition_values;
  std::optional<DeletionVectorDescriptor> dv;
};

std::optional<DeletionVectorDescriptor> DeletionVectorAt(const arrow::RecordBatch& batch,
                                                         int64_t row) {
  const auto& dvs = static_cast<const arrow::StructArray&>(*batch.column(kDeletionVectorCol));
  if (!dvs.IsValid(row)) return std::nullopt;
  const auto& type = static_cast<const arrow::StringArray&>(*dvs.field(kDvStorageType));
  const auto& path = static_cast<const arrow::StringArray&>(*dvs.field(kDvPathOrInlineDv));
  const auto& offset = static_cast<const arrow::Int32Array&>(*dvs.field(kDvOffset));
  const auto& size = static_cast<const arrow::Int32Array&>(*dvs.field(kDvSizeInBytes));
  const auto& card = static_cast<const arrow::Int64Array&>(*dvs.field(kDvCardinality));
  DeletionVectorDescriptor d;
  d.storage_type = std::string(type.GetView(row));
  d.path_or_inline_dv = std::string(path.GetView(row));
  if (offset.IsValid(row)) d.offset = offset.Value(row);
  d.size_in_bytes = size.IsValid(row) ? size.Value(row) : 0;
  d.cardinality = card.IsValid(row) ? card.Value(row) : 0;
  return d;
}

// A MERGE that reports no inserted, updated or deleted target row changed nothing, whatever
// files it rewrote. Missing metrics do not count as zero.
bool IsNoOpMerge(const std::optional<CommitInfo>& info) {
  if (!info || info->operation != "MERGE") return false;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(info->raw_json).get(doc)) return false;
  simdjson::dom::object metrics;
  if (doc["operationMetrics"].get(metrics)) return false;
  for (const char* key :
       {"numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted"}) {
    std::string_view value;
    if (metrics[key].get(value) || value != "0") return false;
  }
  return true;
}

}  // namespace

std::vector<ChangeFile> CommitChangeFiles(const ParsedActions& actions) {
  std::vector<ChangeFile> out;
  if (!actions.cdc_files.empty()) {
    for (const auto& cdc : actions.cdc_files) {
      ChangeFile f;
      f.path = cdc.path;
      f.partition_values = cdc.partition_values;
      f.is_cdc = true;
      out.push_back(std::move(f));
    }
    return out;
  }
  if (IsNoOpMerge(actions.commit_info) || !actions.file_actions) return out;

  // By path, the last action of each kind wins (a path appears once per kind in a valid commit).
  const auto& batch = *actions.file_actions;
  const auto& paths = static_cast<const arrow::StringArray&>(*batch.column(kPathCol));
  const auto& data_change = static_cast<const arrow::BooleanArray&>(*batch.column(kDataChangeCol));
  const auto& is_add =
      static_cast<const arrow::BooleanArray&>(*batch.column(kNumFileActionColumns));
  std::map<std::string, FileAction> adds, removes;
  std::vector<std::string> add_order, remove_order;
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    if (!data_change.IsValid(row) || !data_change.Value(row)) continue;
    FileAction a;
    a.path = std::string(paths.GetView(row));
    a.partition_values = PartitionValuesAt(batch, row);
    a.dv = DeletionVectorAt(batch, row);
    const bool add = is_add.Value(row);
    auto& target = add ? adds : removes;
    auto& order = add ? add_order : remove_order;
    if (!target.count(a.path)) order.push_back(a.path);
    target[a.path] = std::move(a);
  }
  for (const auto& path : remove_order) {
    const FileAction& r = removes[path];
    auto added = adds.find(path);
    if (added == adds.end()) {
      ChangeFile f;
      f.path = r.path;
      f.partition_values = r.partition_values;
      f.change_type = "delete";
      f.deletion_vector = r.dv;
      out.push_back(std::move(f));
      continue;
    }
    // Removed and added again: only the rows whose deletion state changed are changes. Rows the
    // new DV deletes and the old one did not are deleted; rows the old DV deleted and the new one
    // does not are inserted again (a restore).
    const FileAction& a = added->second;
    if (a.dv) {
      ChangeFile f;
      f.path = path;
      f.partition_values = a.partition_values;
      f.change_type = "delete";
      f.rows_in = a.dv;
      f.rows_not_in = r.dv;
      out.push_back(std::move(f));
    }
    if (r.dv) {
      ChangeFile f;
      f.path = path;
      f.partition_values = a.partition_values;
      f.change_type = "insert";
      f.rows_in = r.dv;
      f.rows_not_in = a.dv;
      out.push_back(std::move(f));
    }
  }
  for (const auto& path : add_order) {
    if (removes.count(path)) continue;
    const FileAction& a = adds[path];
    ChangeFile f;
    f.path = a.path;
    f.partition_values = a.partition_values;
    f.change_type = "insert";
    f.deletion_vector = a.dv;
    out.push_back(std::move(f));
  }
  return out;
}

AddedDataFile AddedDataFileAt(const arrow::RecordBatch& batch, int64_t row) {
  const auto& paths = static_cast<const arrow::StringArray&>(*batch.column(kPathCol));
  const auto& sizes = static_cast<const arrow::Int64Array&>(*batch.column(kSizeCol));
  const auto& mtimes = static_cast<const arrow::Int64Array&>(*batch.column(kModificationTimeCol));
  AddedDataFile f;
  f.path = std::string(paths.GetView(row));
  f.partition_values = PartitionValuesAt(batch, row);
  f.deletion_vector = DeletionVectorAt(batch, row);
  f.size = sizes.IsValid(row) ? sizes.Value(row) : 0;
  f.modification_time = mtimes.IsValid(row) ? mtimes.Value(row) : 0;
  return f;
}

CommitDataChanges DataChangesOf(const ParsedActions& actions) {
  CommitDataChanges out;
  if (!actions.file_actions) return out;
  const auto& batch = *actions.file_actions;
  const auto& data_change = static_cast<const arrow::BooleanArray&>(*batch.column(kDataChangeCol));
  const auto& is_add =
      static_cast<const arrow::BooleanArray&>(*batch.column(kNumFileActionColumns));
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    if (!data_change.IsValid(row) || !data_change.Value(row)) continue;
    if (!is_add.Value(row)) {
      ++out.data_removes;
      continue;
    }
    out.adds.push_back(AddedDataFileAt(batch, row));
  }
  return out;
}

}  // namespace deltacpp::internal
