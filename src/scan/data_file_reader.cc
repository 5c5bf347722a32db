#include "scan/data_file_reader.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/statistics.h>

#include <algorithm>

#include "deltacpp/error.h"
#include "protocol/deletion_vector.h"
#include "scan/column_resolver.h"
#include "storage/regular_file.h"

namespace deltacpp::internal {

namespace {

void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>* out) {
  if (field.column_index >= 0) {
    out->push_back(field.column_index);
    return;
  }
  for (const auto& c : field.children) CollectLeaves(c, out);
}

// Min/max of a primitive column chunk as Arrow scalars of the file's Arrow type.
void AddColumnChunkStats(const parquet::ColumnChunkMetaData& chunk,
                         const std::shared_ptr<arrow::DataType>& arrow_type,
                         const std::shared_ptr<arrow::DataType>& logical_type, ColumnStats* out) {
  auto stats = chunk.statistics();
  if (!stats) return;
  if (stats->HasNullCount()) out->null_count = stats->null_count();
  if (!stats->HasMinMax()) return;
  std::shared_ptr<arrow::Scalar> min, max;
  switch (stats->physical_type()) {
    case parquet::Type::INT32: {
      auto* s = static_cast<parquet::Int32Statistics*>(stats.get());
      auto mn = arrow::MakeScalar(arrow_type, s->min());
      auto mx = arrow::MakeScalar(arrow_type, s->max());
      if (mn.ok() && mx.ok()) { min = *mn; max = *mx; }
      break;
    }
    case parquet::Type::INT64: {
      auto* s = static_cast<parquet::Int64Statistics*>(stats.get());
      auto mn = arrow::MakeScalar(arrow_type, s->min());
      auto mx = arrow::MakeScalar(arrow_type, s->max());
      if (mn.ok() && mx.ok()) { min = *mn; max = *mx; }
      break;
    }
    case parquet::Type::FLOAT: {
      auto* s = static_cast<parquet::FloatStatistics*>(stats.get());
      min = arrow::MakeScalar(s->min());
      max = arrow::MakeScalar(s->max());
      break;
    }
    case parquet::Type::DOUBLE: {
      auto* s = static_cast<parquet::DoubleStatistics*>(stats.get());
      min = arrow::MakeScalar(s->min());
      max = arrow::MakeScalar(s->max());
      break;
    }
    case parquet::Type::BYTE_ARRAY: {
      if (arrow_type->id() != arrow::Type::STRING) return;
      auto* s = static_cast<parquet::ByteArrayStatistics*>(stats.get());
      min = std::make_shared<arrow::StringScalar>(
          std::string(reinterpret_cast<const char*>(s->min().ptr), s->min().len));
      max = std::make_shared<arrow::StringScalar>(
          std::string(reinterpret_cast<const char*>(s->max().ptr), s->max().len));
      break;
    }
    default:
      return;
  }
  if (!min || !max) return;
  if (!min->type->Equals(*logical_type)) {
    auto mn = min->CastTo(logical_type);
    auto mx = max->CastTo(logical_type);
    if (!mn.ok() || !mx.ok()) return;
    min = *mn;
    max = *mx;
  }
  out->min = min;
  out->max = max;
}

// Builds a boolean mask of rows to keep for rows [start, start+len) given sorted deleted rows.
arrow::Result<std::shared_ptr<arrow::Array>> KeepMask(const std::vector<uint64_t>& deleted,
                                                      int64_t start, int64_t len) {
  arrow::BooleanBuilder b;
  ARROW_RETURN_NOT_OK(b.Reserve(len));
  auto it = std::lower_bound(deleted.begin(), deleted.end(), static_cast<uint64_t>(start));
  for (int64_t r = start; r < start + len; ++r) {
    bool del = it != deleted.end() && *it == static_cast<uint64_t>(r);
    if (del) ++it;
    b.UnsafeAppend(!del);
  }
  return b.Finish();
}

// The value of a metadata column for `n` rows starting at physical row `first_row` of the file.
arrow::Result<std::shared_ptr<arrow::Array>> MetadataValues(MetadataColumn column,
                                                            const FileTask& task,
                                                            int64_t first_row, int64_t n) {
  if (column == MetadataColumn::kFilePath) {
    return arrow::MakeArrayFromScalar(arrow::StringScalar(task.uri), n);
  }
  arrow::Int64Builder b;
  ARROW_RETURN_NOT_OK(b.Reserve(n));
  for (int64_t r = 0; r < n; ++r) b.UnsafeAppend(first_row + r);
  return b.Finish();
}

// A missing file is already MissingFile here: OpenRegularFile tells it from other failures.
arrow::Status FileError(const FileReadPlan& plan, const FileTask& task, const arrow::Status& st) {
  std::string msg = fmt::format("table {} version {}: data file {}: {}", plan.table_root,
                                plan.version, task.path, st.message());
  if (auto code = GetDeltaErrorCode(st)) return DeltaError(*code, std::move(msg));
  return arrow::Status(st.code(), std::move(msg));
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ReadImpl(
    const FileReadPlan& plan, const FileTask& task, arrow::fs::FileSystem& fs) {
  std::vector<uint64_t> deleted;
  if (task.deletion_vector) {
    ARROW_ASSIGN_OR_RAISE(deleted, ReadDeletedRowIndexes(*task.deletion_vector, plan.table_root, fs));
  }
  ARROW_ASSIGN_OR_RAISE(auto input, OpenRegularFile(fs, task.path));
  parquet::ArrowReaderProperties props;
  props.set_pre_buffer(true);
  props.set_use_threads(false);  // files are read in parallel instead
  props.set_batch_size(plan.batch_size);
  props.set_coerce_int96_timestamp_unit(arrow::TimeUnit::MICRO);
  parquet::arrow::FileReaderBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Open(input));
  builder.properties(props);
  std::unique_ptr<parquet::arrow::FileReader> reader;
  ARROW_RETURN_NOT_OK(builder.Build(&reader));
  std::shared_ptr<arrow::Schema> file_schema;
  ARROW_RETURN_NOT_OK(reader->GetSchema(&file_schema));
  const auto& manifest = reader->manifest();
  auto metadata = reader->parquet_reader()->metadata();

  // Map each read_schema data column to a top-level file field.
  const auto& fields = plan.read_schema->fields();
  std::vector<MetadataColumn> metadata_of = plan.metadata;  // may be left empty by callers
  metadata_of.resize(fields.size(), MetadataColumn::kNone);
  std::vector<int> file_field(fields.size(), -1);
  std::vector<int> leaves;
  std::vector<int> top_level_read;  // file field indices, in the order read
  for (size_t i = 0; i < fields.size(); ++i) {
    if (plan.is_partition[i] || metadata_of[i] != MetadataColumn::kNone) continue;
    int idx = FindFileField(*file_schema, *fields[i], plan.mode);
    file_field[i] = idx;
    if (idx >= 0 && std::find(top_level_read.begin(), top_level_read.end(), idx) == top_level_read.end()) {
      top_level_read.push_back(idx);
    }
  }
  std::sort(top_level_read.begin(), top_level_read.end());
  for (int idx : top_level_read) CollectLeaves(manifest.schema_fields[idx], &leaves);

  // Row groups whose statistics cannot be ruled out.
  std::vector<int> row_groups;
  std::vector<int64_t> row_group_start;
  int64_t start = 0;
  for (int rg = 0; rg < metadata->num_row_groups(); ++rg) {
    auto rg_meta = metadata->RowGroup(rg);
    int64_t rows = rg_meta->num_rows();
    bool skip = false;
    if (plan.can_skip_row_group) {
      FileStats stats;
      stats.num_records = rows;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (plan.is_partition[i] || file_field[i] < 0) continue;
        const auto& sf = manifest.schema_fields[file_field[i]];
        if (sf.column_index < 0) continue;  // nested: no row-group skipping
        ColumnStats cs;
        AddColumnChunkStats(*rg_meta->ColumnChunk(sf.column_index), sf.field->type(),
                            fields[i]->type(), &cs);
        std::string key = plan.mode == ColumnMappingMode::kNone ? fields[i]->name()
                                                                : PhysicalName(*fields[i]);
        stats.columns.emplace(key, std::move(cs));
      }
      skip = plan.can_skip_row_group(stats);
    }
    if (!skip) {
      row_groups.push_back(rg);
      row_group_start.push_back(start);
    }
    start += rows;
  }

  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  for (size_t g = 0; g < row_groups.size(); ++g) {
    std::unique_ptr<arrow::RecordBatchReader> rb_reader;
    int64_t row = row_group_start[g];
    int64_t rg_rows = metadata->RowGroup(row_groups[g])->num_rows();
    if (leaves.empty()) {
      // Only partition columns (or nothing) requested: rows still count.
      std::vector<std::shared_ptr<arrow::Array>> cols;
      for (size_t i = 0; i < fields.size(); ++i) {
        std::shared_ptr<arrow::Array> arr;
        if (plan.is_partition[i]) {
          ARROW_ASSIGN_OR_RAISE(arr, arrow::MakeArrayFromScalar(*task.partition_values[i], rg_rows));
        } else if (metadata_of[i] != MetadataColumn::kNone) {
          ARROW_ASSIGN_OR_RAISE(arr, MetadataValues(metadata_of[i], task, row, rg_rows));
        } else {
          ARROW_ASSIGN_OR_RAISE(arr, arrow::MakeArrayOfNull(fields[i]->type(), rg_rows));
        }
        cols.push_back(arr);
      }
      std::shared_ptr<arrow::RecordBatch> batch =
          arrow::RecordBatch::Make(plan.read_schema, rg_rows, std::move(cols));
      if (!deleted.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto mask, KeepMask(deleted, row, rg_rows));
        ARROW_ASSIGN_OR_RAISE(auto f, arrow::compute::Filter(batch, mask));
        batch = f.record_batch();
      }
      out.push_back(batch);
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(rb_reader, reader->GetRecordBatchReader({row_groups[g]}, leaves));
    while (true) {
      std::shared_ptr<arrow::RecordBatch> raw;
      ARROW_RETURN_NOT_OK(rb_reader->ReadNext(&raw));
      if (!raw) break;
      const int64_t n = raw->num_rows();
      std::vector<std::shared_ptr<arrow::Array>> cols;
      cols.reserve(fields.size());
      for (size_t i = 0; i < fields.size(); ++i) {
        std::shared_ptr<arrow::Array> arr;
        if (plan.is_partition[i]) {
          ARROW_ASSIGN_OR_RAISE(arr, arrow::MakeArrayFromScalar(*task.partition_values[i], n));
        } else if (metadata_of[i] != MetadataColumn::kNone) {
          ARROW_ASSIGN_OR_RAISE(arr, MetadataValues(metadata_of[i], task, row, n));
        } else if (file_field[i] < 0) {
          ARROW_ASSIGN_OR_RAISE(arr, arrow::MakeArrayOfNull(fields[i]->type(), n));
        } else {
          auto pos = std::find(top_level_read.begin(), top_level_read.end(), file_field[i]) -
                     top_level_read.begin();
          ARROW_ASSIGN_OR_RAISE(arr, ConformToLogical(raw->column(static_cast<int>(pos)), *fields[i], plan.mode));
        }
        cols.push_back(std::move(arr));
      }
      std::shared_ptr<arrow::RecordBatch> batch =
          arrow::RecordBatch::Make(plan.read_schema, n, std::move(cols));
      if (!deleted.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto mask, KeepMask(deleted, row, n));
        ARROW_ASSIGN_OR_RAISE(auto f, arrow::compute::Filter(batch, mask));
        batch = f.record_batch();
      }
      row += n;
      out.push_back(std::move(batch));
    }
  }

  // Row filter, then projection to the output columns.
  std::vector<std::shared_ptr<arrow::RecordBatch>> result;
  for (auto& batch : out) {
    if (plan.row_filter) {
      ARROW_ASSIGN_OR_RAISE(auto value, arrow::compute::ExecuteScalarExpression(
                                            *plan.row_filter, arrow::compute::ExecBatch(*batch)));
      std::shared_ptr<arrow::Array> mask;
      if (value.is_scalar()) {
        ARROW_ASSIGN_OR_RAISE(mask, arrow::MakeArrayFromScalar(*value.scalar(), batch->num_rows()));
      } else {
        mask = value.make_array();
      }
      ARROW_ASSIGN_OR_RAISE(auto f, arrow::compute::Filter(batch, mask));
      batch = f.record_batch();
    }
    if (batch->num_rows() == 0) continue;
    std::vector<std::shared_ptr<arrow::Array>> cols;
    for (int idx : plan.output_fields) cols.push_back(batch->column(idx));
    result.push_back(arrow::RecordBatch::Make(plan.output_schema, batch->num_rows(), std::move(cols)));
  }
  return result;
}

}  // namespace

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ReadDataFile(
    const FileReadPlan& plan, const FileTask& task, arrow::fs::FileSystem& fs) {
  try {
    auto result = ReadImpl(plan, task, fs);
    if (!result.ok()) return FileError(plan, task, result.status());
    return result;
  } catch (const parquet::ParquetException& e) {
    return FileError(plan, task, arrow::Status::IOError(e.what()));
  }
}

}  // namespace deltacpp::internal
