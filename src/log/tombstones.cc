#include "log/tombstones.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "deltacpp/error.h"
#include "log/commit_parser.h"
#include "log/file_action_schema.h"
#include "protocol/path_encoding.h"
#include "storage/regular_file.h"
#include "util/thread_pools.h"

namespace deltacpp::internal {

namespace {

constexpr int kIsAddCol = kNumFileActionColumns;
constexpr int kDeletionTimestampCol = kNumFileActionColumns + 1;

// Keeps the rows of `batch` selected by `keep` (all columns).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> Select(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<bool>& keep) {
  arrow::BooleanBuilder mask;
  ARROW_RETURN_NOT_OK(mask.Reserve(static_cast<int64_t>(keep.size())));
  for (bool k : keep) mask.UnsafeAppend(k);
  ARROW_ASSIGN_OR_RAISE(auto mask_array, mask.Finish());
  ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(batch, mask_array));
  return filtered.record_batch();
}

// Walks the removes of `batch` (ReplayBatchSchema layout) whose key is not in `seen` yet,
// recording every key met, and keeps the unexpired ones. With `adds_first`, the adds of the
// batch are recorded before any remove is looked at (one commit: an add and a remove of the
// same key leave the file live). Rows whose path is null are not actions and are skipped.
arrow::Status CollectTombstones(const std::shared_ptr<arrow::RecordBatch>& batch,
                                std::string_view table_root,
                                int64_t cutoff_ms, std::unordered_set<std::string>* seen,
                                std::vector<std::shared_ptr<arrow::RecordBatch>>* out) {
  if (!batch || batch->num_rows() == 0) return arrow::Status::OK();
  const auto& paths = *batch->column(kPathCol);
  const auto& is_add = static_cast<const arrow::BooleanArray&>(*batch->column(kIsAddCol));
  const auto& deleted_at = static_cast<const arrow::Int64Array&>(*batch->column(kDeletionTimestampCol));
  const int64_t n = batch->num_rows();
  for (int64_t i = 0; i < n; ++i) {
    if (paths.IsValid(i) && is_add.IsValid(i) && is_add.Value(i)) {
      seen->insert(FileActionKey(*batch, i, table_root));
    }
  }
  std::vector<bool> keep(static_cast<size_t>(n), false);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (paths.IsNull(i) || (is_add.IsValid(i) && is_add.Value(i))) continue;
    if (!seen->insert(FileActionKey(*batch, i, table_root)).second) continue;
    const int64_t ts = deleted_at.IsValid(i) ? deleted_at.Value(i) : 0;
    if (ts > cutoff_ms) {
      keep[static_cast<size_t>(i)] = true;
      ++kept;
    }
  }
  if (kept == 0) return arrow::Status::OK();
  if (kept == n) {
    out->push_back(batch);
    return arrow::Status::OK();
  }
  ARROW_ASSIGN_OR_RAISE(auto selected, Select(batch, keep));
  out->push_back(std::move(selected));
  return arrow::Status::OK();
}

// Top-level columns `names` of a Parquet checkpoint or sidecar file; absent ones are nullptr.
arrow::Result<std::vector<std::shared_ptr<arrow::ChunkedArray>>> ReadTopLevelColumns(
    arrow::fs::FileSystem& fs, const std::string& path, const std::vector<std::string>& names) {
  ARROW_ASSIGN_OR_RAISE(auto input, OpenRegularFile(fs, path));
  parquet::arrow::FileReaderBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Open(input));
  parquet::ArrowReaderProperties props;
  props.set_pre_buffer(true);
  builder.properties(props);
  std::unique_ptr<parquet::arrow::FileReader> reader;
  ARROW_RETURN_NOT_OK(builder.Build(&reader));
  const auto& fields = reader->manifest().schema_fields;
  std::vector<std::shared_ptr<arrow::ChunkedArray>> out(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].field->name() != names[n]) continue;
      ARROW_RETURN_NOT_OK(reader->ReadColumn(static_cast<int>(i), &out[n]));
      break;
    }
  }
  return out;
}

// A checkpoint `remove` column chunk in ReplayBatchSchema layout; rows holding another action
// get a null path.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> RemoveChunkToBatch(
    const std::shared_ptr<arrow::Array>& chunk) {
  if (chunk->type_id() != arrow::Type::STRUCT) {
    return arrow::Status::Invalid("the remove column is not a struct but ",
                                  chunk->type()->ToString());
  }
  auto removes = std::static_pointer_cast<arrow::StructArray>(chunk);
  ARROW_ASSIGN_OR_RAISE(auto files, NormalizeCheckpointFileActions(removes, "remove"));
  std::vector<std::shared_ptr<arrow::Array>> columns = files->columns();
  if (removes->null_count() > 0) {
    // A null struct row may still have a path in its children: null it out from the struct's
    // own validity so such rows are skipped.
    ARROW_ASSIGN_OR_RAISE(auto valid, arrow::compute::IsValid(removes));
    ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(arrow::utf8(), removes->length()));
    ARROW_ASSIGN_OR_RAISE(auto path, arrow::compute::IfElse(valid, columns[kPathCol], nulls));
    columns[kPathCol] = path.make_array();
  }
  ARROW_ASSIGN_OR_RAISE(auto is_add, arrow::MakeArrayFromScalar(arrow::BooleanScalar(false),
                                                                removes->length()));
  columns.push_back(is_add);
  std::shared_ptr<arrow::Array> ts = removes->GetFieldByName("deletionTimestamp");
  if (!ts) {
    ARROW_ASSIGN_OR_RAISE(ts, arrow::MakeArrayOfNull(arrow::int64(), removes->length()));
  } else if (ts->type_id() != arrow::Type::INT64) {
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*ts, arrow::int64()));
    ts = cast;
  }
  columns.push_back(ts);
  return arrow::RecordBatch::Make(ReplayBatchSchema(), removes->length(), std::move(columns));
}

// Removes found in one checkpoint file (and, for V2 checkpoints, the sidecar paths it lists).
struct CheckpointRemoves {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::vector<std::string> sidecars;
};

arrow::Status ReadCheckpointRemoves(LogStore& store, const std::string& path, bool is_json,
                                    bool with_sidecars, const std::string& where,
                                    CheckpointRemoves* out) {
  if (is_json) {
    ARROW_ASSIGN_OR_RAISE(auto buffer, store.Read(path));
    ARROW_ASSIGN_OR_RAISE(auto parsed,
                          ParseActionFile(std::string_view(buffer->data_as<char>(),
                                                           static_cast<size_t>(buffer->size())),
                                          where));
    if (parsed.file_actions) out->batches.push_back(parsed.file_actions);
    if (with_sidecars) {
      for (const auto& s : parsed.sidecars) out->sidecars.push_back(s.path);
    }
    return arrow::Status::OK();
  }
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  try {
    auto result = ReadTopLevelColumns(*store.filesystem(), path,
                                      with_sidecars ? std::vector<std::string>{"remove", "sidecar"}
                                                    : std::vector<std::string>{"remove"});
    if (!result.ok()) {
      if (result.status().IsIOError() &&
          result.status().message().find("No such file") != std::string::npos) {
        return DeltaError(DeltaErrorCode::kMissingFile, where + ": " + result.status().message());
      }
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        where + ": cannot read checkpoint: " + result.status().message());
    }
    columns = std::move(*result);
  } catch (const parquet::ParquetException& e) {
    return DeltaError(DeltaErrorCode::kCorruptLog, where + ": cannot read checkpoint: " + e.what());
  }
  if (columns[0]) {
    for (const auto& chunk : columns[0]->chunks()) {
      if (chunk->length() == 0 || chunk->null_count() == chunk->length()) continue;
      auto batch = RemoveChunkToBatch(chunk);
      if (!batch.ok()) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          where + ": unreadable remove column: " + batch.status().message());
      }
      out->batches.push_back(std::move(*batch));
    }
  }
  if (with_sidecars && columns.size() > 1 && columns[1]) {
    for (const auto& chunk : columns[1]->chunks()) {
      if (chunk->type_id() != arrow::Type::STRUCT) continue;
      const auto& s = static_cast<const arrow::StructArray&>(*chunk);
      auto paths = s.GetFieldByName("path");
      if (!paths || paths->type_id() != arrow::Type::STRING) continue;
      const auto& p = static_cast<const arrow::StringArray&>(*paths);
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsValid(i) && p.IsValid(i)) out->sidecars.emplace_back(p.GetView(i));
      }
    }
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> LoadTombstones(LogStore& store,
                                                                   const LogSegment& segment,
                                                                   int64_t retention_cutoff_ms) {
  const std::string& root = segment.table_root;
  const auto& commits = segment.commits;
  std::vector<std::shared_ptr<arrow::RecordBatch>> commit_files(commits.size());
  std::vector<arrow::Status> statuses(commits.size());
  auto parse_one = [&](int i) {
    const std::string& path = commits[i].entry.path;
    auto buffer = store.Read(path);
    if (!buffer.ok()) {
      statuses[i] = DeltaError(DeltaErrorCode::kCorruptLog,
                               fmt::format("table {}: cannot read commit {}: {}", root, path,
                                           buffer.status().message()));
      return arrow::Status::OK();
    }
    auto parsed = ParseActionFile(
        std::string_view((*buffer)->data_as<char>(), static_cast<size_t>((*buffer)->size())),
        fmt::format("table {}: commit {}", root, path));
    if (parsed.ok()) {
      commit_files[i] = std::move(parsed->file_actions);
    } else {
      statuses[i] = parsed.status();
    }
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(CpuParallelFor(
      commits.size() > 4, static_cast<int>(commits.size()), parse_one));
  for (const auto& st : statuses) ARROW_RETURN_NOT_OK(st);

  std::unordered_set<std::string> seen;
  std::vector<std::shared_ptr<arrow::RecordBatch>> kept;
  for (auto it = commit_files.rbegin(); it != commit_files.rend(); ++it) {
    ARROW_RETURN_NOT_OK(CollectTombstones(*it, root, retention_cutoff_ms, &seen, &kept));
    it->reset();
  }

  if (segment.checkpoint_version) {
    CheckpointRemoves removes;
    for (const auto& f : segment.checkpoint_files) {
      std::string where = fmt::format("table {}: checkpoint {}", root, f.entry.path);
      // Only UUID-named checkpoints follow the V2 spec with sidecars, but a classic-named one
      // may too; listing sidecars costs nothing when the column is absent.
      ARROW_RETURN_NOT_OK(
          ReadCheckpointRemoves(store, f.entry.path, f.name.is_json, true, where, &removes));
    }
    std::vector<std::string> sidecars = std::move(removes.sidecars);
    removes.sidecars.clear();
    for (const auto& raw : sidecars) {
      auto resolved = ResolveFileInTable(root, segment.log_dir + "/_sidecars", raw);
      if (!resolved.ok()) {
        return resolved.status().WithMessage("table ", root, " version ", segment.version,
                                             ": sidecar: ", resolved.status().message());
      }
      const std::string& path = *resolved;
      std::string where = fmt::format("table {}: sidecar {}", root, path);
      ARROW_RETURN_NOT_OK(ReadCheckpointRemoves(store, path, false, false, where, &removes));
    }
    for (const auto& batch : removes.batches) {
      // A checkpoint holds each key at most once, so the order among its rows does not matter;
      // its adds are not read (a valid checkpoint never holds a key as both).
      ARROW_RETURN_NOT_OK(CollectTombstones(batch, root, retention_cutoff_ms, &seen, &kept));
    }
  }

  if (kept.empty()) return arrow::RecordBatch::MakeEmpty(ReplayBatchSchema());
  if (kept.size() == 1) return kept[0];
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(ReplayBatchSchema(), kept));
  return table->CombineChunksToBatch();
}

}  // namespace deltacpp::internal
