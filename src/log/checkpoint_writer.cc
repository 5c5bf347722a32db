#include "log/checkpoint_writer.h"
#include "util/random_uuid.h"

#include <arrow/io/interfaces.h>
#include <arrow/util/compression.h>
#include <fmt/core.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <mutex>
#include <random>
#include <set>

#include "util/clock.h"
#include "deltacpp/error.h"
#include "expr/file_stats.h"
#include "expr/physical_name.h"
#include "log/file_action_schema.h"
#include "log/log_file_name.h"
#include "log/log_segment.h"
#include "log/tombstones.h"
#include "log/typed_stats.h"
#include "protocol/partition_values.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "protocol/table_properties.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

constexpr int64_t kMsPerDay = 86'400'000;

bool IsCheckpoint(LogFileKind kind) {
  return kind == LogFileKind::kClassicCheckpoint || kind == LogFileKind::kMultiPartCheckpoint ||
         kind == LogFileKind::kUuidCheckpoint;
}

// ---------------------------------------------------------------------------------------------
// Column types (delta-spark's checkpoint schema).

const std::shared_ptr<arrow::DataType>& StringListType() {
  static const auto type = arrow::list(arrow::utf8());
  return type;
}

const std::shared_ptr<arrow::DataType>& TxnType() {
  static const auto type = arrow::struct_({arrow::field("appId", arrow::utf8()),
                                           arrow::field("version", arrow::int64()),
                                           arrow::field("lastUpdated", arrow::int64())});
  return type;
}

const std::shared_ptr<arrow::DataType>& ProtocolType() {
  static const auto type = arrow::struct_({arrow::field("minReaderVersion", arrow::int32()),
                                           arrow::field("minWriterVersion", arrow::int32()),
                                           arrow::field("readerFeatures", StringListType()),
                                           arrow::field("writerFeatures", StringListType())});
  return type;
}

const std::shared_ptr<arrow::DataType>& MetadataType() {
  static const auto type = arrow::struct_(
      {arrow::field("id", arrow::utf8()), arrow::field("name", arrow::utf8()),
       arrow::field("description", arrow::utf8()),
       arrow::field("format", arrow::struct_({arrow::field("provider", arrow::utf8()),
                                              arrow::field("options", StringMapType())})),
       arrow::field("schemaString", arrow::utf8()),
       arrow::field("partitionColumns", StringListType()),
       arrow::field("configuration", StringMapType()),
       arrow::field("createdTime", arrow::int64())});
  return type;
}

const std::shared_ptr<arrow::DataType>& DomainMetadataType() {
  static const auto type = arrow::struct_({arrow::field("domain", arrow::utf8()),
                                           arrow::field("configuration", arrow::utf8()),
                                           arrow::field("removed", arrow::boolean())});
  return type;
}

const std::shared_ptr<arrow::DataType>& CheckpointMetadataType() {
  static const auto type = arrow::struct_(
      {arrow::field("version", arrow::int64()), arrow::field("tags", StringMapType())});
  return type;
}

const std::shared_ptr<arrow::DataType>& RemoveType() {
  static const auto type = arrow::struct_({
      arrow::field("path", arrow::utf8()),
      arrow::field("deletionTimestamp", arrow::int64()),
      arrow::field("dataChange", arrow::boolean()),
      arrow::field("extendedFileMetadata", arrow::boolean()),
      arrow::field("partitionValues", StringMapType()),
      arrow::field("size", arrow::int64()),
      arrow::field("deletionVector", DeletionVectorType()),
      arrow::field("baseRowId", arrow::int64()),
      arrow::field("defaultRowCommitVersion", arrow::int64()),
  });
  return type;
}

arrow::Result<std::shared_ptr<arrow::Array>> FalseArray(int64_t length) {
  return arrow::MakeArrayFromScalar(arrow::BooleanScalar(false), length);
}

// ---------------------------------------------------------------------------------------------
// The `add` column: the snapshot's columnar files plus typed stats and partition values.

class AddColumn {
 public:
  static arrow::Result<AddColumn> Make(const Snapshot& snapshot, const arrow::RecordBatch& files) {
    AddColumn col;
    const TableConfig& config = snapshot.config();
    col.stats_json_ = config.checkpoint_write_stats_as_json;
    const bool typed = config.checkpoint_write_stats_as_struct;
    const auto& schema = snapshot.schema();
    const auto& partition_columns = snapshot.partition_columns();

    arrow::FieldVector data_fields;
    for (const auto& f : schema->fields()) {
      bool is_partition = std::find(partition_columns.begin(), partition_columns.end(),
                                    f->name()) != partition_columns.end();
      if (!is_partition) data_fields.push_back(f);
    }
    for (const auto& name : partition_columns) {
      auto field = schema->GetFieldByName(name);
      if (!field) {
        // Partition columns are matched case-insensitively when no exact match exists.
        for (const auto& f : schema->fields()) {
          if (AsciiLower(f->name()) == AsciiLower(name)) field = f;
        }
      }
      if (!field) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("table {} version {}: partition column '{}' is not in the "
                                      "schema",
                                      snapshot.table_root(), snapshot.version(), name));
      }
      col.partitions_.push_back({PhysicalFieldName(*field), field->type()});
    }
    col.data_schema_ = arrow::schema(data_fields);

    arrow::FieldVector fields;
    for (const auto& f : FileActionSchema()->fields()) {
      if (f->name() == "stats" && !col.stats_json_) continue;
      fields.push_back(f);
    }
    if (typed && !col.partitions_.empty()) {
      arrow::FieldVector pv;
      for (const auto& p : col.partitions_) pv.push_back(arrow::field(p.physical_name, p.type));
      col.partition_values_parsed_ = arrow::struct_(pv);
      fields.push_back(arrow::field("partitionValues_parsed", col.partition_values_parsed_));
    }
    if (typed) {
      ARROW_RETURN_NOT_OK(col.MakeStatsType(files));
      fields.push_back(arrow::field("stats_parsed", col.stats_parsed_));
    }
    col.type_ = arrow::struct_(fields);
    return col;
  }

  const std::shared_ptr<arrow::DataType>& type() const { return type_; }

  /// The add struct for rows [offset, offset + length) of `files` (FileActionSchema layout).
  arrow::Result<std::shared_ptr<arrow::Array>> Build(const arrow::RecordBatch& files,
                                                     int64_t offset, int64_t length) const {
    std::vector<std::shared_ptr<arrow::Array>> children;
    for (int c = 0; c < kNumFileActionColumns; ++c) {
      if (c == kStatsCol && !stats_json_) continue;
      if (c == kDataChangeCol) {
        ARROW_ASSIGN_OR_RAISE(auto no_change, FalseArray(length));
        children.push_back(std::move(no_change));
        continue;
      }
      children.push_back(files.column(c)->Slice(offset, length));
    }
    if (partition_values_parsed_) {
      ARROW_ASSIGN_OR_RAISE(auto pv, BuildPartitionValues(files, offset, length));
      children.push_back(std::move(pv));
    }
    if (stats_parsed_) {
      ARROW_ASSIGN_OR_RAISE(auto stats, BuildStats(files, offset, length));
      children.push_back(std::move(stats));
    }
    return std::make_shared<arrow::StructArray>(type_, length, std::move(children));
  }

 private:
  struct PartitionField {
    std::string physical_name;
    std::shared_ptr<arrow::DataType> type;
  };

  // Statistics of row `i`, or nullopt when it has none (or unreadable ones: the JSON text is
  // still carried in `stats`, only the typed copy is left out).
  std::optional<FileStats> StatsAt(const arrow::StringArray& stats, int64_t i) const {
    if (stats.IsNull(i)) return std::nullopt;
    auto parsed = ParseStatsJson(stats.GetView(i), *data_schema_);
    if (!parsed.ok()) return std::nullopt;
    return std::move(*parsed);
  }

  // Types stats_parsed from the statistics actually present in the files.
  arrow::Status MakeStatsType(const arrow::RecordBatch& files) {
    std::set<std::string> with_bounds, with_counts;
    const auto& stats = static_cast<const arrow::StringArray&>(*files.column(kStatsCol));
    for (int64_t i = 0; i < files.num_rows(); ++i) {
      auto parsed = StatsAt(stats, i);
      if (!parsed) continue;
      for (const auto& [key, column] : parsed->columns) {
        if (column.min || column.max) with_bounds.insert(key);
        if (column.null_count) with_counts.insert(key);
      }
    }
    arrow::FieldVector fields = {arrow::field("numRecords", arrow::int64())};
    auto bounds = StatsFields(data_schema_->fields(), "", &with_bounds, false);
    auto counts = StatsFields(data_schema_->fields(), "", &with_counts, true);
    if (!bounds.empty()) {
      min_index_ = static_cast<int>(fields.size());
      fields.push_back(arrow::field("minValues", arrow::struct_(bounds)));
      max_index_ = static_cast<int>(fields.size());
      fields.push_back(arrow::field("maxValues", arrow::struct_(bounds)));
    }
    if (!counts.empty()) {
      null_count_index_ = static_cast<int>(fields.size());
      fields.push_back(arrow::field("nullCount", arrow::struct_(counts)));
    }
    tight_bounds_index_ = static_cast<int>(fields.size());
    fields.push_back(arrow::field("tightBounds", arrow::boolean()));
    stats_parsed_ = arrow::struct_(fields);
    return arrow::Status::OK();
  }

  arrow::Result<std::shared_ptr<arrow::Array>> BuildStats(const arrow::RecordBatch& files,
                                                          int64_t offset, int64_t length) const {
    std::unique_ptr<arrow::ArrayBuilder> raw;
    ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), stats_parsed_, &raw));
    auto* builder = static_cast<arrow::StructBuilder*>(raw.get());
    ARROW_RETURN_NOT_OK(builder->Reserve(length));
    const auto& type = static_cast<const arrow::StructType&>(*stats_parsed_);
    const auto& stats = static_cast<const arrow::StringArray&>(*files.column(kStatsCol));
    for (int64_t i = offset; i < offset + length; ++i) {
      auto parsed = StatsAt(stats, i);
      if (!parsed) {
        ARROW_RETURN_NOT_OK(builder->AppendNull());
        continue;
      }
      ARROW_RETURN_NOT_OK(builder->Append());
      auto* num_records = static_cast<arrow::Int64Builder*>(builder->field_builder(0));
      ARROW_RETURN_NOT_OK(parsed->num_records ? num_records->Append(*parsed->num_records)
                                              : num_records->AppendNull());
      const std::pair<int, StatKind> parts[] = {{min_index_, StatKind::kMin},
                                                {max_index_, StatKind::kMax},
                                                {null_count_index_, StatKind::kNullCount}};
      for (const auto& [index, kind] : parts) {
        if (index < 0) continue;
        ARROW_RETURN_NOT_OK(
            FillStats(static_cast<arrow::StructBuilder*>(builder->field_builder(index)),
                      static_cast<const arrow::StructType&>(*type.field(index)->type()), "",
                      *parsed, kind));
      }
      auto* tight = static_cast<arrow::BooleanBuilder*>(builder->field_builder(tight_bounds_index_));
      ARROW_RETURN_NOT_OK(parsed->tight_bounds ? tight->Append(*parsed->tight_bounds)
                                               : tight->AppendNull());
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder->Finish(&out));
    return out;
  }

  arrow::Result<std::shared_ptr<arrow::Array>> BuildPartitionValues(const arrow::RecordBatch& files,
                                                                    int64_t offset,
                                                                    int64_t length) const {
    std::unique_ptr<arrow::ArrayBuilder> raw;
    ARROW_RETURN_NOT_OK(
        arrow::MakeBuilder(arrow::default_memory_pool(), partition_values_parsed_, &raw));
    auto* builder = static_cast<arrow::StructBuilder*>(raw.get());
    ARROW_RETURN_NOT_OK(builder->Reserve(length));
    const auto& maps = static_cast<const arrow::MapArray&>(*files.column(kPartitionValuesCol));
    const auto& keys = static_cast<const arrow::StringArray&>(*maps.keys());
    const auto& items = static_cast<const arrow::StringArray&>(*maps.items());
    const auto& paths = static_cast<const arrow::StringArray&>(*files.column(kPathCol));
    for (int64_t i = offset; i < offset + length; ++i) {
      ARROW_RETURN_NOT_OK(builder->Append());
      for (size_t p = 0; p < partitions_.size(); ++p) {
        std::optional<std::string_view> raw_value;
        if (maps.IsValid(i)) {
          for (int64_t j = maps.value_offset(i); j < maps.value_offset(i + 1); ++j) {
            if (keys.GetView(j) == partitions_[p].physical_name) {
              if (items.IsValid(j)) raw_value = items.GetView(j);
              break;
            }
          }
        }
        arrow::ArrayBuilder* child = builder->field_builder(static_cast<int>(p));
        auto scalar = ParsePartitionValue(raw_value, partitions_[p].type);
        if (!scalar.ok()) {
          return arrow::Status(scalar.status().code(),
                               fmt::format("file {}: partition column {}: {}", paths.GetView(i),
                                           partitions_[p].physical_name,
                                           scalar.status().message()),
                               scalar.status().detail());
        }
        if ((*scalar)->is_valid) {
          ARROW_RETURN_NOT_OK(child->AppendScalar(**scalar));
        } else {
          ARROW_RETURN_NOT_OK(child->AppendNull());
        }
      }
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder->Finish(&out));
    return out;
  }

  bool stats_json_ = true;
  std::shared_ptr<arrow::Schema> data_schema_;  // logical schema without partition columns
  std::vector<PartitionField> partitions_;
  std::shared_ptr<arrow::DataType> partition_values_parsed_;  // null when not written
  std::shared_ptr<arrow::DataType> stats_parsed_;             // null when not written
  int min_index_ = -1, max_index_ = -1, null_count_index_ = -1, tight_bounds_index_ = -1;
  std::shared_ptr<arrow::DataType> type_;
};

// The `remove` struct for rows [offset, offset + length) of `tombstones` (ReplayBatchSchema).
arrow::Result<std::shared_ptr<arrow::Array>> BuildRemoves(const arrow::RecordBatch& tombstones,
                                                          int64_t offset, int64_t length) {
  auto slice = [&](int c) { return tombstones.column(c)->Slice(offset, length); };
  ARROW_ASSIGN_OR_RAISE(auto no_change, FalseArray(length));
  const auto& sizes = *tombstones.column(kSizeCol);
  arrow::BooleanBuilder extended;
  ARROW_RETURN_NOT_OK(extended.Reserve(length));
  for (int64_t i = offset; i < offset + length; ++i) extended.UnsafeAppend(sizes.IsValid(i));
  ARROW_ASSIGN_OR_RAISE(auto extended_array, extended.Finish());
  std::vector<std::shared_ptr<arrow::Array>> children = {
      slice(kPathCol),          slice(kNumFileActionColumns + 1),  // deletionTimestamp
      no_change,                extended_array,
      slice(kPartitionValuesCol), slice(kSizeCol),
      slice(kDeletionVectorCol), slice(kBaseRowIdCol),
      slice(kDefaultRowCommitVersionCol)};
  return std::make_shared<arrow::StructArray>(RemoveType(), length, std::move(children));
}

// ---------------------------------------------------------------------------------------------
// Non-file actions, appended row by row.

arrow::Status AppendOptString(arrow::ArrayBuilder* b, const std::optional<std::string>& v) {
  auto* s = static_cast<arrow::StringBuilder*>(b);
  return v ? s->Append(*v) : s->AppendNull();
}

arrow::Status AppendOptInt64(arrow::ArrayBuilder* b, std::optional<int64_t> v) {
  auto* i = static_cast<arrow::Int64Builder*>(b);
  return v ? i->Append(*v) : i->AppendNull();
}

arrow::Status AppendStringList(arrow::ArrayBuilder* b,
                               const std::optional<std::vector<std::string>>& v) {
  auto* list = static_cast<arrow::ListBuilder*>(b);
  if (!v) return list->AppendNull();
  ARROW_RETURN_NOT_OK(list->Append());
  auto* values = static_cast<arrow::StringBuilder*>(list->value_builder());
  for (const auto& s : *v) ARROW_RETURN_NOT_OK(values->Append(s));
  return arrow::Status::OK();
}

arrow::Status AppendStringMap(arrow::ArrayBuilder* b,
                              const std::map<std::string, std::string>* v) {
  auto* map = static_cast<arrow::MapBuilder*>(b);
  if (!v) return map->AppendNull();
  ARROW_RETURN_NOT_OK(map->Append());
  auto* keys = static_cast<arrow::StringBuilder*>(map->key_builder());
  auto* items = static_cast<arrow::StringBuilder*>(map->item_builder());
  for (const auto& [k, value] : *v) {
    ARROW_RETURN_NOT_OK(keys->Append(k));
    ARROW_RETURN_NOT_OK(items->Append(value));
  }
  return arrow::Status::OK();
}

arrow::Status AppendProtocol(arrow::StructBuilder* b, const Protocol& p) {
  ARROW_RETURN_NOT_OK(b->Append());
  ARROW_RETURN_NOT_OK(
      static_cast<arrow::Int32Builder*>(b->field_builder(0))->Append(p.min_reader_version));
  ARROW_RETURN_NOT_OK(
      static_cast<arrow::Int32Builder*>(b->field_builder(1))->Append(p.min_writer_version));
  // Feature lists exist exactly for the table-features protocol versions.
  std::optional<std::vector<std::string>> readers, writers;
  if (p.min_reader_version == 3) readers = p.reader_features.value_or(std::vector<std::string>{});
  if (p.min_writer_version == 7) writers = p.writer_features.value_or(std::vector<std::string>{});
  ARROW_RETURN_NOT_OK(AppendStringList(b->field_builder(2), readers));
  return AppendStringList(b->field_builder(3), writers);
}

arrow::Status AppendMetadata(arrow::StructBuilder* b, const Metadata& m) {
  ARROW_RETURN_NOT_OK(b->Append());
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(0), m.id));
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(1), m.name));
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(2), m.description));
  auto* format = static_cast<arrow::StructBuilder*>(b->field_builder(3));
  ARROW_RETURN_NOT_OK(format->Append());
  ARROW_RETURN_NOT_OK(AppendOptString(format->field_builder(0), m.format_provider));
  ARROW_RETURN_NOT_OK(AppendStringMap(format->field_builder(1), &m.format_options));
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(4), m.schema_string));
  ARROW_RETURN_NOT_OK(AppendStringList(b->field_builder(5), m.partition_columns));
  ARROW_RETURN_NOT_OK(AppendStringMap(b->field_builder(6), &m.configuration));
  return AppendOptInt64(b->field_builder(7), m.created_time);
}

arrow::Status AppendTxn(arrow::StructBuilder* b, const Txn& t) {
  ARROW_RETURN_NOT_OK(b->Append());
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(0), t.app_id));
  ARROW_RETURN_NOT_OK(AppendOptInt64(b->field_builder(1), t.version));
  return AppendOptInt64(b->field_builder(2), t.last_updated);
}

arrow::Status AppendDomain(arrow::StructBuilder* b, const DomainMetadata& d) {
  ARROW_RETURN_NOT_OK(b->Append());
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(0), d.domain));
  ARROW_RETURN_NOT_OK(AppendOptString(b->field_builder(1), d.configuration));
  return static_cast<arrow::BooleanBuilder*>(b->field_builder(2))->Append(false);
}

arrow::Status AppendCheckpointMetadata(arrow::StructBuilder* b, int64_t version) {
  ARROW_RETURN_NOT_OK(b->Append());
  ARROW_RETURN_NOT_OK(AppendOptInt64(b->field_builder(0), version));
  return AppendStringMap(b->field_builder(1), nullptr);
}

// ---------------------------------------------------------------------------------------------
// The checkpoint file: schema, batches and encoding.

class CheckpointEncoder {
 public:
  CheckpointEncoder(const AddColumn& add, bool with_domains, bool v2, int64_t max_rows)
      : add_(add), max_rows_(max_rows) {
    arrow::FieldVector fields = {
        arrow::field("txn", TxnType()),          arrow::field("add", add.type()),
        arrow::field("remove", RemoveType()),    arrow::field("metaData", MetadataType()),
        arrow::field("protocol", ProtocolType()),
    };
    if (with_domains) fields.push_back(arrow::field("domainMetadata", DomainMetadataType()));
    if (v2) fields.push_back(arrow::field("checkpointMetadata", CheckpointMetadataType()));
    schema_ = arrow::schema(fields);
  }

  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }

  /// Starts the Parquet file in `sink`, which must stay open until Finish().
  arrow::Status Open(std::shared_ptr<arrow::io::OutputStream> sink) {
    sink_ = std::move(sink);
    parquet::WriterProperties::Builder props;
    props.compression(arrow::util::Codec::IsAvailable(arrow::Compression::SNAPPY)
                          ? arrow::Compression::SNAPPY
                          : arrow::Compression::UNCOMPRESSED);
    props.max_row_group_length(max_rows_);
    props.created_by("deltacpp");
    ARROW_ASSIGN_OR_RAISE(writer_, parquet::arrow::FileWriter::Open(
                                       *schema_, arrow::default_memory_pool(), sink_,
                                       props.build(), parquet::default_arrow_writer_properties()));
    return arrow::Status::OK();
  }

  /// One batch of protocol, metaData, txns, domains (and checkpointMetadata first for V2).
  arrow::Status WriteNonFileActions(const Snapshot& snapshot, const std::vector<Txn>& txns,
                                    bool v2) {
    std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders(schema_->num_fields());
    for (int c = 0; c < schema_->num_fields(); ++c) {
      const auto& name = schema_->field(c)->name();
      if (name == "add" || name == "remove") continue;
      ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(),
                                             schema_->field(c)->type(), &builders[c]));
    }
    int64_t rows = 0;
    // Appends one row: `fill` writes the column named `column`, every other column gets null.
    auto row = [&](const std::string& column, auto&& fill) -> arrow::Status {
      for (int c = 0; c < schema_->num_fields(); ++c) {
        if (!builders[c]) continue;
        auto* b = static_cast<arrow::StructBuilder*>(builders[c].get());
        if (schema_->field(c)->name() == column) {
          ARROW_RETURN_NOT_OK(fill(b));
        } else {
          ARROW_RETURN_NOT_OK(b->AppendNull());
        }
      }
      ++rows;
      return arrow::Status::OK();
    };
    if (v2) {
      ARROW_RETURN_NOT_OK(row("checkpointMetadata", [&](arrow::StructBuilder* b) {
        return AppendCheckpointMetadata(b, snapshot.version());
      }));
    }
    ARROW_RETURN_NOT_OK(row("protocol", [&](arrow::StructBuilder* b) {
      return AppendProtocol(b, snapshot.protocol());
    }));
    ARROW_RETURN_NOT_OK(row("metaData", [&](arrow::StructBuilder* b) {
      return AppendMetadata(b, snapshot.metadata());
    }));
    for (const auto& t : txns) {
      ARROW_RETURN_NOT_OK(row("txn", [&](arrow::StructBuilder* b) { return AppendTxn(b, t); }));
    }
    for (const auto& entry : snapshot.domain_metadata()) {
      const DomainMetadata& domain = entry.second;
      if (domain.removed) continue;
      ARROW_RETURN_NOT_OK(
          row("domainMetadata", [&](arrow::StructBuilder* b) { return AppendDomain(b, domain); }));
    }
    std::vector<std::shared_ptr<arrow::Array>> columns(schema_->num_fields());
    for (int c = 0; c < schema_->num_fields(); ++c) {
      if (builders[c]) {
        ARROW_RETURN_NOT_OK(builders[c]->Finish(&columns[c]));
      } else {
        ARROW_ASSIGN_OR_RAISE(columns[c], arrow::MakeArrayOfNull(schema_->field(c)->type(), rows));
      }
    }
    return Write(arrow::RecordBatch::Make(schema_, rows, std::move(columns)));
  }

  /// The rows of `files` (live adds) in batches of at most max_rows.
  arrow::Status WriteAdds(const arrow::RecordBatch& files) {
    for (int64_t offset = 0; offset < files.num_rows(); offset += max_rows_) {
      const int64_t length = std::min(max_rows_, files.num_rows() - offset);
      ARROW_ASSIGN_OR_RAISE(auto adds, add_.Build(files, offset, length));
      ARROW_RETURN_NOT_OK(WriteFileBatch("add", std::move(adds), length));
    }
    return arrow::Status::OK();
  }

  /// The rows of `tombstones` in batches of at most max_rows.
  arrow::Status WriteRemoves(const arrow::RecordBatch& tombstones) {
    for (int64_t offset = 0; offset < tombstones.num_rows(); offset += max_rows_) {
      const int64_t length = std::min(max_rows_, tombstones.num_rows() - offset);
      ARROW_ASSIGN_OR_RAISE(auto removes, BuildRemoves(tombstones, offset, length));
      ARROW_RETURN_NOT_OK(WriteFileBatch("remove", std::move(removes), length));
    }
    return arrow::Status::OK();
  }

  /// Writes the footer and lets go of the sink (without closing it); returns the file's size.
  arrow::Result<int64_t> Finish() {
    ARROW_RETURN_NOT_OK(writer_->Close());
    ARROW_ASSIGN_OR_RAISE(int64_t size, sink_->Tell());
    writer_.reset();
    sink_.reset();
    return size;
  }

  int64_t num_rows() const { return num_rows_; }

 private:
  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
    if (batch->num_rows() == 0) return arrow::Status::OK();
    num_rows_ += batch->num_rows();
    return writer_->WriteRecordBatch(*batch);
  }

  // A batch whose column `column` holds `values` and whose other columns are null.
  arrow::Status WriteFileBatch(const std::string& column, std::shared_ptr<arrow::Array> values,
                               int64_t length) {
    std::vector<std::shared_ptr<arrow::Array>> columns(schema_->num_fields());
    for (int c = 0; c < schema_->num_fields(); ++c) {
      if (schema_->field(c)->name() == column) {
        columns[c] = values;
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(columns[c], NullColumn(c, length));
    }
    return Write(arrow::RecordBatch::Make(schema_, length, std::move(columns)));
  }

  // All-null column `c` of `length` rows, sliced from one array made once per column.
  arrow::Result<std::shared_ptr<arrow::Array>> NullColumn(int c, int64_t length) {
    if (null_columns_.empty()) null_columns_.resize(schema_->num_fields());
    auto& cached = null_columns_[c];
    if (!cached || cached->length() < length) {
      ARROW_ASSIGN_OR_RAISE(cached, arrow::MakeArrayOfNull(schema_->field(c)->type(),
                                                           std::max(length, max_rows_)));
    }
    return cached->Slice(0, length);
  }

  const AddColumn& add_;
  int64_t max_rows_;
  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::io::OutputStream> sink_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  std::vector<std::shared_ptr<arrow::Array>> null_columns_;
  int64_t num_rows_ = 0;
};

// The version `_last_checkpoint` names, if it is readable.
std::optional<int64_t> LastCheckpointVersion(LogStore& store, const std::string& path) {
  auto buffer = store.Read(path);
  if (!buffer.ok()) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::padded_string padded((*buffer)->data_as<char>(), static_cast<size_t>((*buffer)->size()));
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc)) return std::nullopt;
  int64_t version = 0;
  if (doc["version"].get_int64().get(version)) return std::nullopt;
  return version;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Checkpoints

arrow::Status WriteCheckpoint(const Snapshot& snapshot) {
  return WriteCheckpoint(snapshot, CheckpointOptions{}).status();
}

arrow::Result<CheckpointWriteResult> WriteCheckpoint(const Snapshot& snapshot,
                                                     const CheckpointOptions& options) {
  if (options.max_rows_per_row_group < 1) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "checkpoint max_rows_per_row_group must be at least 1");
  }
  if (!snapshot.store()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "checkpoint of a snapshot without a store");
  }
  LogStore& store = *snapshot.store();
  const std::string& root = snapshot.table_root();
  const int64_t version = snapshot.version();
  const std::string log_dir = LogDir(root);
  const TableConfig& config = snapshot.config();
  const int64_t now = options.now_ms.value_or(WallClockMillis());
  // What a checkpoint holds depends on these: refuse rather than guess at a malformed one.
  const std::string context = fmt::format("table {} version {}: checkpoint", root, version);
  for (const char* key :
       {"delta.deletedFileRetentionDuration", "delta.setTransactionRetentionDuration",
        "delta.checkpointPolicy", "delta.checkpoint.writeStatsAsJson",
        "delta.checkpoint.writeStatsAsStruct"}) {
    ARROW_RETURN_NOT_OK(config.CheckValid(key, context));
  }
  const int64_t tombstone_retention = config.deleted_file_retention_ms;
  std::vector<Txn> txns;
  {
    std::optional<int64_t> txn_cutoff;
    if (config.set_transaction_retention_ms) {
      txn_cutoff = now - *config.set_transaction_retention_ms;
    }
    for (const auto& [app, txn] : snapshot.txns()) {
      if (txn_cutoff && (!txn.last_updated || *txn.last_updated <= *txn_cutoff)) continue;
      txns.push_back(txn);
    }
  }

  // A checkpoint of this version already there (any format) makes this one redundant; checking
  // first also keeps UUID-named checkpoints, which never collide by name, from piling up.
  CheckpointWriteResult result;
  {
    ARROW_ASSIGN_OR_RAISE(auto listed, ListLogFiles(store, root, VersionPrefix(version)));
    for (const auto& f : listed) {
      if (f.name.version == version && IsCheckpoint(f.name.kind) && f.entry.size > 0) {
        return result;
      }
    }
  }

  const auto features = EffectiveFeatures(snapshot.protocol());
  const bool v2 =
      std::find(features.begin(), features.end(), "v2Checkpoint") != features.end() &&
      config.checkpoint_policy == CheckpointPolicy::kV2;

  ARROW_ASSIGN_OR_RAISE(auto segment, BuildLogSegment(store, root, version));
  ARROW_ASSIGN_OR_RAISE(auto tombstones,
                        LoadTombstones(store, segment, now - tombstone_retention));
  // A checkpoint holds every live file: one batch of them is what it encodes.
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::RecordBatch> files,
                        snapshot.live_files().ToBatch());
  ARROW_ASSIGN_OR_RAISE(auto add_column, AddColumn::Make(snapshot, *files));
  const bool with_domains = std::any_of(snapshot.domain_metadata().begin(),
                                        snapshot.domain_metadata().end(),
                                        [](const auto& d) { return !d.second.removed; });

  const std::string name = v2 ? fmt::format("{}.checkpoint.{}.parquet", VersionPrefix(version),
                                            RandomUuidV4())
                              : VersionPrefix(version) + ".checkpoint.parquet";
  const std::string path = log_dir + "/" + name;
  // Row groups go to the store's stream as they are encoded, so memory holds at most one row
  // group and its batch, whatever the size of the file.
  int64_t num_rows = 0;
  int64_t size_in_bytes = 0;
  auto encode = [&](const std::shared_ptr<arrow::io::OutputStream>& out) -> arrow::Status {
    CheckpointEncoder encoder(add_column, with_domains, v2, options.max_rows_per_row_group);
    try {
      ARROW_RETURN_NOT_OK(encoder.Open(out));
      ARROW_RETURN_NOT_OK(encoder.WriteNonFileActions(snapshot, txns, v2));
      ARROW_RETURN_NOT_OK(encoder.WriteAdds(*files));
      ARROW_RETURN_NOT_OK(encoder.WriteRemoves(*tombstones));
      ARROW_ASSIGN_OR_RAISE(size_in_bytes, encoder.Finish());
    } catch (const parquet::ParquetException& e) {
      return arrow::Status::IOError(
          fmt::format("table {}: cannot encode the checkpoint of version {} into {}: {}", root,
                      version, path, e.what()));
    }
    num_rows = encoder.num_rows();
    return arrow::Status::OK();
  };
  arrow::Status put = store.PutIfAbsentStreaming(path, encode);
  if (IsDeltaError(put, DeltaErrorCode::kVersionExists)) return result;  // lost a race
  ARROW_RETURN_NOT_OK(put);

  result.written = true;
  result.path = path;
  result.num_rows = num_rows;
  result.size_in_bytes = size_in_bytes;
  result.num_adds = files->num_rows();
  result.num_removes = tombstones->num_rows();
  result.v2 = v2;

  // The hint only ever moves forward: a checkpoint of an older version leaves it alone.
  const std::string hint_path = log_dir + "/_last_checkpoint";
  auto hinted = LastCheckpointVersion(store, hint_path);
  if (!hinted || *hinted <= version) {
    ARROW_RETURN_NOT_OK(store.PutReplace(
        hint_path, fmt::format(R"({{"version":{},"size":{},"sizeInBytes":{},"numOfAddFiles":{}}})",
                               version, result.num_rows, result.size_in_bytes, result.num_adds)));
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Log cleanup

arrow::Status CleanupExpiredLogs(const Snapshot& snapshot, int64_t now_ms) {
  const TableConfig& config = snapshot.config();
  const std::string context =
      fmt::format("table {} version {}: log cleanup", snapshot.table_root(), snapshot.version());
  ARROW_RETURN_NOT_OK(config.CheckValid("delta.enableExpiredLogCleanup", context));
  if (!config.enable_expired_log_cleanup) return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(config.CheckValid("delta.logRetentionDuration", context));
  const int64_t retention = config.log_retention_ms;
  if (!snapshot.store()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "log cleanup of a snapshot without a store");
  }
  LogStore& store = *snapshot.store();
  // Whole days, as delta-spark does: files of the cutoff day itself are kept.
  int64_t cutoff = now_ms - retention;
  cutoff = (cutoff >= 0 ? cutoff / kMsPerDay : -((-cutoff + kMsPerDay - 1) / kMsPerDay)) * kMsPerDay;
  auto expired = [cutoff](const LogFile& f) { return f.entry.modification_time_ms < cutoff; };

  // Temporary files of commits, checkpoints and sidecars whose writer was killed mid-put: none
  // that old can still be in flight.
  for (const std::string& dir : {LogDir(snapshot.table_root()),
                                 LogDir(snapshot.table_root()) + "/_sidecars"}) {
    ARROW_ASSIGN_OR_RAISE(auto temporary, store.ListTemporaryFiles(dir));
    for (const auto& f : temporary) {
      if (f.modification_time_ms < cutoff) ARROW_RETURN_NOT_OK(store.Delete(f.path));
    }
  }

  // Deletion goes oldest version first and stops at the first version with a file that has not
  // expired. So when a file of the oldest version is still young there is nothing to delete, and
  // the names plus a stat or two show it without stat'ing every file of a long log.
  {
    const std::string log_dir = LogDir(snapshot.table_root());
    ARROW_ASSIGN_OR_RAISE(auto names, store.ListNames(log_dir));
    std::optional<int64_t> oldest;
    bool young = false;
    for (const auto& name : names) {
      auto parsed = ParseLogFileName(name);
      if (!parsed || !(parsed->kind == LogFileKind::kCommit ||
                       parsed->kind == LogFileKind::kChecksum || IsCheckpoint(parsed->kind))) {
        continue;
      }
      if (oldest && parsed->version != *oldest) break;  // names sort by version
      oldest = parsed->version;
      auto entry = store.Stat(log_dir + "/" + name);
      if (entry.ok() && entry->modification_time_ms >= cutoff) young = true;
    }
    if (young) return arrow::Status::OK();
  }

  ARROW_ASSIGN_OR_RAISE(auto files, ListLogFiles(store, snapshot.table_root()));

  // The anchor: the newest complete, expired checkpoint at or below the snapshot's version.
  std::optional<int64_t> anchor;
  {
    std::map<std::pair<int64_t, int32_t>, std::vector<const LogFile*>> multi_part;
    auto consider = [&](int64_t version) {
      if (version <= snapshot.version() && (!anchor || version > *anchor)) anchor = version;
    };
    for (const auto& f : files) {
      if (f.name.kind == LogFileKind::kClassicCheckpoint ||
          f.name.kind == LogFileKind::kUuidCheckpoint) {
        if (f.entry.size > 0 && expired(f)) consider(f.name.version);
      } else if (f.name.kind == LogFileKind::kMultiPartCheckpoint) {
        multi_part[{f.name.version, f.name.num_parts}].push_back(&f);
      }
    }
    for (const auto& [key, parts] : multi_part) {
      std::set<int32_t> seen;
      bool usable = true;
      for (const LogFile* p : parts) {
        usable &= p->entry.size > 0 && expired(*p) && p->name.part >= 1 &&
                  p->name.part <= key.second;
        seen.insert(p->name.part);
      }
      if (usable && static_cast<int32_t>(seen.size()) == key.second) consider(key.first);
    }
  }
  if (!anchor) return arrow::Status::OK();

  // Oldest first, version by version, while everything of the version is expired.
  std::map<int64_t, std::vector<const LogFile*>> by_version;
  for (const auto& f : files) {
    if (f.name.version >= *anchor) continue;
    if (f.name.kind == LogFileKind::kCommit || f.name.kind == LogFileKind::kChecksum ||
        IsCheckpoint(f.name.kind)) {
      by_version[f.name.version].push_back(&f);
    }
  }
  int64_t kept_from = *anchor;
  for (const auto& [version, group] : by_version) {
    if (!std::all_of(group.begin(), group.end(), [&](const LogFile* f) { return expired(*f); })) {
      kept_from = version;
      break;
    }
    for (const LogFile* f : group) ARROW_RETURN_NOT_OK(store.Delete(f->entry.path));
  }
  for (const auto& f : files) {
    if (f.name.kind == LogFileKind::kCompaction && f.name.end_version < kept_from && expired(f)) {
      ARROW_RETURN_NOT_OK(store.Delete(f.entry.path));
    }
  }
  return arrow::Status::OK();
}

}  // namespace deltacpp::internal
