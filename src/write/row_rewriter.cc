#include "write/row_rewriter.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <iterator>
#include <numeric>

#include "deltacpp/error.h"
#include "log/file_action_schema.h"
#include "ops/op_util.h"
#include "protocol/deletion_vector.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "protocol/schema_json.h"
#include "scan/data_file_reader.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

// The add's stats as a DV-carrying add keeps them: numRecords and bounds unchanged, but the
// bounds may now be wider than the live rows. Without stats, the exact row count is all a
// reader needs (numRecords must be exact next to a DV).
std::string StatsWithLooseBounds(const std::optional<std::string>& stats, int64_t physical_rows) {
  rapidjson::Document doc;
  if (stats) doc.Parse(stats->data(), stats->size());
  if (!stats || doc.HasParseError() || !doc.IsObject()) {
    return fmt::format(R"({{"numRecords":{},"tightBounds":false}})", physical_rows);
  }
  if (doc.HasMember("tightBounds")) {
    doc["tightBounds"].SetBool(false);
  } else {
    doc.AddMember("tightBounds", false, doc.GetAllocator());
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  doc.Accept(writer);
  return std::string(out.GetString(), out.GetSize());
}

// The rows of `rows` whose position is in `wanted` (both ascending).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> RowsAtPositions(
    const std::shared_ptr<arrow::RecordBatch>& rows, const std::vector<uint64_t>& positions,
    const std::vector<uint64_t>& wanted) {
  arrow::BooleanBuilder mask;
  ARROW_RETURN_NOT_OK(mask.Reserve(rows->num_rows()));
  auto it = wanted.begin();
  for (uint64_t p : positions) {
    while (it != wanted.end() && *it < p) ++it;
    mask.UnsafeAppend(it != wanted.end() && *it == p);
  }
  ARROW_ASSIGN_OR_RAISE(auto m, mask.Finish());
  ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(rows, m));
  return filtered.record_batch();
}

// The rows of `file` a mask selects: where it is TRUE (NULL counts as false), and their
// positions in the Parquet file. `what` names the mask in the error for a wrong length.
struct MaskedRows {
  std::vector<bool> selected;
  std::vector<uint64_t> positions;
};

arrow::Result<MaskedRows> SelectedRows(const FileRows& file, const arrow::BooleanArray& mask,
                                       const char* what) {
  if (mask.length() != file.rows->num_rows()) {
    return arrow::Status::Invalid("the ", what, " mask has ", mask.length(), " values for ",
                                  file.rows->num_rows(), " rows");
  }
  MaskedRows out;
  out.selected.resize(mask.length());
  for (int64_t i = 0; i < mask.length(); ++i) {
    out.selected[i] = mask.IsValid(i) && mask.Value(i);
    if (out.selected[i]) out.positions.push_back(file.positions[i]);
  }
  return out;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> SelectRows(
    const std::shared_ptr<arrow::RecordBatch>& rows, const std::vector<bool>& keep) {
  arrow::BooleanBuilder b;
  ARROW_RETURN_NOT_OK(b.Reserve(static_cast<int64_t>(keep.size())));
  for (bool k : keep) b.UnsafeAppend(k);
  ARROW_ASSIGN_OR_RAISE(auto m, b.Finish());
  ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(rows, m));
  return filtered.record_batch();
}

RowRewriter::RowRewriter(RowRewriterOptions options) : options_(std::move(options)) {}

arrow::Result<std::unique_ptr<RowRewriter>> RowRewriter::Make(RowRewriterOptions options) {
  if (!options.snapshot) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "RowRewriter: no snapshot");
  }
  auto out = std::unique_ptr<RowRewriter>(new RowRewriter(std::move(options)));
  const auto& snapshot = *out->options_.snapshot;
  out->schema_ = out->options_.schema ? out->options_.schema : snapshot.schema();
  // New files are in the snapshot's schema unless the rows are converted to another.
  if (!out->options_.to_output) out->options_.data_options.table_schema = out->schema_;
  ARROW_ASSIGN_OR_RAISE(out->data_writer_, DataWriter::Make(out->options_.data_options));
  if (out->options_.mode == RewriteMode::kDeletionVectors) {
    DeletionVectorWriterOptions dv;
    dv.table_root = snapshot.table_root();
    dv.fs = out->options_.data_options.fs;
    const auto& config = snapshot.config();
    if (config.randomize_file_prefixes) {
      dv.random_prefix_length =
          static_cast<int32_t>(std::clamp<int64_t>(config.random_prefix_length, 0, 32));
    }
    ARROW_ASSIGN_OR_RAISE(out->dv_writer_, DeletionVectorWriter::Make(std::move(dv)));
  }
  return out;
}

const std::shared_ptr<arrow::Schema>& RowRewriter::schema() const { return schema_; }

std::string RowRewriter::LogPath(FileRef file_row) const {
  return std::string(options_.snapshot->live_files().path(file_row));
}

arrow::Status RowRewriter::FileError(FileRef file_row, const arrow::Status& st) const {
  const auto& snapshot = *options_.snapshot;
  std::string msg = fmt::format("table {} version {}: {} on file {}: {}", snapshot.table_root(),
                                snapshot.version(), options_.operation, LogPath(file_row),
                                st.message());
  if (auto code = GetDeltaErrorCode(st)) return DeltaError(*code, std::move(msg));
  return arrow::Status(st.code(), std::move(msg));
}

arrow::Result<FileRows> RowRewriter::Read(FileRef file_row) const {
  const auto& snapshot = *options_.snapshot;
  const LiveFiles& live = snapshot.live_files();
  if (file_row.chunk < 0 || file_row.chunk >= static_cast<int32_t>(live.chunks().size()) ||
      !live.chunks()[file_row.chunk].IsLive(file_row.row)) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table {} version {}: {}: no live file at chunk {} row {}",
                                  snapshot.table_root(), snapshot.version(), options_.operation,
                                  file_row.chunk, file_row.row));
  }
  const auto& files = live.actions(file_row);
  const std::string log_path = LogPath(file_row);
  const auto& fs = options_.data_options.fs;

  FileReadPlan plan;
  plan.table_root = snapshot.table_root();
  plan.version = snapshot.version();
  plan.mode = snapshot.column_mapping_mode();
  plan.read_schema = schema_;
  plan.output_schema = schema_;
  plan.batch_size = 64 * 1024;
  FileTask task;
  const auto raw_values = PartitionValuesAt(files, file_row.row);
  for (int i = 0; i < schema_->num_fields(); ++i) {
    const auto& field = schema_->field(i);
    plan.output_fields.push_back(i);
    bool partition = false;
    for (const auto& p : snapshot.partition_columns()) {
      partition |= EqualsIgnoreCase(p, field->name());
    }
    plan.is_partition.push_back(partition);
    if (!partition) {
      task.partition_values.push_back(nullptr);
      continue;
    }
    const std::string key =
        plan.mode == ColumnMappingMode::kNone ? field->name() : PhysicalName(*field);
    auto it = raw_values.find(key);
    if (it == raw_values.end()) {
      return FileError(file_row, DeltaError(DeltaErrorCode::kCorruptLog,
                                            fmt::format("partitionValues has no entry for "
                                                        "partition column '{}'",
                                                        key)));
    }
    std::optional<std::string_view> raw;
    if (it->second) raw = *it->second;
    auto value = ParsePartitionValue(raw, field->type());
    if (!value.ok()) return FileError(file_row, value.status());
    task.partition_values.push_back(*value);
  }
  auto resolved = ResolveFileInTable(snapshot.table_root(), snapshot.table_root(), log_path);
  if (!resolved.ok()) return FileError(file_row, resolved.status());
  task.path = *resolved;
  const auto remove = RemoveForLiveFile(files, file_row.row, 0);
  task.size = remove.size.value_or(0);

  // The whole file, so that row positions are those of the Parquet file; the existing
  // deletion vector is applied below, by position.
  ARROW_ASSIGN_OR_RAISE(auto batches, ReadDataFile(plan, task, *fs));
  FileRows out;
  out.file_row = file_row;
  if (batches.empty()) {
    ARROW_ASSIGN_OR_RAISE(out.rows, arrow::RecordBatch::MakeEmpty(schema_));
  } else if (batches.size() == 1) {
    out.rows = batches[0];
  } else {
    ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, batches));
    ARROW_ASSIGN_OR_RAISE(out.rows, table->CombineChunksToBatch());
  }
  out.physical_rows = out.rows->num_rows();
  out.positions.resize(out.physical_rows);
  std::iota(out.positions.begin(), out.positions.end(), uint64_t{0});
  if (remove.deletion_vector) {
    auto deleted = ReadDeletedRowIndexes(*remove.deletion_vector, snapshot.table_root(), *fs);
    if (!deleted.ok()) return FileError(file_row, deleted.status());
    if (!deleted->empty() && deleted->back() >= static_cast<uint64_t>(out.physical_rows)) {
      return FileError(file_row, DeltaError(DeltaErrorCode::kCorruptLog,
                                            fmt::format("its deletion vector deletes row {} of "
                                                        "a file of {} rows",
                                                        deleted->back(), out.physical_rows)));
    }
    std::vector<bool> keep(out.physical_rows, true);
    for (uint64_t d : *deleted) keep[d] = false;
    ARROW_ASSIGN_OR_RAISE(out.rows, SelectRows(out.rows, keep));
    std::vector<uint64_t> live;
    live.reserve(out.rows->num_rows());
    for (uint64_t p : out.positions) {
      if (keep[p]) live.push_back(p);
    }
    out.positions = std::move(live);
  }
  return out;
}

arrow::Status RowRewriter::RemoveFile(FileRef file_row) {
  auto remove = RemoveForLiveFile(options_.snapshot->live_files(), file_row, WallClockMillis());
  ++outcome_.removed_files;
  outcome_.removed_bytes += remove.size.value_or(0);
  if (remove.deletion_vector) ++outcome_.deletion_vectors_removed;
  outcome_.touched_files.push_back(remove.path);
  outcome_.removes.push_back(std::move(remove));
  return arrow::Status::OK();
}

void RowRewriter::RequestDeletionVector(const FileRows& file, std::vector<uint64_t> positions) {
  DeletionVectorRequest request;
  request.path = LogPath(file.file_row);
  request.existing =
      RemoveForLiveFile(options_.snapshot->live_files(), file.file_row, 0).deletion_vector;
  request.num_records = file.physical_rows;
  request.rows = std::move(positions);
  dv_requests_.push_back(std::move(request));
  dv_request_rows_.push_back(file.file_row);
  outcome_.touched_files.push_back(LogPath(file.file_row));
}

arrow::Status RowRewriter::WriteChange(const std::shared_ptr<arrow::RecordBatch>& rows,
                                       const char* type) {
  if (!options_.to_output) return change_data_->Write(rows, type);
  ARROW_ASSIGN_OR_RAISE(auto out, options_.to_output(rows));
  return change_data_->Write(out, type);
}

arrow::Status RowRewriter::WriteRows(const std::shared_ptr<arrow::RecordBatch>& rows) {
  if (rows->num_rows() == 0) return arrow::Status::OK();
  outcome_.rows_moved = true;
  if (!options_.to_output) return data_writer_->Write(rows);
  ARROW_ASSIGN_OR_RAISE(auto out, options_.to_output(rows));
  return data_writer_->Write(out);
}

arrow::Status RowRewriter::StartChangeData() {
  if (!options_.change_data_feed || change_data_started_) return arrow::Status::OK();
  change_data_started_ = true;
  ARROW_ASSIGN_OR_RAISE(change_data_, ChangeDataWriter::Make(options_.data_options));
  auto pending = std::move(pending_deletes_);
  pending_deletes_.clear();
  for (const auto& [file_row, positions] : pending) {
    ARROW_RETURN_NOT_OK(WriteDeletedAsChangeData(file_row, positions));
  }
  return arrow::Status::OK();
}

arrow::Status RowRewriter::WriteDeletedAsChangeData(
    FileRef file_row, const std::optional<std::vector<uint64_t>>& positions) {
  if (!options_.change_data_feed) return arrow::Status::OK();
  if (!change_data_started_) {
    pending_deletes_.emplace_back(file_row, positions);
    return arrow::Status::OK();
  }
  ARROW_ASSIGN_OR_RAISE(auto file, Read(file_row));
  auto rows = file.rows;
  if (positions) {
    ARROW_ASSIGN_OR_RAISE(rows, RowsAtPositions(rows, file.positions, *positions));
  }
  auto st = WriteChange(rows, "delete");
  return st.ok() ? st : FileError(file_row, st);
}

arrow::Status RowRewriter::RemoveWholeFile(FileRef file_row) {
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  if (!seen_rows_.insert(file_row).second) {
    return FileError(file_row, arrow::Status::Invalid("the file is changed twice"));
  }
  // Live rows from the stats when they are there (the metric only; nothing depends on it).
  const auto remove = RemoveForLiveFile(options_.snapshot->live_files(), file_row, 0);
  if (remove.stats) {
    rapidjson::Document doc;
    doc.Parse(remove.stats->data(), remove.stats->size());
    if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("numRecords") &&
        doc["numRecords"].IsInt64()) {
      outcome_.deleted_rows += doc["numRecords"].GetInt64() -
                               (remove.deletion_vector ? remove.deletion_vector->cardinality : 0);
    }
  }
  ARROW_RETURN_NOT_OK(RemoveFile(file_row));
  return WriteDeletedAsChangeData(file_row, std::nullopt);
}

arrow::Status RowRewriter::Delete(const FileRows& file, const arrow::BooleanArray& drop) {
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  auto masked = SelectedRows(file, drop, "delete");
  if (!masked.ok()) return FileError(file.file_row, masked.status());
  const std::vector<bool>& dropped = masked->selected;
  std::vector<uint64_t>& positions = masked->positions;
  if (positions.empty()) return arrow::Status::OK();
  if (!seen_rows_.insert(file.file_row).second) {
    return FileError(file.file_row, arrow::Status::Invalid("the file is changed twice"));
  }
  const auto n = static_cast<int64_t>(positions.size());
  outcome_.deleted_rows += n;
  if (n == file.rows->num_rows()) {
    ARROW_RETURN_NOT_OK(RemoveFile(file.file_row));
    // As delta-spark: a copy-on-write delete describes the rows it read and deleted in change
    // data, also when they were all the file's rows.
    if (options_.mode == RewriteMode::kCopyOnWrite) {
      auto st = StartChangeData();
      if (!st.ok()) return FileError(file.file_row, st);
    }
    if (change_data_started_) {
      auto st = WriteChange(file.rows, "delete");
      return st.ok() ? st : FileError(file.file_row, st);
    }
    return WriteDeletedAsChangeData(file.file_row, std::nullopt);
  }
  if (options_.mode == RewriteMode::kDeletionVectors) {
    RequestDeletionVector(file, positions);
    if (change_data_started_) {
      ARROW_ASSIGN_OR_RAISE(auto gone, SelectRows(file.rows, dropped));
      auto st = WriteChange(gone, "delete");
      return st.ok() ? st : FileError(file.file_row, st);
    }
    return WriteDeletedAsChangeData(file.file_row, std::move(positions));
  }
  // Copy-on-write: the other rows move to a new file, and readers can no longer tell the
  // deleted rows from the actions.
  ARROW_RETURN_NOT_OK(RemoveFile(file.file_row));
  std::vector<bool> keep(dropped.size());
  for (size_t i = 0; i < dropped.size(); ++i) keep[i] = !dropped[i];
  ARROW_ASSIGN_OR_RAISE(auto kept, SelectRows(file.rows, keep));
  outcome_.copied_rows += kept->num_rows();
  auto st = WriteRows(kept);
  if (st.ok()) st = StartChangeData();
  if (st.ok() && change_data_started_) {
    ARROW_ASSIGN_OR_RAISE(auto gone, SelectRows(file.rows, dropped));
    st = WriteChange(gone, "delete");
  }
  return st.ok() ? st : FileError(file.file_row, st);
}

arrow::Status RowRewriter::Update(const FileRows& file, const arrow::BooleanArray& replace,
                                  const std::shared_ptr<arrow::RecordBatch>& new_rows) {
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  auto masked = SelectedRows(file, replace, "update");
  if (!masked.ok()) return FileError(file.file_row, masked.status());
  const std::vector<bool>& replaced = masked->selected;
  std::vector<uint64_t>& positions = masked->positions;
  const auto n = static_cast<int64_t>(positions.size());
  if (n != new_rows->num_rows()) {
    return FileError(file.file_row, arrow::Status::Invalid(n, " rows are replaced by ",
                                                           new_rows->num_rows(), " new rows"));
  }
  if (n == 0) return arrow::Status::OK();
  if (!seen_rows_.insert(file.file_row).second) {
    return FileError(file.file_row, arrow::Status::Invalid("the file is changed twice"));
  }
  outcome_.updated_rows += n;
  ARROW_ASSIGN_OR_RAISE(auto old_rows, SelectRows(file.rows, replaced));
  auto st = WriteRows(new_rows);
  if (st.ok()) st = StartChangeData();
  if (st.ok() && change_data_started_) st = WriteChange(old_rows, "update_preimage");
  if (st.ok() && change_data_started_) st = WriteChange(new_rows, "update_postimage");
  if (!st.ok()) return FileError(file.file_row, st);
  if (n == file.rows->num_rows()) return RemoveFile(file.file_row);
  if (options_.mode == RewriteMode::kDeletionVectors) {
    RequestDeletionVector(file, std::move(positions));
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(RemoveFile(file.file_row));
  std::vector<bool> keep(replaced.size());
  for (size_t i = 0; i < replaced.size(); ++i) keep[i] = !replaced[i];
  ARROW_ASSIGN_OR_RAISE(auto kept, SelectRows(file.rows, keep));
  outcome_.copied_rows += kept->num_rows();
  st = WriteRows(kept);
  return st.ok() ? st : FileError(file.file_row, st);
}

arrow::Status RowRewriter::MakeLanes(int count) {
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  while (num_lanes() < count) {
    ARROW_ASSIGN_OR_RAISE(auto lane, Make(options_));
    lanes_.push_back(std::move(lane));
  }
  return arrow::Status::OK();
}

arrow::Result<RewriteOutcome> RowRewriter::Finish() {
  if (lanes_.empty()) return FinishLane();
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  // A commit with cdc files must hold all of its changes there: once one lane has them, the
  // deletes the other lanes left to the actions go there too.
  bool change_data = change_data_started_;
  for (const auto& l : lanes_) change_data |= l->change_data_started_;
  if (change_data) {
    ARROW_RETURN_NOT_OK(StartChangeData());
    for (auto& l : lanes_) ARROW_RETURN_NOT_OK(l->StartChangeData());
  }
  ARROW_ASSIGN_OR_RAISE(RewriteOutcome out, FinishLane());
  // New data files first, then the files re-added with a deletion vector, as one lane has them.
  std::vector<AddFile> readded(std::make_move_iterator(out.adds.begin() + out.added_files),
                               std::make_move_iterator(out.adds.end()));
  out.adds.resize(out.added_files);
  for (auto& l : lanes_) {
    ARROW_ASSIGN_OR_RAISE(RewriteOutcome o, l->FinishLane());
    auto move_all = [](auto& from, auto& to) {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
    };
    for (int64_t i = 0; i < static_cast<int64_t>(o.adds.size()); ++i) {
      (i < o.added_files ? out.adds : readded).push_back(std::move(o.adds[i]));
    }
    move_all(o.removes, out.removes);
    move_all(o.change_files, out.change_files);
    move_all(o.touched_files, out.touched_files);
    out.deleted_rows += o.deleted_rows;
    out.updated_rows += o.updated_rows;
    out.copied_rows += o.copied_rows;
    out.removed_files += o.removed_files;
    out.removed_bytes += o.removed_bytes;
    out.added_files += o.added_files;
    out.added_bytes += o.added_bytes;
    out.deletion_vectors_added += o.deletion_vectors_added;
    out.deletion_vectors_updated += o.deletion_vectors_updated;
    out.deletion_vectors_removed += o.deletion_vectors_removed;
    out.rows_moved |= o.rows_moved;
  }
  for (auto& a : readded) out.adds.push_back(std::move(a));
  return out;
}

arrow::Result<RewriteOutcome> RowRewriter::FinishLane() {
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  finished_ = true;
  const LiveFiles& live = options_.snapshot->live_files();
  if (!dv_requests_.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto updates, dv_writer_->Write(dv_requests_));
    std::vector<AddFile> readded;
    for (size_t i = 0; i < updates.size(); ++i) {
      const FileRef file = dv_request_rows_[i];
      const int64_t row = file.row;
      const auto& files = live.actions(file);
      const auto& mtimes =
          static_cast<const arrow::Int64Array&>(*files.column(kModificationTimeCol));
      const auto& providers =
          static_cast<const arrow::StringArray&>(*files.column(kClusteringProviderCol));
      const auto& update = updates[i];
      if (update.outcome == DeletionVectorOutcome::kUnchanged) continue;
      if (update.outcome == DeletionVectorOutcome::kRemoveFile) {
        ARROW_RETURN_NOT_OK(RemoveFile(file));
        outcome_.touched_files.pop_back();  // already listed
        continue;
      }
      auto remove = RemoveForLiveFile(files, row, WallClockMillis());
      AddFile add;
      add.path = remove.path;
      add.partition_values = remove.partition_values;
      add.size = remove.size.value_or(0);
      add.modification_time = mtimes.IsValid(row) ? mtimes.Value(row) : 0;
      add.data_change = true;
      add.stats = StatsWithLooseBounds(remove.stats, dv_requests_[i].num_records);
      add.tags = remove.tags;
      add.deletion_vector = update.descriptor;
      add.base_row_id = remove.base_row_id;
      add.default_row_commit_version = remove.default_row_commit_version;
      if (providers.IsValid(row)) add.clustering_provider = std::string(providers.GetView(row));
      ++outcome_.deletion_vectors_added;
      if (remove.deletion_vector) {
        ++outcome_.deletion_vectors_updated;
        ++outcome_.deletion_vectors_removed;
      }
      outcome_.removes.push_back(std::move(remove));
      readded.push_back(std::move(add));
    }
    ARROW_ASSIGN_OR_RAISE(outcome_.adds, data_writer_->Finish());
    for (const auto& a : outcome_.adds) outcome_.added_bytes += a.size;
    outcome_.added_files = static_cast<int64_t>(outcome_.adds.size());
    for (auto& a : readded) outcome_.adds.push_back(std::move(a));
  } else {
    ARROW_ASSIGN_OR_RAISE(outcome_.adds, data_writer_->Finish());
    for (const auto& a : outcome_.adds) outcome_.added_bytes += a.size;
    outcome_.added_files = static_cast<int64_t>(outcome_.adds.size());
  }
  if (change_data_ && change_data_->written()) {
    ARROW_ASSIGN_OR_RAISE(outcome_.change_files, change_data_->Finish());
  }
  return std::move(outcome_);
}

arrow::Status RowRewriter::Abort() {
  arrow::Status first = data_writer_->Abort();
  for (auto& l : lanes_) {
    auto st = l->Abort();
    if (first.ok()) first = st;
  }
  if (change_data_) {
    auto st = change_data_->Abort();
    if (first.ok()) first = st;
  }
  if (dv_writer_) {
    auto st = dv_writer_->Abort();
    if (first.ok()) first = st;
  }
  return first;
}

}  // namespace deltacpp::internal
