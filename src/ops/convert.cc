// CONVERT TO DELTA: list the folder, check its partition layout, read every file's footer (and
// rows, for statistics) in parallel, merge the schemas, commit version 0.
#include "deltacpp/ops/convert.h"

#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <fmt/core.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/file_reader.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "deltacpp/error.h"
#include "deltacpp/table.h"
#include "expr/schema_ddl.h"
#include "ops/data_tree_listing.h"
#include "ops/op_util.h"
#include "ops/table_definition.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "protocol/table_properties.h"
#include "txn/writer_features.h"
#include "util/clock.h"
#include "util/thread_pools.h"
#include "util/uri.h"
#include "write/stats_collector.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

constexpr const char* kHiveNull = "__HIVE_DEFAULT_PARTITION__";

// One data file of the folder.
struct SourceFile {
  std::string path;  ///< relative to the root
  int64_t size = 0;
  int64_t modification_time_ms = 0;
  std::map<std::string, std::optional<std::string>> partition_values;  ///< by column name
  std::shared_ptr<arrow::Schema> schema;  ///< as Delta types
  std::optional<std::string> stats;
  int64_t rows = 0;
};

// The Delta type a Parquet column read by Arrow becomes; `int96` when its Parquet type is INT96
// (Spark's timestamps, adjusted to UTC).
arrow::Result<std::shared_ptr<arrow::DataType>> DeltaTypeOf(
    const std::shared_ptr<arrow::DataType>& type, bool int96) {
  using arrow::Type;
  switch (type->id()) {
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(*type);
      return arrow::timestamp(arrow::TimeUnit::MICRO,
                              ts.timezone().empty() && !int96 ? "" : "UTC");
    }
    case Type::LARGE_STRING:
    case Type::STRING_VIEW:
      return arrow::utf8();
    case Type::LARGE_BINARY:
    case Type::BINARY_VIEW:
    case Type::FIXED_SIZE_BINARY:
      return arrow::binary();
    case Type::DICTIONARY:
      return DeltaTypeOf(static_cast<const arrow::DictionaryType&>(*type).value_type(), int96);
    case Type::UINT8:
    case Type::UINT16:
    case Type::UINT32:
    case Type::UINT64:
    case Type::HALF_FLOAT:
    case Type::TIME32:
    case Type::TIME64:
    case Type::DURATION:
    case Type::INTERVAL_MONTHS:
    case Type::INTERVAL_DAY_TIME:
    case Type::INTERVAL_MONTH_DAY_NANO:
    case Type::NA:
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("type {} has no Delta type", type->ToString()));
    case Type::STRUCT: {
      arrow::FieldVector fields;
      for (const auto& f : type->fields()) {
        ARROW_ASSIGN_OR_RAISE(auto t, DeltaTypeOf(f->type(), false));
        fields.push_back(f->WithType(t)->WithMetadata(nullptr));
      }
      return arrow::struct_(fields);
    }
    case Type::LIST:
    case Type::LARGE_LIST: {
      const auto& value = type->field(0);
      ARROW_ASSIGN_OR_RAISE(auto t, DeltaTypeOf(value->type(), false));
      return arrow::list(arrow::field("element", t, value->nullable()));
    }
    case Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      ARROW_ASSIGN_OR_RAISE(auto k, DeltaTypeOf(map.key_type(), false));
      ARROW_ASSIGN_OR_RAISE(auto v, DeltaTypeOf(map.item_type(), false));
      return arrow::map(k, arrow::field("value", v, map.item_field()->nullable()));
    }
    default:
      return type;
  }
}

// `rows` with the columns of `data_schema` (by name, case-insensitive; absent ones as nulls),
// cast to its types.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> AsDataSchema(
    const arrow::RecordBatch& rows, const std::shared_ptr<arrow::Schema>& data_schema) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : data_schema->fields()) {
    std::shared_ptr<arrow::Array> column;
    for (int i = 0; i < rows.num_columns(); ++i) {
      if (EqualsIgnoreCase(rows.schema()->field(i)->name(), field->name())) column = rows.column(i);
    }
    if (!column) {
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayOfNull(field->type(), rows.num_rows()));
    } else if (!column->type()->Equals(*field->type())) {
      ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(column, field->type(),
                                                             arrow::compute::CastOptions::Safe()));
      column = cast.make_array();
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(data_schema, rows.num_rows(), std::move(columns));
}

// Reads the footer of `file` (its schema as Delta types) and, with `stats`, its rows.
arrow::Status ReadFooter(const std::string& root, SourceFile* file) {
  const std::string path = root + "/" + file->path;
  ARROW_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
  std::unique_ptr<parquet::ParquetFileReader> reader;
  try {
    reader = parquet::ParquetFileReader::Open(input);
  } catch (const std::exception& e) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("{} is not a Parquet file: {}", file->path, e.what()));
  }
  const auto* descr = reader->metadata()->schema();
  std::shared_ptr<arrow::Schema> arrow_schema;
  ARROW_RETURN_NOT_OK(parquet::arrow::FromParquetSchema(
      descr, parquet::default_arrow_reader_properties(), reader->metadata()->key_value_metadata(),
      &arrow_schema));
  arrow::FieldVector fields;
  for (const auto& f : arrow_schema->fields()) {
    bool int96 = false;
    for (int c = 0; c < descr->num_columns(); ++c) {
      if (descr->Column(c)->path()->ToDotVector().front() == f->name() &&
          descr->Column(c)->physical_type() == parquet::Type::INT96) {
        int96 = true;
      }
    }
    auto type = DeltaTypeOf(f->type(), int96);
    if (!type.ok()) {
      return type.status().WithMessage(
          fmt::format("{}: column {}: {}", file->path, f->name(), type.status().message()));
    }
    fields.push_back(arrow::field(f->name(), *type, true));
  }
  file->schema = arrow::schema(fields);
  file->rows = reader->metadata()->num_rows();
  return arrow::Status::OK();
}

// Statistics of `file` in the table's data schema.
arrow::Status CollectFileStats(const std::string& root,
                               const std::shared_ptr<arrow::Schema>& data_schema,
                               const std::shared_ptr<const std::vector<StatsLeaf>>& leaves,
                               SourceFile* file) {
  const std::string path = root + "/" + file->path;
  ARROW_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
  ARROW_ASSIGN_OR_RAISE(auto reader,
                        parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
  ARROW_ASSIGN_OR_RAISE(auto batches, reader->GetRecordBatchReader());
  FileStatsCollector stats(leaves);
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto batch, batches->Next());
    if (!batch) break;
    ARROW_ASSIGN_OR_RAISE(auto shaped, AsDataSchema(*batch, data_schema));
    ARROW_RETURN_NOT_OK(stats.Update(*shaped));
  }
  file->stats = stats.ToJson();
  file->rows = stats.num_records();
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<ConvertResult> ConvertToDeltaBuilder::Execute() const {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Locate(location_));
  const std::string& root = table->root();
  const std::string context = fmt::format("CONVERT TO DELTA of {}", root);
  auto invalid = [&](const std::string& what) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, fmt::format("{}: {}", context, what));
  };
  ARROW_ASSIGN_OR_RAISE(bool exists, table->Exists());
  if (exists) {
    return DeltaError(DeltaErrorCode::kTableAlreadyExists,
                      fmt::format("{}: the folder is a Delta table already", context));
  }
  std::shared_ptr<arrow::Schema> partition_schema = arrow::schema(arrow::FieldVector{});
  if (partition_by_) {
    auto parsed = ParseColumnDefinitions(*partition_by_);
    if (!parsed.ok()) {
      return invalid(fmt::format("partition columns ({}): {}", *partition_by_,
                                 parsed.status().message()));
    }
    partition_schema = *parsed;
  }
  std::vector<std::string> partition_columns;
  for (const auto& f : partition_schema->fields()) partition_columns.push_back(f->name());
  const size_t depth = partition_columns.size();

  // --- The files and their partition values ---
  ARROW_ASSIGN_OR_RAISE(auto tree, ListDataTree(*table->store(), root, partition_columns));
  std::vector<SourceFile> files;
  for (const auto& f : tree.files) {
    SourceFile file;
    file.path = f.path;
    file.size = f.size;
    file.modification_time_ms = f.modification_time_ms;
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      const size_t slash = f.path.find('/', start);
      if (slash == std::string::npos) break;
      parts.push_back(f.path.substr(start, slash - start));
      start = slash + 1;
    }
    if (parts.size() != depth) {
      return invalid(fmt::format("{} lies {} folder{} deep, but the table has {} partition "
                                 "column{}{}",
                                 f.path, parts.size(), parts.size() == 1 ? "" : "s", depth,
                                 depth == 1 ? "" : "s",
                                 depth == 0 ? " (give them with --partition-by)" : ""));
    }
    for (size_t level = 0; level < depth; ++level) {
      const std::string& dir = parts[level];
      const size_t eq = dir.find('=');
      const auto& field = partition_schema->field(static_cast<int>(level));
      if (eq == std::string::npos || !EqualsIgnoreCase(dir.substr(0, eq), field->name())) {
        return invalid(fmt::format("folder {} of {} is not named {}=<value>, as partition "
                                   "column {} of level {} needs",
                                   dir, f.path, field->name(), field->name(), level + 1));
      }
      std::optional<std::string> value = UriDecodePath(dir.substr(eq + 1));
      if (*value == kHiveNull) value.reset();
      auto typed = ParsePartitionValue(value, field->type());
      if (!typed.ok()) {
        return invalid(fmt::format("folder {} of {}: the value does not fit {} {}: {}", dir,
                                   f.path, field->name(), field->type()->ToString(),
                                   typed.status().message()));
      }
      ARROW_ASSIGN_OR_RAISE(file.partition_values[field->name()],
                            SerializePartitionValue(**typed));
    }
    files.push_back(std::move(file));
  }
  if (files.empty()) return invalid("the folder holds no data file");

  // --- Footers, the merged schema ---
  std::atomic<int64_t> read{0};
  std::mutex progress_mutex;
  auto report = [&] {
    const int64_t done = ++read;
    if (!on_progress_) return;
    std::lock_guard lock(progress_mutex);
    on_progress_(ConvertProgress{done, static_cast<int64_t>(files.size())});
  };
  const int n = static_cast<int>(files.size());
  ARROW_RETURN_NOT_OK(RunFileTasks(n, [&](int i) -> arrow::Status {
    auto st = ReadFooter(root, &files[static_cast<size_t>(i)]);
    if (!st.ok()) return st.WithMessage(fmt::format("{}: {}", context, st.message()));
    if (!collect_stats_) report();
    return arrow::Status::OK();
  }));
  arrow::FieldVector data_fields;
  std::vector<size_t> field_origin;  // file that brought each field
  for (size_t i = 0; i < files.size(); ++i) {
    for (const auto& f : files[i].schema->fields()) {
      for (const auto& p : partition_columns) {
        if (EqualsIgnoreCase(p, f->name())) {
          return invalid(fmt::format("partition column {} is also a column of {}", p,
                                     files[i].path));
        }
      }
      auto known = std::find_if(data_fields.begin(), data_fields.end(),
                                [&](const auto& d) { return EqualsIgnoreCase(d->name(), f->name()); });
      if (known == data_fields.end()) {
        data_fields.push_back(f);
        field_origin.push_back(i);
      } else if (!(*known)->type()->Equals(*f->type())) {
        const size_t origin = field_origin[static_cast<size_t>(known - data_fields.begin())];
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("{}: the files' schemas do not merge: column {} is {} in "
                                      "{} and {} in {}",
                                      context, f->name(), (*known)->type()->ToString(),
                                      files[origin].path, f->type()->ToString(), files[i].path));
      }
    }
  }
  auto data_schema = arrow::schema(data_fields);
  arrow::FieldVector all_fields = data_fields;
  for (const auto& f : partition_schema->fields()) all_fields.push_back(f->WithNullable(true));
  auto schema = arrow::schema(all_fields);

  ARROW_ASSIGN_OR_RAISE(auto properties, ValidateUserProperties(properties_));
  ARROW_ASSIGN_OR_RAISE(auto def, BuildTableDefinition(schema, partition_columns, properties, {},
                                                       std::nullopt, std::nullopt,
                                                       std::nullopt));
  if (def.metadata.configuration.count("delta.columnMapping.mode")) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      fmt::format("{}: column mapping cannot be enabled while converting (the "
                                  "files have no field ids); enable it afterwards",
                                  context));
  }

  // --- Statistics ---
  if (collect_stats_) {
    ARROW_ASSIGN_OR_RAISE(auto leaves, SelectStatsLeaves(*data_schema, 32, std::nullopt, {}));
    auto shared = std::make_shared<const std::vector<StatsLeaf>>(std::move(leaves));
    ARROW_RETURN_NOT_OK(RunFileTasks(n, [&](int i) -> arrow::Status {
      auto st = CollectFileStats(root, data_schema, shared, &files[static_cast<size_t>(i)]);
      if (!st.ok()) {
        return st.WithMessage(fmt::format("{}: statistics of {}: {}", context,
                                          files[static_cast<size_t>(i)].path, st.message()));
      }
      report();
      return arrow::Status::OK();
    }));
  }

  // --- Version 0 ---
  TransactionOptions options = options_;
  for (const auto& f : RowLevelWriterFeatures()) options.enforced_features.push_back(f);
  ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::Start(table, nullptr, options));
  txn->UpdateProtocol(def.protocol);
  txn->UpdateMetadata(def.metadata);
  std::vector<AddFile> adds;
  ConvertResult result;
  for (auto& f : files) {
    AddFile add;
    add.path = UriEncodePath(f.path);
    add.partition_values = f.partition_values;
    add.size = f.size;
    add.modification_time = f.modification_time_ms;
    add.data_change = true;
    add.stats = f.stats;
    result.num_rows += f.rows;
    adds.push_back(std::move(add));
  }
  txn->AddFiles(std::move(adds));
  ARROW_ASSIGN_OR_RAISE(
      auto committed,
      txn->Commit("CONVERT",
                  {{"numFiles", std::to_string(files.size())},
                   {"partitionedBy", JsonStringArray(partition_columns)},
                   {"collectStats", collect_stats_ ? "true" : "false"}},
                  {{"numConvertedFiles", std::to_string(files.size())}}));
  result.version = committed.version;
  result.num_files = static_cast<int64_t>(files.size());
  result.schema = def.schema;
  result.partition_columns = partition_columns;
  return result;
}

}  // namespace deltacpp
