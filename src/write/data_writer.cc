#include "write/data_writer.h"
#include "util/random_uuid.h"

#include <arrow/compute/api.h>
#include <arrow/compute/row/grouper.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/compression.h>
#include <fmt/core.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "util/clock.h"
#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "storage/local_sync.h"
#include "util/uri.h"
#include "write/stats_collector.h"

namespace deltacpp::internal {

namespace {

// Data buffered for unwritten row groups across all open files; beyond it the largest buffers are
// written out early.
constexpr int64_t kMaxBufferedBytes = 256LL << 20;
// Files open at the same time; beyond it the least recently written file is finished.
constexpr size_t kMaxOpenFiles = 128;
// Files of one partition receiving rows in turn while the others encode ("lanes"), at most.
constexpr int kMaxLanes = 4;
// Parquet's dictionary page limit (the writer properties' default): a column chunk whose
// dictionary grows past it falls back to plain encoding, after the work of building it.
constexpr double kDictionaryLimitBytes = 1024.0 * 1024.0;
// Rows of a file's first batch looked at to choose its columns' encodings.
constexpr int64_t kEncodingSampleRows = 32 * 1024;
constexpr char kHiveDefaultPartition[] = "__HIVE_DEFAULT_PARTITION__";
constexpr int kRandomPrefixLength = 2;

struct CodecChoice {
  arrow::Compression::type codec;
  std::string extension;  // inserted before ".parquet", e.g. ".snappy"
};

arrow::Result<CodecChoice> ResolveCodec(const std::string& name) {
  static const std::pair<const char*, CodecChoice> kCodecs[] = {
      {"snappy", {arrow::Compression::SNAPPY, ".snappy"}},
      {"zstd", {arrow::Compression::ZSTD, ".zstd"}},
      {"gzip", {arrow::Compression::GZIP, ".gz"}},
      {"lz4", {arrow::Compression::LZ4, ".lz4raw"}},
      {"lz4_raw", {arrow::Compression::LZ4, ".lz4raw"}},
      {"brotli", {arrow::Compression::BROTLI, ".br"}},
      {"uncompressed", {arrow::Compression::UNCOMPRESSED, ""}},
      {"none", {arrow::Compression::UNCOMPRESSED, ""}},
  };
  for (const auto& [key, choice] : kCodecs) {
    if (!EqualsIgnoreCase(name, key)) continue;
    if (!arrow::util::Codec::IsAvailable(choice.codec)) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("compression codec '{}' is not available in this build", name));
    }
    return choice;
  }
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    fmt::format("unknown Parquet compression codec '{}' (expected snappy, zstd, "
                                "gzip, lz4, brotli or uncompressed)",
                                name));
}

bool IsNestedType(const arrow::DataType& type) {
  return type.id() == arrow::Type::STRUCT || type.id() == arrow::Type::LIST ||
         type.id() == arrow::Type::LARGE_LIST || type.id() == arrow::Type::MAP ||
         type.id() == arrow::Type::FIXED_SIZE_LIST;
}

// Top-level fixed-width columns of `batch` (4 bytes wide or more) whose first rows hold more
// distinct values than a uniform draw from a domain that just fills a dictionary page would
// give: their dictionary would outgrow the page and fall back to plain encoding, or (values
// nearly all distinct) be larger than the plain values. Their names; empty for small batches.
std::vector<std::string> PlainEncodedColumns(const arrow::RecordBatch& batch) {
  const int64_t n = std::min(batch.num_rows(), kEncodingSampleRows);
  std::vector<std::string> out;
  if (n < 1024) return out;
  for (int i = 0; i < batch.num_columns(); ++i) {
    const auto& type = *batch.column(i)->type();
    if (!arrow::is_fixed_width(type.id()) || arrow::is_nested(type.id()) ||
        type.id() == arrow::Type::DICTIONARY) {
      continue;
    }
    const int width = static_cast<const arrow::FixedWidthType&>(type).bit_width() / 8;
    if (width < 4) continue;  // at most 65,536 values: a dictionary always fits
    auto distinct = arrow::compute::CallFunction("count_distinct", {batch.column(i)->Slice(0, n)});
    if (!distinct.ok()) continue;
    const double count = static_cast<double>(
        std::static_pointer_cast<arrow::Int64Scalar>(distinct->scalar())->value);
    const double domain = kDictionaryLimitBytes / width;
    const double expected = domain * (1.0 - std::exp(-static_cast<double>(n) / domain));
    if (count > expected) out.push_back(batch.schema()->field(i)->name());
  }
  return out;
}

// Refuses the void placements the protocol forbids in data files.
arrow::Status CheckVoid(const arrow::DataType& type, bool in_collection, const std::string& name) {
  switch (type.id()) {
    case arrow::Type::NA:
      if (in_collection) {
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("column '{}' has void inside an array or map, which cannot "
                                      "be written",
                                      name));
      }
      return arrow::Status::OK();
    case arrow::Type::STRUCT: {
      bool all_void = type.num_fields() > 0;
      for (const auto& f : type.fields()) {
        all_void = all_void && f->type()->id() == arrow::Type::NA;
        ARROW_RETURN_NOT_OK(CheckVoid(*f->type(), in_collection, name + "." + f->name()));
      }
      if (all_void) {
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("struct column '{}' has only void fields, which cannot be "
                                      "written",
                                      name));
      }
      return arrow::Status::OK();
    }
    default:
      for (const auto& f : type.fields()) ARROW_RETURN_NOT_OK(CheckVoid(*f->type(), true, name));
      return arrow::Status::OK();
  }
}

// The type with void fields removed from structs (void never reaches data files).
std::shared_ptr<arrow::DataType> DropVoid(const std::shared_ptr<arrow::DataType>& type) {
  if (type->id() != arrow::Type::STRUCT) return type;
  arrow::FieldVector fields;
  for (const auto& f : type->fields()) {
    if (f->type()->id() == arrow::Type::NA) continue;
    fields.push_back(f->WithType(DropVoid(f->type())));
  }
  return arrow::struct_(std::move(fields));
}

// Data files declare every column optional, as Spark writes them (NOT NULL is enforced on the
// rows by the caller before they reach the writer). Map keys and map entries stay required, as Arrow demands.
std::shared_ptr<arrow::Field> AsNullable(const std::shared_ptr<arrow::Field>& field);

std::shared_ptr<arrow::DataType> NullableType(const std::shared_ptr<arrow::DataType>& type) {
  switch (type->id()) {
    case arrow::Type::STRUCT: {
      arrow::FieldVector fields;
      for (const auto& f : type->fields()) fields.push_back(AsNullable(f));
      return arrow::struct_(std::move(fields));
    }
    case arrow::Type::LIST:
      return arrow::list(AsNullable(static_cast<const arrow::ListType&>(*type).value_field()));
    case arrow::Type::LARGE_LIST:
      return arrow::large_list(AsNullable(static_cast<const arrow::LargeListType&>(*type).value_field()));
    case arrow::Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(*type);
      auto key = map.key_field()->WithType(NullableType(map.key_type()));
      return std::make_shared<arrow::MapType>(key, AsNullable(map.item_field()), map.keys_sorted());
    }
    default:
      return type;
  }
}

std::shared_ptr<arrow::Field> AsNullable(const std::shared_ptr<arrow::Field>& field) {
  return field->WithType(NullableType(field->type()))->WithNullable(true);
}

// Same data layout: equal type ids, struct fields with the same names (ignoring case) in the same
// order, any child field names in lists and maps, timestamps of the same unit that agree on
// having a zone.
bool SameShape(const arrow::DataType& a, const arrow::DataType& b) {
  if (a.id() != b.id()) return false;
  switch (a.id()) {
    case arrow::Type::STRUCT:
      if (a.num_fields() != b.num_fields()) return false;
      for (int i = 0; i < a.num_fields(); ++i) {
        if (!EqualsIgnoreCase(a.field(i)->name(), b.field(i)->name()) ||
            !SameShape(*a.field(i)->type(), *b.field(i)->type())) {
          return false;
        }
      }
      return true;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::MAP:
      if (a.num_fields() != b.num_fields()) return false;
      for (int i = 0; i < a.num_fields(); ++i) {
        if (!SameShape(*a.field(i)->type(), *b.field(i)->type())) return false;
      }
      return a.id() != arrow::Type::MAP || static_cast<const arrow::MapType&>(a).keys_sorted() ==
                                               static_cast<const arrow::MapType&>(b).keys_sorted();
    case arrow::Type::TIMESTAMP: {
      const auto& x = static_cast<const arrow::TimestampType&>(a);
      const auto& y = static_cast<const arrow::TimestampType&>(b);
      return x.unit() == y.unit() && x.timezone().empty() == y.timezone().empty();
    }
    default:
      return a.Equals(b, /*check_metadata=*/false);
  }
}

// Re-labels `data` (laid out like `logical`) with the file type `physical`, dropping the children
// of void struct fields. No values are copied.
std::shared_ptr<arrow::ArrayData> ToPhysical(const std::shared_ptr<arrow::ArrayData>& data,
                                             const arrow::DataType& logical,
                                             const std::shared_ptr<arrow::DataType>& physical) {
  auto out = data->Copy();
  out->type = physical;
  out->child_data.clear();
  int j = 0;
  for (int i = 0; i < logical.num_fields() && static_cast<size_t>(i) < data->child_data.size(); ++i) {
    const auto& child_type = logical.field(i)->type();
    if (logical.id() == arrow::Type::STRUCT && child_type->id() == arrow::Type::NA) continue;
    out->child_data.push_back(ToPhysical(data->child_data[static_cast<size_t>(i)], *child_type,
                                         physical->field(j++)->type()));
  }
  return out;
}

int64_t EstimateBytes(const arrow::RecordBatch& batch) {
  auto referenced = arrow::util::ReferencedBufferSize(batch);
  return referenced.ok() ? *referenced : arrow::util::TotalBufferSize(batch);
}

class DataWriterImpl final : public DataWriter {
 public:
  explicit DataWriterImpl(DataWriterOptions options)
      : options_(std::move(options)), rng_(std::random_device{}()) {}

  ~DataWriterImpl() override {
    // Unfinished files are left as they are (never committed, so invisible to readers).
    (void)WaitAll();
    for (auto* p : partition_order_) {
      if (p->file) (void)p->file->writer->Close();
      for (auto& lane : p->resting) (void)lane->writer->Close();
    }
  }

  arrow::Status Init();
  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch) override;
  arrow::Result<std::vector<AddFile>> Finish() override;
  arrow::Status Abort() override;
  Written WrittenSoFar() const override;

 private:
  struct OpenFile {
    uint64_t counter = 0;
    std::string relative_path;  // not URI-encoded
    std::string absolute_path;
    std::shared_ptr<arrow::io::OutputStream> sink;
    std::unique_ptr<parquet::arrow::FileWriter> writer;
    std::unique_ptr<FileStatsCollector> stats;
    std::optional<std::string> stats_json;  // once the file is closed
    std::vector<std::shared_ptr<arrow::RecordBatch>> pending;  // rows of the next row group
    int64_t pending_bytes = 0;
    uint64_t last_use = 0;
    // The row group being encoded on a thread of its own, if any; the writer and the sink are
    // that thread's until it is waited for.
    std::future<arrow::Status> encoding;
    // Bytes in the file after the row groups encoded so far (set by the encoding thread).
    std::atomic<int64_t> written{0};
    // Directories created for this file, innermost first: their entries are synced with it.
    std::vector<std::string> new_dirs;
  };
  struct Partition {
    std::map<std::string, std::optional<std::string>> values;  // by physical name
    std::string hive_dir;  // `a=1/b=x/` (Hive-escaped), empty when unpartitioned
    std::unique_ptr<OpenFile> file;  // receives the partition's rows
    // The partition's other open files (lanes), without pending rows, possibly encoding: when
    // rows arrive faster than one file encodes, the next row group goes to a lane that is free
    // (or a new one), so several files of one partition are encoded at once.
    std::vector<std::unique_ptr<OpenFile>> resting;
  };
  using PartitionKey = std::vector<std::optional<std::string>>;

  arrow::Status CheckUsable() const;
  arrow::Status CheckBatch(const arrow::RecordBatch& batch) const;
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> PhysicalBatch(const arrow::RecordBatch& batch) const;
  arrow::Status RegisterNewGroups();
  Partition* GetPartition(const PartitionKey& key);
  arrow::Status Append(Partition* partition, const std::shared_ptr<arrow::RecordBatch>& batch);
  /// A new file of `partition`, whose first rows are `first` (they choose its encodings).
  arrow::Result<std::unique_ptr<OpenFile>> OpenNewFile(const Partition& partition,
                                                       const arrow::RecordBatch& first);
  arrow::Status WritePending(OpenFile* file);
  arrow::Status FlushRowGroup(Partition* partition);
  arrow::Status CloseFile(Partition* partition);
  arrow::Status CloseFile(const Partition& partition, std::unique_ptr<OpenFile> file);
  /// Before a full row group is encoded: when the file that received its rows is still
  /// encoding the previous one, the rows go to a lane that is free, or to a new lane, or to the
  /// lane that finishes first.
  arrow::Status ChooseLane(Partition* partition);
  arrow::Status LimitBufferedBytes();
  arrow::Status MakeRoomForFile();
  std::string RandomPrefix();
  // Encoding on other threads: at most max_tasks_ row groups or file closes at once, so several
  // files are encoded in parallel while the caller goes on routing rows.
  arrow::Status WaitEncoding(OpenFile* file);
  template <typename Task>
  std::future<arrow::Status> Launch(Task task);
  arrow::Status WaitAll();
  // A file whose close runs on another thread, and what its add action needs.
  struct Closing {
    std::unique_ptr<OpenFile> file;
    std::map<std::string, std::optional<std::string>> values;
    std::future<arrow::Status> done;
  };
  std::vector<Closing> closing_;
  std::mutex tasks_mutex_;
  std::condition_variable task_done_;
  int tasks_running_ = 0;
  int max_tasks_ = 2;
  int max_lanes_ = 1;

  DataWriterOptions options_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::vector<int> partition_indexes_;          // into the table schema
  std::vector<std::string> partition_keys_;     // physical names, as in partitionValues
  std::vector<int> data_indexes_;               // table schema columns written to files
  std::shared_ptr<arrow::Schema> data_schema_;  // logical, partition and void columns removed
  std::shared_ptr<arrow::Schema> physical_schema_;
  std::shared_ptr<const std::vector<StatsLeaf>> stats_leaves_;
  CodecChoice codec_{arrow::Compression::SNAPPY, ".snappy"};
  std::shared_ptr<parquet::WriterProperties> writer_properties_;
  std::shared_ptr<parquet::ArrowWriterProperties> arrow_properties_;
  int64_t row_group_bytes_ = 0;

  std::unique_ptr<arrow::compute::Grouper> grouper_;
  std::vector<Partition*> group_partitions_;  // by grouper group id
  std::map<PartitionKey, std::unique_ptr<Partition>> partitions_;
  std::vector<Partition*> partition_order_;   // creation order

  std::mt19937_64 rng_;
  uint64_t file_counter_ = 0;
  std::atomic<int64_t> closed_bytes_{0};  // sizes of the files closed so far
  uint64_t tick_ = 0;
  size_t open_files_ = 0;
  int64_t buffered_bytes_ = 0;
  std::set<std::string> created_dirs_;
  std::vector<std::string> created_files_;  // absolute paths, for Abort
  bool done_ = false;
};

arrow::Status DataWriterImpl::Init() {
  max_tasks_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  max_lanes_ = std::min(max_tasks_, kMaxLanes);
  const auto& schema = options_.table_schema;
  if (!schema) return DeltaError(DeltaErrorCode::kInvalidArgument, "data writer without a table schema");
  if (options_.table_root.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "data writer without a table root");
  }
  while (options_.table_root.size() > 1 && options_.table_root.back() == '/') {
    options_.table_root.pop_back();
  }
  if (options_.target_file_size <= 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("target file size must be positive, got {}", options_.target_file_size));
  }
  while (!options_.base_folder.empty() && options_.base_folder.back() == '/') {
    options_.base_folder.pop_back();
  }
  if ((!options_.base_folder.empty() && options_.base_folder.front() == '/') ||
      options_.base_folder.find("..") != std::string::npos) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("base folder '{}' must be a folder inside the table root",
                                  options_.base_folder));
  }
  if (options_.file_name_prefix.empty() ||
      options_.file_name_prefix.find('/') != std::string::npos) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("file name prefix '{}' must be a non-empty name without '/'",
                                  options_.file_name_prefix));
  }
  if (options_.row_group_bytes <= 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("row group size must be positive, got {}", options_.row_group_bytes));
  }
  row_group_bytes_ = std::min(options_.target_file_size, options_.row_group_bytes);
  fs_ = options_.fs ? options_.fs : std::make_shared<arrow::fs::LocalFileSystem>();
  ARROW_ASSIGN_OR_RAISE(codec_, ResolveCodec(options_.compression));

  const bool mapped = options_.column_mapping_mode != ColumnMappingMode::kNone;
  for (const auto& name : options_.partition_columns) {
    int index = schema->GetFieldIndex(name);
    if (index < 0) {
      for (int i = 0; i < schema->num_fields(); ++i) {
        if (EqualsIgnoreCase(schema->field(i)->name(), name)) index = i;
      }
    }
    if (index < 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("partition column '{}' is not in the table schema", name));
    }
    if (std::find(partition_indexes_.begin(), partition_indexes_.end(), index) != partition_indexes_.end()) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("partition column '{}' is listed twice", name));
    }
    const auto& field = schema->field(index);
    if (IsNestedType(*field->type()) || IsVariantField(*field)) {
      return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                        fmt::format("partition column '{}' has the nested type {}", name,
                                    field->type()->ToString()));
    }
    partition_indexes_.push_back(index);
    partition_keys_.push_back(mapped ? PhysicalName(*field) : field->name());
  }

  arrow::FieldVector data_fields;
  for (int i = 0; i < schema->num_fields(); ++i) {
    if (std::find(partition_indexes_.begin(), partition_indexes_.end(), i) != partition_indexes_.end()) continue;
    const auto& field = schema->field(i);
    if (field->type()->id() == arrow::Type::NA) continue;  // void is never written
    ARROW_RETURN_NOT_OK(CheckVoid(*field->type(), false, field->name()));
    data_indexes_.push_back(i);
    data_fields.push_back(field->WithType(DropVoid(field->type())));
  }
  if (data_fields.empty()) {
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      "the table has no non-partition, non-void column to write into data files");
  }
  data_schema_ = arrow::schema(std::move(data_fields));
  // Both mapping modes write physical names and Parquet field ids.
  auto physical = PhysicalSchema(*data_schema_, mapped ? ColumnMappingMode::kId : ColumnMappingMode::kNone);
  arrow::FieldVector physical_fields;
  for (const auto& f : physical->fields()) physical_fields.push_back(AsNullable(f));
  physical_schema_ = arrow::schema(std::move(physical_fields));

  ARROW_ASSIGN_OR_RAISE(auto leaves, SelectStatsLeaves(*data_schema_, options_.num_indexed_cols,
                                                       options_.stats_columns, options_.partition_columns));
  stats_leaves_ = std::make_shared<const std::vector<StatsLeaf>>(std::move(leaves));

  writer_properties_ = parquet::WriterProperties::Builder().compression(codec_.codec)->build();
  arrow_properties_ = parquet::ArrowWriterProperties::Builder()
                          .coerce_timestamps(arrow::TimeUnit::MICRO)
                          ->disable_deprecated_int96_timestamps()
                          ->build();

  if (!partition_indexes_.empty()) {
    std::vector<arrow::TypeHolder> key_types;
    for (int index : partition_indexes_) key_types.emplace_back(schema->field(index)->type());
    ARROW_ASSIGN_OR_RAISE(grouper_, arrow::compute::Grouper::Make(key_types));
  }
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::CheckUsable() const {
  if (done_) return arrow::Status::Invalid("the data writer was already finished or aborted");
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::CheckBatch(const arrow::RecordBatch& batch) const {
  const auto& table = *options_.table_schema;
  if (batch.num_columns() != table.num_fields()) {
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("the batch has {} columns but the table schema has {}: {}",
                                  batch.num_columns(), table.num_fields(), batch.schema()->ToString()));
  }
  for (int i = 0; i < table.num_fields(); ++i) {
    const auto& want = table.field(i);
    const auto& got = batch.schema()->field(i);
    if (!EqualsIgnoreCase(got->name(), want->name()) || !SameShape(*got->type(), *want->type())) {
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("column {} of the batch is '{}' {}, but the table has '{}' {}", i,
                                    got->name(), got->type()->ToString(), want->name(),
                                    want->type()->ToString()));
    }
  }
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> DataWriterImpl::PhysicalBatch(
    const arrow::RecordBatch& batch) const {
  arrow::ArrayVector columns;
  columns.reserve(data_indexes_.size());
  for (size_t j = 0; j < data_indexes_.size(); ++j) {
    const int i = data_indexes_[j];
    auto data = ToPhysical(batch.column_data(i), *options_.table_schema->field(i)->type(),
                           physical_schema_->field(static_cast<int>(j))->type());
    columns.push_back(arrow::MakeArray(std::move(data)));
  }
  return arrow::RecordBatch::Make(physical_schema_, batch.num_rows(), std::move(columns));
}

DataWriterImpl::Partition* DataWriterImpl::GetPartition(const PartitionKey& key) {
  auto it = partitions_.find(key);
  if (it != partitions_.end()) return it->second.get();
  auto partition = std::make_unique<Partition>();
  for (size_t k = 0; k < key.size(); ++k) {
    partition->values[partition_keys_[k]] = key[k];
    const auto& field = options_.table_schema->field(partition_indexes_[k]);
    partition->hive_dir += EscapePartitionValueForPath(field->name()) + "=" +
                           (key[k] ? EscapePartitionValueForPath(*key[k]) : kHiveDefaultPartition) + "/";
  }
  Partition* raw = partition.get();
  partitions_.emplace(key, std::move(partition));
  partition_order_.push_back(raw);
  return raw;
}

arrow::Status DataWriterImpl::RegisterNewGroups() {
  const uint32_t groups = grouper_->num_groups();
  if (group_partitions_.size() == groups) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto uniques, grouper_->GetUniques());
  std::vector<std::shared_ptr<arrow::Array>> keys;
  for (const auto& value : uniques.values) keys.push_back(value.make_array());
  for (uint32_t g = static_cast<uint32_t>(group_partitions_.size()); g < groups; ++g) {
    PartitionKey key;
    for (const auto& column : keys) {
      ARROW_ASSIGN_OR_RAISE(auto scalar, column->GetScalar(g));
      ARROW_ASSIGN_OR_RAISE(auto text, SerializePartitionValue(*scalar));
      if (text && text->empty()) text.reset();  // an empty partition value means NULL
      key.push_back(std::move(text));
    }
    group_partitions_.push_back(GetPartition(key));
  }
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  ARROW_RETURN_NOT_OK(CheckUsable());
  if (!batch) return arrow::Status::Invalid("null record batch");
  ARROW_RETURN_NOT_OK(CheckBatch(*batch));
  if (batch->num_rows() == 0) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto physical, PhysicalBatch(*batch));
  if (!grouper_) return Append(GetPartition({}), physical);

  std::vector<arrow::Datum> key_columns;
  for (int index : partition_indexes_) key_columns.emplace_back(batch->column(index));
  arrow::compute::ExecBatch keys(std::move(key_columns), batch->num_rows());
  ARROW_ASSIGN_OR_RAISE(auto ids, grouper_->Consume(arrow::compute::ExecSpan(keys)));
  ARROW_RETURN_NOT_OK(RegisterNewGroups());
  auto id_array = std::static_pointer_cast<arrow::UInt32Array>(ids.make_array());
  ARROW_ASSIGN_OR_RAISE(auto groupings,
                        arrow::compute::Grouper::MakeGroupings(*id_array, grouper_->num_groups()));
  for (uint32_t g = 0; g < grouper_->num_groups(); ++g) {
    const int64_t rows = groupings->value_length(g);
    if (rows == 0) continue;
    if (rows == batch->num_rows()) {
      ARROW_RETURN_NOT_OK(Append(group_partitions_[g], physical));
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(physical, groupings->value_slice(g)));
    ARROW_RETURN_NOT_OK(Append(group_partitions_[g], taken.record_batch()));
  }
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::Append(Partition* partition,
                                     const std::shared_ptr<arrow::RecordBatch>& batch) {
  const int64_t rows = batch->num_rows();
  const int64_t bytes = EstimateBytes(*batch);
  int64_t step = rows;
  if (bytes > row_group_bytes_ && rows > 1) {
    step = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(rows) * row_group_bytes_ / bytes));
  }
  for (int64_t offset = 0; offset < rows; offset += step) {
    auto chunk = step == rows ? batch : batch->Slice(offset, step);
    const int64_t chunk_bytes = step == rows ? bytes : EstimateBytes(*chunk);
    if (!partition->file) {
      ARROW_RETURN_NOT_OK(MakeRoomForFile());
      ARROW_ASSIGN_OR_RAISE(partition->file, OpenNewFile(*partition, *chunk));
      ++open_files_;
    }
    OpenFile& file = *partition->file;
    file.pending.push_back(std::move(chunk));
    file.pending_bytes += chunk_bytes;
    buffered_bytes_ += chunk_bytes;
    file.last_use = ++tick_;
    if (file.pending_bytes >= row_group_bytes_) {
      ARROW_RETURN_NOT_OK(ChooseLane(partition));
      ARROW_RETURN_NOT_OK(FlushRowGroup(partition));
    }
  }
  return LimitBufferedBytes();
}

// Whether a file's last row group is still being encoded.
bool Encoding(const std::future<arrow::Status>& encoding) {
  return encoding.valid() &&
         encoding.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

arrow::Status DataWriterImpl::ChooseLane(Partition* partition) {
  if (max_lanes_ <= 1 || !Encoding(partition->file->encoding)) return arrow::Status::OK();
  auto& resting = partition->resting;
  // The rows (and the statistics, gathered when they are encoded) move to the chosen lane.
  auto take_rows = [&](std::unique_ptr<OpenFile>& lane) {
    lane->pending = std::move(partition->file->pending);
    partition->file->pending.clear();
    lane->pending_bytes = std::exchange(partition->file->pending_bytes, 0);
    lane->last_use = partition->file->last_use;
    std::swap(lane, partition->file);
  };
  // A free lane takes them; else a new lane while there is room for one; else the first lane
  // (this file included) to finish its row group.
  while (true) {
    if (!Encoding(partition->file->encoding)) return arrow::Status::OK();
    for (auto& lane : resting) {
      if (!Encoding(lane->encoding)) {
        take_rows(lane);
        return arrow::Status::OK();
      }
    }
    if (static_cast<int>(resting.size()) + 1 < max_lanes_ && open_files_ < kMaxOpenFiles) {
      ARROW_ASSIGN_OR_RAISE(auto lane, OpenNewFile(*partition, *partition->file->pending.front()));
      ++open_files_;
      take_rows(lane);
      resting.push_back(std::move(lane));
      return arrow::Status::OK();
    }
    std::unique_lock lock(tasks_mutex_);
    task_done_.wait_for(lock, std::chrono::milliseconds(5));
  }
}

std::string DataWriterImpl::RandomPrefix() {
  static constexpr char kAlphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::uniform_int_distribution<size_t> dist(0, sizeof(kAlphabet) - 2);
  std::string out;
  const int length = options_.random_prefix_length.value_or(kRandomPrefixLength);
  for (int i = 0; i < length; ++i) out += kAlphabet[dist(rng_)];
  return out;
}

arrow::Result<std::unique_ptr<DataWriterImpl::OpenFile>> DataWriterImpl::OpenNewFile(
    const Partition& partition, const arrow::RecordBatch& first) {
  auto file = std::make_unique<OpenFile>();
  file->counter = file_counter_++;
  // With column mapping, directory names would go stale on renames: spread files over random
  // prefix directories instead, as delta-spark does.
  std::string dir = options_.column_mapping_mode != ColumnMappingMode::kNone ||
                            options_.random_prefix_length
                        ? RandomPrefix() + "/"
                        : partition.hive_dir;
  if (!options_.base_folder.empty()) dir = options_.base_folder + "/" + dir;
  file->relative_path = dir + fmt::format("{}-{:05d}-{}.c000{}.parquet", options_.file_name_prefix,
                                          file->counter, RandomUuidV4(), codec_.extension);
  file->absolute_path = options_.table_root + "/" + file->relative_path;
  // The table root itself may not exist yet (a write that creates the table).
  if (!created_dirs_.count(dir)) {
    std::string full = options_.table_root;
    if (!dir.empty()) full += "/" + dir.substr(0, dir.size() - 1);
    ARROW_RETURN_NOT_OK(fs_->CreateDir(full, /*recursive=*/true));
    created_dirs_.insert(dir);
    // Which levels were new is not known: sync every level's entry up to the table root.
    for (std::string d = full; d.size() >= options_.table_root.size();) {
      file->new_dirs.push_back(d);
      const size_t slash = d.find_last_of('/');
      if (d == options_.table_root || slash == std::string::npos || slash == 0) break;
      d.resize(slash);
    }
  }
  ARROW_ASSIGN_OR_RAISE(file->sink, fs_->OpenOutputStream(file->absolute_path));
  created_files_.push_back(file->absolute_path);
  // Dictionary encoding stays on (Parquet's default) except for columns whose values are too
  // varied for it: building a dictionary only to drop it was most of the encoding time of
  // copy-on-write rewrites of id-like columns.
  std::shared_ptr<parquet::WriterProperties> properties = writer_properties_;
  const auto plain = PlainEncodedColumns(first);
  if (!plain.empty()) {
    parquet::WriterProperties::Builder builder;
    builder.compression(codec_.codec);
    for (const auto& name : plain) builder.disable_dictionary(name);
    properties = builder.build();
  }
  ARROW_ASSIGN_OR_RAISE(file->writer,
                        parquet::arrow::FileWriter::Open(*physical_schema_,
                                                         arrow::default_memory_pool(), file->sink,
                                                         properties, arrow_properties_));
  file->stats = std::make_unique<FileStatsCollector>(stats_leaves_, options_.string_prefix_length);
  return file;
}

template <typename Task>
std::future<arrow::Status> DataWriterImpl::Launch(Task task) {
  {
    std::unique_lock lock(tasks_mutex_);
    task_done_.wait(lock, [&] { return tasks_running_ < max_tasks_; });
    ++tasks_running_;
  }
  // A thread of its own, not a pool's: nothing waits on a pool for work queued behind it.
  return std::async(std::launch::async, [this, task = std::move(task)]() mutable {
    arrow::Status st;
    try {
      st = task();
    } catch (const std::exception& e) {
      st = arrow::Status::IOError("encoding a data file failed: ", e.what());
    }
    {
      std::lock_guard lock(tasks_mutex_);
      --tasks_running_;
    }
    task_done_.notify_all();
    return st;
  });
}

arrow::Status DataWriterImpl::WaitEncoding(OpenFile* file) {
  if (!file->encoding.valid()) return arrow::Status::OK();
  return file->encoding.get();
}

arrow::Status DataWriterImpl::WaitAll() {
  arrow::Status first;
  for (auto* p : partition_order_) {
    if (p->file) {
      auto st = WaitEncoding(p->file.get());
      if (first.ok() && !st.ok()) first = st;
    }
    for (auto& lane : p->resting) {
      auto st = WaitEncoding(lane.get());
      if (first.ok() && !st.ok()) first = st;
    }
  }
  for (auto& c : closing_) {
    if (!c.done.valid()) continue;
    auto st = c.done.get();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

arrow::Status DataWriterImpl::WritePending(OpenFile* file) {
  // Row groups of one file are encoded in order: the previous one first.
  ARROW_RETURN_NOT_OK(WaitEncoding(file));
  if (file->pending.empty()) return arrow::Status::OK();
  auto pending = std::move(file->pending);
  file->pending.clear();
  buffered_bytes_ -= file->pending_bytes;
  file->pending_bytes = 0;
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(physical_schema_, pending));
  file->encoding = Launch([file, pending = std::move(pending), table]() -> arrow::Status {
    // Statistics are gathered beside the encoding, by the one thread that has the file.
    for (const auto& batch : pending) ARROW_RETURN_NOT_OK(file->stats->Update(*batch));
    ARROW_RETURN_NOT_OK(file->writer->WriteTable(*table, parquet::DEFAULT_MAX_ROW_GROUP_LENGTH));
    ARROW_ASSIGN_OR_RAISE(const int64_t written, file->sink->Tell());
    file->written = written;
    return arrow::Status::OK();
  });
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::FlushRowGroup(Partition* partition) {
  OpenFile* file = partition->file.get();
  const int64_t group_bytes = file->pending_bytes;
  ARROW_RETURN_NOT_OK(WritePending(file));
  // The file is finished once its bytes reach the target. A row group encodes to at most about
  // its Arrow size: only when the size before it plus that could reach the target is the
  // encoding waited for to know.
  const int64_t bound = file->written + group_bytes + group_bytes / 8 + (1 << 20);
  if (bound < options_.target_file_size) return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(WaitEncoding(file));
  if (file->written >= options_.target_file_size) return CloseFile(partition);
  return arrow::Status::OK();
}

DataWriter::Written DataWriterImpl::WrittenSoFar() const {
  Written out;
  out.files = static_cast<int64_t>(file_counter_);
  out.bytes = closed_bytes_;
  for (const auto* p : partition_order_) {
    if (p->file) out.bytes += p->file->written;
    for (const auto& lane : p->resting) out.bytes += lane->written;
  }
  return out;
}

arrow::Status DataWriterImpl::CloseFile(Partition* partition) {
  return CloseFile(*partition, std::move(partition->file));
}

arrow::Status DataWriterImpl::CloseFile(const Partition& partition,
                                        std::unique_ptr<OpenFile> file) {
  --open_files_;
  ARROW_RETURN_NOT_OK(WaitEncoding(file.get()));
  std::shared_ptr<arrow::Table> last;
  std::vector<std::shared_ptr<arrow::RecordBatch>> pending = std::move(file->pending);
  file->pending.clear();
  if (!pending.empty()) {
    ARROW_ASSIGN_OR_RAISE(last, arrow::Table::FromRecordBatches(physical_schema_, pending));
    buffered_bytes_ -= file->pending_bytes;
    file->pending_bytes = 0;
  }
  Closing c;
  c.values = partition.values;
  OpenFile* f = file.get();
  c.file = std::move(file);
  // The last row group, the footer and the sync run beside the caller; Finish collects them.
  c.done = Launch([this, f, pending = std::move(pending), last]() -> arrow::Status {
    for (const auto& batch : pending) ARROW_RETURN_NOT_OK(f->stats->Update(*batch));
    f->stats_json = f->stats->ToJson();
    if (last) ARROW_RETURN_NOT_OK(f->writer->WriteTable(*last, parquet::DEFAULT_MAX_ROW_GROUP_LENGTH));
    ARROW_RETURN_NOT_OK(f->writer->Close());
    if (!f->sink->closed()) ARROW_RETURN_NOT_OK(f->sink->Close());
    // The commit that names this file is durable (the log store syncs it): so must the file be.
    ARROW_RETURN_NOT_OK(SyncWrittenLocalFile(*fs_, f->absolute_path, f->new_dirs));
    ARROW_ASSIGN_OR_RAISE(auto info, fs_->GetFileInfo(f->absolute_path));
    if (info.type() != arrow::fs::FileType::File) {
      return arrow::Status::IOError("data file ", f->absolute_path, " vanished after writing");
    }
    f->written = info.size();
    closed_bytes_ += info.size();
    // Keep only what the add action needs; the writer's buffers go now.
    f->writer.reset();
    f->sink.reset();
    return arrow::Status::OK();
  });
  closing_.push_back(std::move(c));
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::LimitBufferedBytes() {
  while (buffered_bytes_ > kMaxBufferedBytes) {
    Partition* largest = nullptr;
    for (auto* p : partition_order_) {
      if (p->file && p->file->pending_bytes > 0 &&
          (!largest || p->file->pending_bytes > largest->file->pending_bytes)) {
        largest = p;
      }
    }
    if (!largest) break;
    ARROW_RETURN_NOT_OK(FlushRowGroup(largest));
  }
  return arrow::Status::OK();
}

arrow::Status DataWriterImpl::MakeRoomForFile() {
  if (open_files_ < kMaxOpenFiles) return arrow::Status::OK();
  // A resting lane goes first (its partition keeps a file open); else the least recently used.
  for (auto* p : partition_order_) {
    if (p->resting.empty()) continue;
    auto lane = std::move(p->resting.back());
    p->resting.pop_back();
    return CloseFile(*p, std::move(lane));
  }
  Partition* oldest = nullptr;
  for (auto* p : partition_order_) {
    if (p->file && (!oldest || p->file->last_use < oldest->file->last_use)) oldest = p;
  }
  return oldest ? CloseFile(oldest) : arrow::Status::OK();
}

arrow::Result<std::vector<AddFile>> DataWriterImpl::Finish() {
  ARROW_RETURN_NOT_OK(CheckUsable());
  done_ = true;
  arrow::Status first;
  for (auto* p : partition_order_) {
    if (p->file) {
      auto st = CloseFile(p);
      if (first.ok() && !st.ok()) first = st;
    }
    for (auto& lane : p->resting) {
      auto st = CloseFile(*p, std::move(lane));
      if (first.ok() && !st.ok()) first = st;
    }
    p->resting.clear();
  }
  // Every close is waited for, failed or not, so no thread outlives the call.
  auto waited = WaitAll();
  ARROW_RETURN_NOT_OK(first);
  ARROW_RETURN_NOT_OK(waited);
  std::vector<std::pair<uint64_t, AddFile>> finished;
  for (auto& c : closing_) {
    AddFile add;
    add.path = UriEncodePath(c.file->relative_path);
    add.partition_values = c.values;
    add.size = c.file->written;
    add.modification_time = WallClockMillis();
    add.data_change = options_.data_change;
    add.stats = c.file->stats_json;
    finished.emplace_back(c.file->counter, std::move(add));
  }
  closing_.clear();
  std::sort(finished.begin(), finished.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<AddFile> adds;
  adds.reserve(finished.size());
  for (auto& entry : finished) adds.push_back(std::move(entry.second));
  return adds;
}

arrow::Status DataWriterImpl::Abort() {
  done_ = true;
  (void)WaitAll();
  closing_.clear();
  for (auto* p : partition_order_) {
    if (p->file) p->resting.push_back(std::move(p->file));
    for (auto& file : p->resting) {
      (void)file->writer->Close();
      if (!file->sink->closed()) (void)file->sink->Close();
    }
    p->resting.clear();
  }
  open_files_ = 0;
  buffered_bytes_ = 0;
  arrow::Status first_error;
  for (const auto& path : created_files_) {
    auto info = fs_->GetFileInfo(path);
    if (info.ok() && info->type() == arrow::fs::FileType::NotFound) continue;
    auto st = fs_->DeleteFile(path);
    if (!st.ok() && first_error.ok()) first_error = st;
  }
  created_files_.clear();
  return first_error;
}

}  // namespace

arrow::Result<std::unique_ptr<DataWriter>> DataWriter::Make(DataWriterOptions options) {
  Initialize();
  auto writer = std::make_unique<DataWriterImpl>(std::move(options));
  ARROW_RETURN_NOT_OK(writer->Init());
  return std::unique_ptr<DataWriter>(std::move(writer));
}

}  // namespace deltacpp::internal
