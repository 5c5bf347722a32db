// Scan planning (projection, partition pruning, statistics skipping) and parallel execution.
#include <arrow/compute/api.h>
#include <arrow/util/thread_pool.h>
#include <fmt/core.h>

#include <deque>
#include <set>

#include "deltacpp/api.h"
#include "expr/binder.h"
#include "expr/bound_expr.h"
#include "expr/data_skipping.h"
#include "expr/file_stats.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "log/file_action_schema.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "scan/data_file_reader.h"
#include "util/thread_pools.h"
#include "util/uri.h"

namespace deltacpp {

using namespace internal;  // NOLINT: the scan is glue over the internal layers

namespace {


struct PlannedFile {
  FileTask task;
  ScanFile info;
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
    for (const auto& f : files_) out.push_back(f.info);
    return out;
  }

  int64_t num_skipped_files() const override { return skipped_; }

  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Execute() const override;

 private:
  friend class ParallelFileReader;
  std::shared_ptr<const Snapshot> snapshot_;
  std::shared_ptr<FileReadPlan> plan_;
  std::vector<PlannedFile> files_;
  int64_t skipped_;
  int parallelism_;
};

// Reads files on the CPU thread pool, a bounded number ahead, and yields their batches in
// file order.
class ParallelFileReader : public arrow::RecordBatchReader {
 public:
  using Batches = std::vector<std::shared_ptr<arrow::RecordBatch>>;

  ParallelFileReader(std::shared_ptr<const ScanImpl> scan)
      : scan_(std::move(scan)), fs_(scan_->snapshot_->store()->filesystem()) {}

  std::shared_ptr<arrow::Schema> schema() const override { return scan_->plan_->output_schema; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    while (true) {
      if (pos_in_current_ < current_.size()) {
        // Handed over, not kept: a consumed batch's memory goes back as soon as the caller
        // drops it, instead of living until the whole file is consumed.
        *out = std::move(current_[pos_in_current_++]);
        return arrow::Status::OK();
      }
      Fill();
      if (pending_.empty()) {
        *out = nullptr;
        return arrow::Status::OK();
      }
      auto fut = std::move(pending_.front());
      pending_.pop_front();
      auto result = fut.result();
      if (!result.ok()) {
        // Let in-flight reads finish before reporting, so nothing outlives the reader.
        for (auto& f : pending_) f.Wait();
        pending_.clear();
        next_file_ = scan_->files_.size();
        return result.status();
      }
      current_ = std::move(*result);
      pos_in_current_ = 0;
      Fill();
    }
  }

  arrow::Status Close() override {
    for (auto& f : pending_) f.Wait();
    pending_.clear();
    return arrow::Status::OK();
  }

  ~ParallelFileReader() override { (void)Close(); }

 private:
  void Fill() {
    // Not the CPU pool: a consumer may itself run on it (an Acero node, say) and wait here.
    auto* pool = FileTaskPool();
    if (pool == nullptr) {
      pending_.push_back(arrow::Future<Batches>::MakeFinished(
          arrow::Status::IOError("cannot start the file reading threads")));
      next_file_ = scan_->files_.size();
      return;
    }
    while (pending_.size() < static_cast<size_t>(scan_->parallelism_) &&
           next_file_ < scan_->files_.size()) {
      size_t i = next_file_++;
      auto scan = scan_;
      auto fs = fs_;
      auto fut = pool->Submit([scan, fs, i]() -> arrow::Result<Batches> {
        return ReadDataFile(*scan->plan_, scan->files_[i].task, *fs);
      });
      if (!fut.ok()) {
        pending_.push_back(arrow::Future<Batches>::MakeFinished(fut.status()));
      } else {
        pending_.push_back(std::move(*fut));
      }
    }
  }

  std::shared_ptr<const ScanImpl> scan_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::deque<arrow::Future<Batches>> pending_;
  size_t next_file_ = 0;
  Batches current_;
  size_t pos_in_current_ = 0;
};

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ScanImpl::Execute() const {
  std::shared_ptr<const ScanImpl> self = shared_from_this();
  return std::make_shared<ParallelFileReader>(self);
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

  // Output columns.
  std::vector<int> output_logical;
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
        return DeltaError(DeltaErrorCode::kInvalidArgument,
                          fmt::format("{}: column '{}' not found; columns are {}", where, name,
                                      logical->ToString()));
      }
      output_logical.push_back(found);
    }
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
  }
  plan.read_schema = arrow::schema(read_fields);
  arrow::FieldVector out_fields;
  for (size_t k = 0; k < output_logical.size(); ++k) {
    plan.output_fields.push_back(static_cast<int>(k));
    out_fields.push_back(logical->field(output_logical[k]));
  }
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
  const auto stats_schema = arrow::schema(stats_fields);
  const auto& files = snap.files();
  std::vector<PlannedFile> planned;
  int64_t skipped = 0;
  if (files && files->num_rows() > 0) {
    const auto& paths = static_cast<const arrow::StringArray&>(*files->column(kPathCol));
    const auto& pvs = static_cast<const arrow::MapArray&>(*files->column(kPartitionValuesCol));
    const auto& pv_keys = static_cast<const arrow::StringArray&>(*pvs.keys());
    const auto& pv_items = static_cast<const arrow::StringArray&>(*pvs.items());
    const auto& sizes = static_cast<const arrow::Int64Array&>(*files->column(kSizeCol));
    const auto& stats = static_cast<const arrow::StringArray&>(*files->column(kStatsCol));
    const auto& dvs = static_cast<const arrow::StructArray&>(*files->column(kDeletionVectorCol));
    const auto& dv_type = static_cast<const arrow::StringArray&>(*dvs.field(kDvStorageType));
    const auto& dv_path = static_cast<const arrow::StringArray&>(*dvs.field(kDvPathOrInlineDv));
    const auto& dv_offset = static_cast<const arrow::Int32Array&>(*dvs.field(kDvOffset));
    const auto& dv_size = static_cast<const arrow::Int32Array&>(*dvs.field(kDvSizeInBytes));
    const auto& dv_card = static_cast<const arrow::Int64Array&>(*dvs.field(kDvCardinality));

    // Partition fields of the whole schema, keyed by physical name (partitionValues keys).
    std::vector<std::pair<std::string, std::shared_ptr<arrow::Field>>> partition_fields;
    for (const auto& name : snap.partition_columns()) {
      auto f = logical->GetFieldByName(name);
      if (!f) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("{}: partition column '{}' is not in the schema", where, name));
      }
      partition_fields.emplace_back(
          snap.column_mapping_mode() == ColumnMappingMode::kNone ? name : PhysicalName(*f), f);
    }

    std::set<std::string_view> wanted;
    if (options_.only_files) wanted.insert(options_.only_files->begin(), options_.only_files->end());
    for (int64_t row = 0; row < files->num_rows(); ++row) {
      if (options_.only_files && !wanted.count(paths.GetView(row))) continue;
      std::string raw_path(paths.GetView(row));
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
      if (bound) {
        // Partition values first (without stats nothing is skipped on a data column, so a skip
        // here is sound); the file's stats are parsed only when that does not decide. They are
        // parsed for a partition-only filter too, whose surviving files are read anyway: an
        // empty file (numRecords 0) is then skipped.
        bool skip = CanSkipFile(*bound, FileStats{}, pv_view);
        if (!skip && stats.IsValid(row)) {
          auto parsed = ParseStatsJson(stats.GetView(row), *stats_schema);
          if (parsed.ok()) skip = CanSkipFile(*bound, *parsed, pv_view);
        }
        if (skip) {
          ++skipped;
          continue;
        }
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
        pf.task.deletion_vector = std::move(d);
      }
      pf.info.path = pf.task.path;
      pf.info.log_path = raw_path;
      pf.info.size = pf.task.size;
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
