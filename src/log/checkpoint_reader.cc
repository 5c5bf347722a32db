#include "log/checkpoint_reader.h"

#include <arrow/compute/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/thread_pool.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <limits>
#include <mutex>

#include "deltacpp/error.h"
#include "log/file_action_schema.h"
#include "log/json_int_field.h"
#include "log/stats_struct_json.h"
#include "protocol/path_encoding.h"
#include "storage/regular_file.h"
#include "util/thread_pools.h"

namespace deltacpp::internal {

namespace {

// Leaf column indices of a top-level field, skipping children named in `skip` (the large
// stats_parsed / partitionValues_parsed structs are not needed for replay).
void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>* out,
                   const std::vector<std::string>& skip, int depth) {
  if (field.column_index >= 0) {
    out->push_back(field.column_index);
    return;
  }
  for (const auto& child : field.children) {
    if (depth == 0) {
      bool skipped = false;
      for (const auto& s : skip) skipped |= child.field->name() == s;
      if (skipped) continue;
    }
    CollectLeaves(child, out, skip, depth + 1);
  }
}

std::shared_ptr<arrow::Array> Child(const arrow::StructArray& s, const std::string& name) {
  return s.GetFieldByName(name);
}

std::optional<std::string> StrAt(const std::shared_ptr<arrow::Array>& a, int64_t i) {
  if (!a || a->IsNull(i)) return std::nullopt;
  if (a->type_id() == arrow::Type::STRING) {
    return std::string(static_cast<const arrow::StringArray&>(*a).GetView(i));
  }
  if (a->type_id() == arrow::Type::LARGE_STRING) {
    return std::string(static_cast<const arrow::LargeStringArray&>(*a).GetView(i));
  }
  return std::nullopt;
}

// The integer of `field` (`<action>.<name>`, for messages) at row i: nullopt when the column is
// absent or the value null. A column of a non-integer type, or a value outside `range`, is
// CorruptLog: it is never rounded, narrowed or taken as absent.
arrow::Result<std::optional<int64_t>> IntAt(const std::shared_ptr<arrow::Array>& a, int64_t i,
                                            IntFieldRange range, const std::string& where,
                                            std::string_view field) {
  if (!a || a->IsNull(i)) return std::nullopt;
  int64_t value = 0;
  switch (a->type_id()) {
    case arrow::Type::INT8:
      value = static_cast<const arrow::Int8Array&>(*a).Value(i);
      break;
    case arrow::Type::INT16:
      value = static_cast<const arrow::Int16Array&>(*a).Value(i);
      break;
    case arrow::Type::INT32:
      value = static_cast<const arrow::Int32Array&>(*a).Value(i);
      break;
    case arrow::Type::INT64:
      value = static_cast<const arrow::Int64Array&>(*a).Value(i);
      break;
    case arrow::Type::UINT8:
      value = static_cast<const arrow::UInt8Array&>(*a).Value(i);
      break;
    case arrow::Type::UINT16:
      value = static_cast<const arrow::UInt16Array&>(*a).Value(i);
      break;
    case arrow::Type::UINT32:
      value = static_cast<const arrow::UInt32Array&>(*a).Value(i);
      break;
    case arrow::Type::UINT64: {
      const uint64_t u = static_cast<const arrow::UInt64Array&>(*a).Value(i);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("{}: {} is {}, not {}", where, field, u, range.what));
      }
      value = static_cast<int64_t>(u);
      break;
    }
    default:
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("{}: column {} has type {}, not an integer type", where,
                                    field, a->type()->ToString()));
  }
  if (value < range.min || value > range.max) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("{}: {} is {}, not {}", where, field, value, range.what));
  }
  return value;
}

// The chunk of a top-level action column as a struct array; another type is CorruptLog.
arrow::Result<const arrow::StructArray*> ActionStruct(const std::shared_ptr<arrow::Array>& chunk,
                                                      const std::string& where,
                                                      std::string_view action) {
  if (chunk->type_id() != arrow::Type::STRUCT) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("{}: column {} has type {}, not a struct", where, action,
                                  chunk->type()->ToString()));
  }
  return static_cast<const arrow::StructArray*>(chunk.get());
}

std::optional<bool> BoolAt(const std::shared_ptr<arrow::Array>& a, int64_t i) {
  if (!a || a->IsNull(i) || a->type_id() != arrow::Type::BOOL) return std::nullopt;
  return static_cast<const arrow::BooleanArray&>(*a).Value(i);
}

std::optional<std::vector<std::string>> ListAt(const std::shared_ptr<arrow::Array>& a, int64_t i) {
  if (!a || a->IsNull(i) || a->type_id() != arrow::Type::LIST) return std::nullopt;
  const auto& list = static_cast<const arrow::ListArray&>(*a);
  auto values = list.values();
  std::vector<std::string> out;
  for (int64_t j = list.value_offset(i); j < list.value_offset(i + 1); ++j) {
    if (auto s = StrAt(values, j)) out.push_back(*s);
  }
  return out;
}

std::map<std::string, std::string> MapAt(const std::shared_ptr<arrow::Array>& a, int64_t i) {
  std::map<std::string, std::string> out;
  if (!a || a->IsNull(i) || a->type_id() != arrow::Type::MAP) return out;
  const auto& map = static_cast<const arrow::MapArray&>(*a);
  auto keys = map.keys();
  auto items = map.items();
  for (int64_t j = map.value_offset(i); j < map.value_offset(i + 1); ++j) {
    auto k = StrAt(keys, j);
    auto v = StrAt(items, j);
    if (k && v) out.emplace(*k, *v);
  }
  return out;
}

// Extracts the non-file actions of a checkpoint table into `out`.
arrow::Status ExtractNonFileActions(const arrow::Table& table, const std::string& where,
                                    ParsedActions* out) {
  auto column = [&](const char* name) -> std::shared_ptr<arrow::ChunkedArray> {
    return table.GetColumnByName(name);
  };
  if (auto col = column("protocol")) {
    for (const auto& chunk : col->chunks()) {
      ARROW_ASSIGN_OR_RAISE(auto sp, ActionStruct(chunk, where, "protocol"));
      const auto& s = *sp;
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i)) continue;
        ARROW_ASSIGN_OR_RAISE(auto r, IntAt(Child(s, "minReaderVersion"), i, kPositiveIntField,
                                            where, "protocol.minReaderVersion"));
        ARROW_ASSIGN_OR_RAISE(auto w, IntAt(Child(s, "minWriterVersion"), i, kPositiveIntField,
                                            where, "protocol.minWriterVersion"));
        if (!r || !w) {
          return DeltaError(DeltaErrorCode::kCorruptLog,
                            where + ": protocol without minReaderVersion/minWriterVersion");
        }
        Protocol p;
        p.min_reader_version = static_cast<int32_t>(*r);
        p.min_writer_version = static_cast<int32_t>(*w);
        p.reader_features = ListAt(Child(s, "readerFeatures"), i);
        p.writer_features = ListAt(Child(s, "writerFeatures"), i);
        out->protocol = std::move(p);
      }
    }
  }
  if (auto col = column("metaData")) {
    for (const auto& chunk : col->chunks()) {
      ARROW_ASSIGN_OR_RAISE(auto sp, ActionStruct(chunk, where, "metaData"));
      const auto& s = *sp;
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i)) continue;
        Metadata m;
        auto schema = StrAt(Child(s, "schemaString"), i);
        if (!schema) {
          return DeltaError(DeltaErrorCode::kCorruptLog, where + ": metaData without schemaString");
        }
        m.schema_string = *schema;
        m.id = StrAt(Child(s, "id"), i).value_or("");
        m.name = StrAt(Child(s, "name"), i);
        m.description = StrAt(Child(s, "description"), i);
        if (auto f = Child(s, "format"); f && f->type_id() == arrow::Type::STRUCT) {
          const auto& fs = static_cast<const arrow::StructArray&>(*f);
          m.format_provider = StrAt(Child(fs, "provider"), i).value_or("parquet");
          m.format_options = MapAt(Child(fs, "options"), i);
        }
        m.partition_columns = ListAt(Child(s, "partitionColumns"), i).value_or(
            std::vector<std::string>{});
        m.configuration = MapAt(Child(s, "configuration"), i);
        ARROW_ASSIGN_OR_RAISE(m.created_time, IntAt(Child(s, "createdTime"), i, kLongField,
                                                     where, "metaData.createdTime"));
        out->metadata = std::move(m);
      }
    }
  }
  if (auto col = column("txn")) {
    for (const auto& chunk : col->chunks()) {
      ARROW_ASSIGN_OR_RAISE(auto sp, ActionStruct(chunk, where, "txn"));
      const auto& s = *sp;
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i)) continue;
        auto app = StrAt(Child(s, "appId"), i);
        ARROW_ASSIGN_OR_RAISE(auto ver,
                              IntAt(Child(s, "version"), i, kLongField, where, "txn.version"));
        ARROW_ASSIGN_OR_RAISE(auto last_updated, IntAt(Child(s, "lastUpdated"), i, kLongField,
                                                       where, "txn.lastUpdated"));
        if (!app || !ver) {
          return DeltaError(DeltaErrorCode::kCorruptLog,
                            where + ": txn action without appId/version");
        }
        out->txns.push_back(Txn{*app, *ver, last_updated});
      }
    }
  }
  if (auto col = column("domainMetadata")) {
    for (const auto& chunk : col->chunks()) {
      ARROW_ASSIGN_OR_RAISE(auto sp, ActionStruct(chunk, where, "domainMetadata"));
      const auto& s = *sp;
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i)) continue;
        auto domain = StrAt(Child(s, "domain"), i);
        if (!domain) continue;
        out->domains.push_back(DomainMetadata{*domain,
                                              StrAt(Child(s, "configuration"), i).value_or(""),
                                              BoolAt(Child(s, "removed"), i).value_or(false)});
      }
    }
  }
  if (auto col = column("sidecar")) {
    for (const auto& chunk : col->chunks()) {
      ARROW_ASSIGN_OR_RAISE(auto sp, ActionStruct(chunk, where, "sidecar"));
      const auto& s = *sp;
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i)) continue;
        Sidecar sc;
        sc.path = StrAt(Child(s, "path"), i).value_or("");
        ARROW_ASSIGN_OR_RAISE(auto size, IntAt(Child(s, "sizeInBytes"), i, kNonNegativeLongField,
                                               where, "sidecar.sizeInBytes"));
        ARROW_ASSIGN_OR_RAISE(auto mtime, IntAt(Child(s, "modificationTime"), i, kLongField,
                                                where, "sidecar.modificationTime"));
        sc.size_in_bytes = size.value_or(0);
        sc.modification_time = mtime.value_or(0);
        sc.tags = MapAt(Child(s, "tags"), i);
        out->sidecars.push_back(std::move(sc));
      }
    }
  }
  if (auto col = column("checkpointMetadata")) {
    for (const auto& chunk : col->chunks()) {
      ARROW_ASSIGN_OR_RAISE(auto sp, ActionStruct(chunk, where, "checkpointMetadata"));
      const auto& s = *sp;
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i)) continue;
        ARROW_ASSIGN_OR_RAISE(auto version, IntAt(Child(s, "version"), i, kNonNegativeLongField,
                                                  where, "checkpointMetadata.version"));
        out->checkpoint_metadata =
            CheckpointMetadata{version.value_or(0), MapAt(Child(s, "tags"), i)};
      }
    }
  }
  return arrow::Status::OK();
}

// The first negative value of an integer column that must not hold one, among the rows of adds.
arrow::Status CheckNonNegative(const arrow::Array& column, const arrow::Array& paths,
                               const std::string& where, std::string_view field) {
  auto check = [&](auto& values) -> arrow::Status {
    for (int64_t i = 0; i < values.length(); ++i) {
      if (values.IsValid(i) && values.Value(i) < 0 && paths.IsValid(i)) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("{}: {} is {}, not a non-negative number (row {})", where,
                                      field, values.Value(i), i));
      }
    }
    return arrow::Status::OK();
  };
  if (column.type_id() == arrow::Type::INT64) {
    return check(static_cast<const arrow::Int64Array&>(column));
  }
  return check(static_cast<const arrow::Int32Array&>(column));
}

// Sizes, counts and offsets of checkpoint adds are never negative.
arrow::Status CheckAddRanges(const arrow::RecordBatch& batch, const std::string& where) {
  const auto& paths = *batch.column(kPathCol);
  ARROW_RETURN_NOT_OK(CheckNonNegative(*batch.column(kSizeCol), paths, where, "add.size"));
  ARROW_RETURN_NOT_OK(
      CheckNonNegative(*batch.column(kBaseRowIdCol), paths, where, "add.baseRowId"));
  ARROW_RETURN_NOT_OK(CheckNonNegative(*batch.column(kDefaultRowCommitVersionCol), paths, where,
                                       "add.defaultRowCommitVersion"));
  const auto& dv = static_cast<const arrow::StructArray&>(*batch.column(kDeletionVectorCol));
  if (dv.null_count() == dv.length()) return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(CheckNonNegative(*dv.field(kDvOffset), paths, where,
                                       "add.deletionVector.offset"));
  ARROW_RETURN_NOT_OK(CheckNonNegative(*dv.field(kDvSizeInBytes), paths, where,
                                       "add.deletionVector.sizeInBytes"));
  return CheckNonNegative(*dv.field(kDvCardinality), paths, where,
                          "add.deletionVector.cardinality");
}

// The `add` column normalised. Rows holding another action keep a null path; replay skips them,
// which saves copying the (large) add column just to drop them.
arrow::Status ExtractAdds(const arrow::ChunkedArray& column, const std::string& where,
                          std::vector<std::shared_ptr<arrow::RecordBatch>>* out) {
  for (const auto& chunk : column.chunks()) {
    if (chunk->null_count() == chunk->length()) continue;
    ARROW_RETURN_NOT_OK(ActionStruct(chunk, where, "add").status());
    auto s = std::static_pointer_cast<arrow::StructArray>(chunk);
    auto normalized = NormalizeCheckpointFileActions(s);
    if (!normalized.ok()) {
      return normalized.status().WithMessage(where, ": ", normalized.status().message());
    }
    auto batch = normalized.MoveValueUnsafe();
    if (auto parsed = s->GetFieldByName("stats_parsed");
        parsed && parsed->type_id() == arrow::Type::STRUCT && !s->GetFieldByName("stats")) {
      ARROW_ASSIGN_OR_RAISE(auto json,
                            StatsStructToJson(static_cast<const arrow::StructArray&>(*parsed)));
      ARROW_ASSIGN_OR_RAISE(batch, batch->SetColumn(kStatsCol, batch->schema()->field(kStatsCol), json));
    }
    if (chunk->null_count() > 0 && batch->column(kPathCol)->null_count() < chunk->null_count()) {
      // Children of a null struct are not guaranteed null: filter explicitly then.
      ARROW_ASSIGN_OR_RAISE(auto valid, arrow::compute::IsValid(chunk));
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(batch, valid));
      batch = filtered.record_batch();
    }
    ARROW_RETURN_NOT_OK(CheckAddRanges(*batch, where));
    if (batch->num_rows() > 0) out->push_back(std::move(batch));
  }
  return arrow::Status::OK();
}

// Reads one Parquet checkpoint or sidecar file, projecting the top-level columns wanted.
arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetColumns(
    arrow::fs::FileSystem& fs, const std::string& path, const std::vector<std::string>& wanted,
    bool use_cpu_pool) {
  ARROW_ASSIGN_OR_RAISE(auto input, OpenRegularFile(fs, path));
  parquet::ArrowReaderProperties props;
  props.set_pre_buffer(true);
  props.set_use_threads(use_cpu_pool);
  parquet::arrow::FileReaderBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Open(input));
  builder.properties(props);
  std::unique_ptr<parquet::arrow::FileReader> reader;
  ARROW_RETURN_NOT_OK(builder.Build(&reader));
  const auto& manifest = reader->manifest();
  std::vector<int> leaves;
  for (const auto& field : manifest.schema_fields) {
    for (const auto& w : wanted) {
      if (field.field->name() != w) continue;
      // Typed stats are only read when the JSON `stats` column is absent (checkpoints
      // written with writeStatsAsStruct only); they are then turned back into JSON.
      bool has_json_stats = false;
      for (const auto& child : field.children) has_json_stats |= child.field->name() == "stats";
      std::vector<std::string> skip = {"partitionValues_parsed"};
      if (has_json_stats || w != "add") skip.push_back("stats_parsed");
      CollectLeaves(field, &leaves, skip, 0);
    }
  }
  if (leaves.empty()) {
    return arrow::Table::MakeEmpty(arrow::schema({}));
  }
  return reader->ReadTable(leaves);
}

const std::vector<std::string> kAllCheckpointColumns = {
    "add", "protocol", "metaData", "txn", "domainMetadata", "sidecar", "checkpointMetadata"};

// `use_cpu_pool`: decode columns on Arrow's CPU pool (not when the read started on it).
arrow::Status ReadOneFile(LogStore& store, const std::string& path, bool is_json,
                          const std::vector<std::string>& columns, const std::string& where,
                          bool use_cpu_pool, CheckpointContent* out, std::mutex* mu) {
  if (is_json) {
    ARROW_ASSIGN_OR_RAISE(auto buf, store.Read(path));
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseActionFile(buf->ToString(), path));
    std::lock_guard<std::mutex> lock(*mu);
    if (parsed.file_actions) {
      // A JSON V2 checkpoint holds only live adds (and tombstones, not needed to read).
      auto is_add = parsed.file_actions->GetColumnByName("_is_add");
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(parsed.file_actions, is_add));
      auto batch = filtered.record_batch();
      std::vector<std::shared_ptr<arrow::Array>> cols(batch->columns().begin(),
                                                      batch->columns().begin() + kNumFileActionColumns);
      out->adds.push_back(arrow::RecordBatch::Make(FileActionSchema(), batch->num_rows(), cols));
    }
    parsed.file_actions.reset();
    auto& a = out->actions;
    if (parsed.protocol) a.protocol = parsed.protocol;
    if (parsed.metadata) a.metadata = parsed.metadata;
    if (parsed.checkpoint_metadata) a.checkpoint_metadata = parsed.checkpoint_metadata;
    a.txns.insert(a.txns.end(), parsed.txns.begin(), parsed.txns.end());
    a.domains.insert(a.domains.end(), parsed.domains.begin(), parsed.domains.end());
    a.sidecars.insert(a.sidecars.end(), parsed.sidecars.begin(), parsed.sidecars.end());
    return arrow::Status::OK();
  }
  std::shared_ptr<arrow::Table> table;
  try {
    auto result = ReadParquetColumns(*store.filesystem(), path, columns, use_cpu_pool);
    if (!result.ok()) {
      if (result.status().IsIOError() && result.status().message().find("No such file") != std::string::npos) {
        return DeltaError(DeltaErrorCode::kMissingFile, where + ": " + result.status().message());
      }
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        where + ": cannot read checkpoint: " + result.status().message());
    }
    table = *result;
  } catch (const parquet::ParquetException& e) {
    return DeltaError(DeltaErrorCode::kCorruptLog, where + ": cannot read checkpoint: " + e.what());
  }
  std::vector<std::shared_ptr<arrow::RecordBatch>> adds;
  if (auto col = table->GetColumnByName("add")) {
    ARROW_RETURN_NOT_OK(ExtractAdds(*col, where, &adds));
  }
  ParsedActions local;
  ARROW_RETURN_NOT_OK(ExtractNonFileActions(*table, where, &local));
  std::lock_guard<std::mutex> lock(*mu);
  out->adds.insert(out->adds.end(), adds.begin(), adds.end());
  auto& a = out->actions;
  if (local.protocol) a.protocol = local.protocol;
  if (local.metadata) a.metadata = local.metadata;
  if (local.checkpoint_metadata) a.checkpoint_metadata = local.checkpoint_metadata;
  a.txns.insert(a.txns.end(), local.txns.begin(), local.txns.end());
  a.domains.insert(a.domains.end(), local.domains.begin(), local.domains.end());
  a.sidecars.insert(a.sidecars.end(), local.sidecars.begin(), local.sidecars.end());
  return arrow::Status::OK();
}


}  // namespace

arrow::Result<CheckpointContent> ReadCheckpoint(LogStore& store, const LogSegment& segment) {
  CheckpointContent content;
  std::mutex mu;
  const bool use_cpu_pool = !InCpuPool();
  const auto& files = segment.checkpoint_files;
  std::vector<arrow::Status> statuses(files.size());
  auto read_part = [&](int i) {
    const auto& f = files[i];
    std::string where = fmt::format("table {}: checkpoint {}", segment.table_root, f.entry.path);
    statuses[i] = ReadOneFile(store, f.entry.path, f.name.is_json, kAllCheckpointColumns, where,
                              use_cpu_pool, &content, &mu);
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(RunFileTasks(static_cast<int>(files.size()), read_part));
  for (auto& st : statuses) ARROW_RETURN_NOT_OK(st);

  // V2 checkpoints may keep their file actions in sidecars.
  const auto sidecars = content.actions.sidecars;
  if (!sidecars.empty()) {
    std::vector<arrow::Status> sc_status(sidecars.size());
    auto read_sidecar = [&](int i) {
      auto resolved =
          ResolveFileInTable(segment.table_root, segment.log_dir + "/_sidecars", sidecars[i].path);
      if (!resolved.ok()) {
        sc_status[i] = resolved.status().WithMessage(
            "table ", segment.table_root, " version ", segment.version, ": sidecar: ",
            resolved.status().message());
        return arrow::Status::OK();
      }
      const std::string& path = *resolved;
      std::string where = fmt::format("table {}: sidecar {}", segment.table_root, path);
      sc_status[i] = ReadOneFile(store, path, false, {"add"}, where, use_cpu_pool, &content, &mu);
      return arrow::Status::OK();
    };
    ARROW_RETURN_NOT_OK(RunFileTasks(static_cast<int>(sidecars.size()), read_sidecar));
    for (auto& st : sc_status) ARROW_RETURN_NOT_OK(st);
  }
  return content;
}

}  // namespace deltacpp::internal
