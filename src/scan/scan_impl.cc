// Scan planning (projection, partition pruning, statistics skipping) and parallel execution.
#include <arrow/compute/api.h>
#include <arrow/util/thread_pool.h>
#include <fmt/core.h>

#include <set>

#include "deltacpp/api.h"
#include "expr/binder.h"
#include "expr/bound_expr.h"
#include "expr/data_skipping.h"
#include "expr/file_stats.h"
#include "expr/parser.h"
#include "expr/physical_name.h"
#include "expr/to_arrow.h"
#include "log/file_action_schema.h"
#include "log/typed_stats.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "scan/data_file_reader.h"
#include "scan/ordered_task_reader.h"
#include "scan/stats_prefilter.h"
#include "util/uri.h"

namespace deltacpp {

using namespace internal;  // NOLINT: the scan is glue over the internal layers

namespace {


// The metadata column `name` spells: `_metadata.file_path` / `_metadata.row_index`, and without
// the prefix when `short_ok`.
MetadataColumn MetadataColumnNamed(std::string_view name, bool short_ok) {
  for (auto [full, column] : {std::pair{kMetadataFilePath, MetadataColumn::kFilePath},
                              std::pair{kMetadataRowIndex, MetadataColumn::kRowIndex}}) {
    const std::string_view text(full);
    if (EqualsIgnoreCase(name, text)) return column;
    if (short_ok && EqualsIgnoreCase(name, text.substr(text.find('.') + 1))) return column;
  }
  return MetadataColumn::kNone;
}

std::shared_ptr<arrow::Field> MetadataField(MetadataColumn column) {
  if (column == MetadataColumn::kFilePath) {
    return arrow::field(kMetadataFilePath, arrow::utf8(), /*nullable=*/false);
  }
  return arrow::field(kMetadataRowIndex, arrow::int64(), /*nullable=*/false);
}

// Physical dot-joined path (the key of FileStats::columns) -> logical dot-joined path, for
// `field` and the struct fields below it.
void MapStatsNames(const arrow::Field& field, const std::string& physical,
                   const std::string& logical, std::map<std::string, std::string>* out) {
  const std::string p = physical.empty() ? PhysicalFieldName(field)
                                         : physical + "." + PhysicalFieldName(field);
  const std::string l = logical.empty() ? field.name() : logical + "." + field.name();
  (*out)[p] = l;
  if (field.type()->id() != arrow::Type::STRUCT) return;
  for (const auto& child : field.type()->fields()) MapStatsNames(*child, p, l, out);
}

struct PlannedFile {
  FileTask task;
  ScanFile info;
  bool stats_parsed = false;  ///< info holds numRecords/tightBounds from planning
};

class ScanImpl : public Scan, public std::enable_shared_from_this<ScanImpl> {
 public:
  ScanImpl(std::shared_ptr<const Snapshot> snapshot, FileReadPlan plan,
           std::vector<PlannedFile> files, int64_t skipped, int parallelism)
      : snapshot_(std::move(snapshot)),
        plan_(std::make_shared<FileReadPlan>(std::move(plan))),
        files_(std::move(files)),
        skipped_(skipped),
        parallelism_(parallelism) {}

  const std::shared_ptr<arrow::Schema>& schema() const override { return plan_->output_schema; }

  std::vector<ScanFile> files() const override {
    std::vector<ScanFile> out;
    out.reserve(files_.size());
    const auto no_columns = arrow::schema(arrow::FieldVector{});
    const LiveFiles& live = snapshot_->live_files();
    for (const auto& f : files_) {
      out.push_back(f.info);
      // Planning reads stats only where the filter needs them; the rest are read here, for
      // the callers that ask, rather than slowing down every plain scan.
      if (f.stats_parsed) continue;
      const auto& stats =
          static_cast<const arrow::StringArray&>(*live.actions(f.info.file_ref).column(kStatsCol));
      if (!stats.IsValid(f.info.file_ref.row)) continue;
      auto parsed = ParseStatsJson(stats.GetView(f.info.file_ref.row), *no_columns);
      if (!parsed.ok()) continue;
      out.back().num_records = parsed->num_records;
      out.back().tight_bounds = parsed->tight_bounds;
    }
    return out;
  }

  int64_t num_skipped_files() const override { return skipped_; }

  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Execute() const override;

 private:
  std::shared_ptr<const Snapshot> snapshot_;
  std::shared_ptr<FileReadPlan> plan_;
  std::vector<PlannedFile> files_;
  int64_t skipped_;
  int parallelism_;
};

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ScanImpl::Execute() const {
  std::shared_ptr<const ScanImpl> self = shared_from_this();
  auto fs = snapshot_->store()->filesystem();
  // Files are read a bounded number ahead; their batches come out in file order.
  return std::make_shared<OrderedTaskReader>(
      plan_->output_schema, files_.size(), parallelism_,
      [self, fs](size_t i) { return ReadDataFile(*self->plan_, self->files_[i].task, *fs); });
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> Scan::ToTable() const {
  ARROW_ASSIGN_OR_RAISE(auto reader, Execute());
  return reader->ToTable();
}

ScanBuilder Snapshot::NewScan() const { return ScanBuilder(shared_from_this()); }

arrow::Result<std::shared_ptr<Scan>> ScanBuilder::Build() const {
  Initialize();
  const Snapshot& snap = *snapshot_;
  const auto& logical = snap.schema();
  const std::string where = fmt::format("table {} version {}", snap.table_root(), snap.version());

  // Partition columns in the data schema, by lower-cased name.
  std::set<std::string> partition_lower;
  for (const auto& p : snap.partition_columns()) partition_lower.insert(AsciiLower(p));

  // Output columns: table columns (by logical index) and metadata columns, in output order.
  std::vector<int> output_logical;
  std::vector<std::pair<size_t, MetadataColumn>> output_metadata;  // output position, column
  if (options_.columns.empty()) {
    for (int i = 0; i < logical->num_fields(); ++i) output_logical.push_back(i);
  } else {
    for (const auto& name : options_.columns) {
      int found = -1;
      for (int i = 0; i < logical->num_fields(); ++i) {
        if (AsciiLower(logical->field(i)->name()) == AsciiLower(name)) {
          if (found >= 0) {
            return DeltaError(DeltaErrorCode::kInvalidArgument,
                              fmt::format("{}: column name '{}' is ambiguous", where, name));
          }
          found = i;
        }
      }
      if (found < 0) {
        const MetadataColumn metadata = MetadataColumnNamed(name, /*short_ok=*/false);
        if (metadata != MetadataColumn::kNone) {
          output_metadata.emplace_back(output_logical.size() + output_metadata.size(), metadata);
          continue;
        }
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("{}: column '{}' not found; columns are {}", where, name,
                                      logical->ToString()));
      }
      output_logical.push_back(found);
    }
  }
  for (const auto& name : options_.metadata_columns) {
    const MetadataColumn metadata = MetadataColumnNamed(name, /*short_ok=*/true);
    if (metadata == MetadataColumn::kNone) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{}: unknown metadata column '{}'; metadata columns are {} "
                                    "and {}",
                                    where, name, kMetadataFilePath, kMetadataRowIndex));
    }
    output_metadata.emplace_back(output_logical.size() + output_metadata.size(), metadata);
  }

  // Filter: parse, bind to the logical schema, collect the columns it needs.
  std::optional<BoundExpr> bound;
  std::vector<int> read_logical = output_logical;
  // The columns whose stats the filter can use: only those are turned into values per file.
  arrow::FieldVector stats_fields;
  if (!options_.filter.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(options_.filter));
    ARROW_ASSIGN_OR_RAISE(bound, BindPredicate(parsed, *logical, /*allow_current_time=*/true));
    for (const auto& col : ReferencedColumns(*bound)) {
      int i = logical->GetFieldIndex(col.logical_path.front());
      if (i < 0) continue;
      const auto& field = logical->field(i);
      if (std::find(read_logical.begin(), read_logical.end(), i) == read_logical.end()) {
        read_logical.push_back(i);
      }
      if (!partition_lower.count(AsciiLower(field->name())) &&
          std::find(stats_fields.begin(), stats_fields.end(), field) == stats_fields.end()) {
        stats_fields.push_back(field);
      }
    }
  }

  if (options_.row_filter) {
    for (const arrow::FieldRef& ref : arrow::compute::FieldsInExpression(*options_.row_filter)) {
      const std::string* name = ref.IsName() ? ref.name()
                                : ref.IsNested() && !ref.nested_refs()->empty() &&
                                          ref.nested_refs()->front().IsName()
                                    ? ref.nested_refs()->front().name()
                                    : nullptr;
      const int i = name ? logical->GetFieldIndex(*name) : -1;
      if (i < 0) {
        return DeltaError(DeltaErrorCode::kInvalidExpression,
                          fmt::format("{}: row filter {} references {}, not a column; columns "
                                      "are {}",
                                      where, options_.row_filter->ToString(), ref.ToString(),
                                      logical->ToString()));
      }
      if (std::find(read_logical.begin(), read_logical.end(), i) == read_logical.end()) {
        read_logical.push_back(i);
      }
    }
  }

  FileReadPlan plan;
  plan.table_root = snap.table_root();
  plan.version = snap.version();
  plan.mode = snap.column_mapping_mode();
  plan.batch_size = options_.batch_size;
  arrow::FieldVector read_fields;
  for (int i : read_logical) {
    read_fields.push_back(logical->field(i));
    plan.is_partition.push_back(partition_lower.count(AsciiLower(logical->field(i)->name())) > 0);
    plan.metadata.push_back(MetadataColumn::kNone);
  }
  // Metadata columns follow the table's columns in the rows read; the output puts them where
  // they were asked for.
  const size_t num_outputs = output_logical.size() + output_metadata.size();
  arrow::FieldVector out_fields;
  size_t next_data = 0, next_metadata = 0;
  for (size_t k = 0; k < num_outputs; ++k) {
    if (next_metadata < output_metadata.size() && output_metadata[next_metadata].first == k) {
      const MetadataColumn metadata = output_metadata[next_metadata++].second;
      plan.output_fields.push_back(static_cast<int>(read_fields.size()));
      read_fields.push_back(MetadataField(metadata));
      plan.is_partition.push_back(false);
      plan.metadata.push_back(metadata);
      out_fields.push_back(read_fields.back());
    } else {
      plan.output_fields.push_back(static_cast<int>(next_data));
      out_fields.push_back(logical->field(output_logical[next_data++]));
    }
  }
  plan.read_schema = arrow::schema(read_fields);
  plan.output_schema = arrow::schema(out_fields);
  std::optional<arrow::compute::Expression> row_filter;
  if (bound) {
    ARROW_ASSIGN_OR_RAISE(row_filter, ToArrowFilter(*bound));
  }
  if (options_.row_filter) {
    auto extra = options_.row_filter->Bind(*plan.read_schema);
    if (!extra.ok() || !extra->type() || extra->type()->id() != arrow::Type::BOOL) {
      return DeltaError(DeltaErrorCode::kInvalidExpression,
                        fmt::format("{}: row filter {} is not a BOOLEAN expression over the "
                                    "table's columns{}",
                                    where, options_.row_filter->ToString(),
                                    extra.ok() ? "" : ": " + extra.status().message()));
    }
    // NULL drops the row, as in the SQL filter.
    auto kept = arrow::compute::call("coalesce", {*extra, arrow::compute::literal(false)});
    row_filter = row_filter ? arrow::compute::and_(*row_filter, kept) : kept;
  }
  if (row_filter) {
    ARROW_ASSIGN_OR_RAISE(plan.row_filter, row_filter->Bind(*plan.read_schema));
  }
  if (bound) {
    auto pred = std::make_shared<BoundExpr>(*bound);
    plan.can_skip_row_group = [pred](const FileStats& stats) {
      return CanSkipFile(*pred, stats, PartitionValuesView{});
    };
  }

  // Plan the files: parse partition values, prune and skip by stats.
  std::map<std::string, std::string> stats_names;  // physical path -> logical path
  for (const auto& f : stats_fields) MapStatsNames(*f, "", "", &stats_names);
  std::vector<std::string> stats_paths;
  for (const auto& [physical, _] : stats_names) stats_paths.push_back(physical);
  // Typed statistics serve a filter on data columns; a partition-only filter needs just the
  // numRecords of the files it keeps, parsed for those alone.
  std::optional<StatsLayout> stats_layout;
  const auto no_columns = arrow::schema(arrow::FieldVector{});
  if (bound && !stats_fields.empty()) {
    arrow::FieldVector data_fields;
    for (const auto& f : logical->fields()) {
      if (!partition_lower.count(AsciiLower(f->name()))) data_fields.push_back(f);
    }
    stats_layout.emplace(arrow::schema(data_fields));
  }
  const LiveFiles& live = snap.live_files();
  std::vector<PlannedFile> planned;
  int64_t skipped = 0;

  // Partition fields of the whole schema, keyed by physical name (partitionValues keys).
  std::vector<std::pair<std::string, std::shared_ptr<arrow::Field>>> partition_fields;
  if (!live.empty()) {
    for (const auto& name : snap.partition_columns()) {
      auto f = logical->GetFieldByName(name);
      if (!f) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("{}: partition column '{}' is not in the schema", where, name));
      }
      partition_fields.emplace_back(
          snap.column_mapping_mode() == ColumnMappingMode::kNone ? name : PhysicalName(*f), f);
    }
  }
  std::set<std::string_view> wanted;
  if (options_.only_files) wanted.insert(options_.only_files->begin(), options_.only_files->end());

  for (size_t c = 0; c < live.chunks().size(); ++c) {
    const FileChunk& chunk = live.chunks()[c];
    const auto& files = chunk.actions();
    const auto& paths = static_cast<const arrow::StringArray&>(*files->column(kPathCol));
    const auto& pvs = static_cast<const arrow::MapArray&>(*files->column(kPartitionValuesCol));
    const auto& pv_keys = static_cast<const arrow::StringArray&>(*pvs.keys());
    const auto& pv_items = static_cast<const arrow::StringArray&>(*pvs.items());
    const auto& sizes = static_cast<const arrow::Int64Array&>(*files->column(kSizeCol));
    const auto& stats_text = static_cast<const arrow::StringArray&>(*files->column(kStatsCol));
    const auto& dvs = static_cast<const arrow::StructArray&>(*files->column(kDeletionVectorCol));
    const auto& dv_type = static_cast<const arrow::StringArray&>(*dvs.field(kDvStorageType));
    const auto& dv_path = static_cast<const arrow::StringArray&>(*dvs.field(kDvPathOrInlineDv));
    const auto& dv_offset = static_cast<const arrow::Int32Array&>(*dvs.field(kDvOffset));
    const auto& dv_size = static_cast<const arrow::Int32Array&>(*dvs.field(kDvSizeInBytes));
    const auto& dv_card = static_cast<const arrow::Int64Array&>(*dvs.field(kDvCardinality));
    // The chunk's statistics, typed once and shared by every snapshot holding the chunk.
    std::optional<TypedStatsReader> chunk_stats;
    std::vector<bool> skip_by_bounds;  // empty: none decided for the whole chunk
    if (stats_layout) {
      ARROW_ASSIGN_OR_RAISE(auto typed, ChunkStats(chunk, *stats_layout));
      ARROW_ASSIGN_OR_RAISE(skip_by_bounds, SkippedByBounds(*bound, *typed));
      chunk_stats.emplace(std::move(typed), stats_paths);
    }

    for (int64_t row = 0; row < files->num_rows(); ++row) {
      if (!chunk.IsLive(row)) continue;
      if (options_.only_files && !wanted.count(paths.GetView(row))) continue;
      const std::string_view raw_path = paths.GetView(row);
      // Partition values of this file.
      std::map<std::string, std::optional<std::string>> raw_values;
      if (pvs.IsValid(row)) {
        for (int64_t j = pvs.value_offset(row); j < pvs.value_offset(row + 1); ++j) {
          std::optional<std::string> v;
          if (pv_items.IsValid(j)) v = std::string(pv_items.GetView(j));
          raw_values.emplace(std::string(pv_keys.GetView(j)), v);
        }
      }
      PartitionValuesView pv_view;
      std::map<std::string, std::shared_ptr<arrow::Scalar>> by_logical;
      for (const auto& [physical, field] : partition_fields) {
        auto it = raw_values.find(physical);
        if (it == raw_values.end()) {
          // A missing key is not a null value (that is an explicit null): the add is malformed.
          return DeltaError(
              DeltaErrorCode::kCorruptLog,
              fmt::format("{}: file {}: partitionValues has no entry for partition column '{}'",
                          where, raw_path, physical));
        }
        std::optional<std::string_view> raw;
        if (it->second) raw = *it->second;
        auto scalar = ParsePartitionValue(raw, field->type());
        if (!scalar.ok()) {
          return DeltaError(DeltaErrorCode::kCorruptLog,
                            fmt::format("{}: file {}: partition column '{}': {}", where, raw_path,
                                        field->name(), scalar.status().message()));
        }
        pv_view[physical] = *scalar;
        by_logical[field->name()] = *scalar;
      }
      if (!skip_by_bounds.empty() && skip_by_bounds[row]) {
        ++skipped;
        continue;
      }
      std::optional<FileStats> file_stats;
      bool all_rows_match = !bound;
      if (bound) {
        // Partition values first (without stats nothing is skipped on a data column, so a skip
        // here is sound); the file's stats are read only when that does not decide. They are
        // read for a partition-only filter too, whose surviving files are read anyway: an
        // empty file (numRecords 0) is then skipped.
        bool skip = CanSkipFile(*bound, FileStats{}, pv_view);
        if (!skip && chunk_stats) {
          file_stats = chunk_stats->At(row);
        } else if (!skip && stats_text.IsValid(row)) {
          auto parsed = ParseStatsJson(stats_text.GetView(row), *no_columns);
          if (parsed.ok()) file_stats = std::move(*parsed);
        }
        if (!skip && file_stats) skip = CanSkipFile(*bound, *file_stats, pv_view);
        if (skip) {
          ++skipped;
          continue;
        }
        all_rows_match = AllRowsMatch(*bound, file_stats ? *file_stats : FileStats{}, pv_view);
      }

      PlannedFile pf;
      auto resolved = ResolveFileInTable(snap.table_root(), snap.table_root(), raw_path);
      if (!resolved.ok()) {
        return arrow::Status(resolved.status().code(),
                             fmt::format("{}: file {}: {}", where, raw_path,
                                         resolved.status().message()),
                             resolved.status().detail());
      }
      pf.task.path = std::move(*resolved);
      pf.task.size = sizes.IsValid(row) ? sizes.Value(row) : 0;
      pf.task.partition_values.resize(read_fields.size());
      for (size_t k = 0; k < read_fields.size(); ++k) {
        if (plan.is_partition[k]) pf.task.partition_values[k] = by_logical[read_fields[k]->name()];
      }
      if (dvs.IsValid(row)) {
        DeletionVectorDescriptor d;
        d.storage_type = std::string(dv_type.GetView(row));
        d.path_or_inline_dv = std::string(dv_path.GetView(row));
        if (dv_offset.IsValid(row)) d.offset = dv_offset.Value(row);
        d.size_in_bytes = dv_size.IsValid(row) ? dv_size.Value(row) : 0;
        d.cardinality = dv_card.IsValid(row) ? dv_card.Value(row) : 0;
        pf.info.deleted_rows = d.cardinality;
        pf.info.deletion_vector = d;
        pf.task.deletion_vector = std::move(d);
      }
      pf.task.uri = "file:" + UriEncodePath(pf.task.path);
      pf.info.path = pf.task.path;
      pf.info.log_path = std::string(raw_path);
      pf.info.uri = pf.task.uri;
      pf.info.size = pf.task.size;
      pf.info.file_ref = FileRef{static_cast<int32_t>(c), row};
      pf.info.all_rows_match = all_rows_match;
      for (const auto& [physical, field] : partition_fields) {
        pf.info.partition_values[field->name()] = raw_values[physical];
        pf.info.typed_partition_values[field->name()] = by_logical[field->name()];
      }
      if (file_stats) {
        pf.stats_parsed = true;
        pf.info.num_records = file_stats->num_records;
        pf.info.tight_bounds = file_stats->tight_bounds;
        for (const auto& [physical, column] : file_stats->columns) {
          auto name = stats_names.find(physical);
          if (name == stats_names.end()) continue;
          pf.info.column_stats[name->second] =
              ScanColumnStats{column.min, column.max, column.null_count};
        }
      } else if (bound) {
        pf.stats_parsed = true;  // the file has no (readable) statistics
      }
      planned.push_back(std::move(pf));
    }
  }
  int parallelism = options_.parallelism;
  if (parallelism <= 0) {
    parallelism = std::max(2, arrow::internal::GetCpuThreadPool()->GetCapacity());
  }
  return std::make_shared<ScanImpl>(snapshot_, std::move(plan), std::move(planned), skipped,
                                    parallelism);
}

}  // namespace deltacpp
