// Change data feed reads: resolve the range, check the feed and the schemas across it, plan the
// files of every commit, and stream their rows with the change columns added.
#include "deltacpp/table_changes.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "deltacpp/api.h"
#include "expr/binder.h"
#include "expr/bound_expr.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "log/commit_parser.h"
#include "log/commit_timeline.h"
#include "protocol/deletion_vector.h"
#include "protocol/partition_values.h"
#include "protocol/path_encoding.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "scan/change_range.h"
#include "scan/change_schema_check.h"
#include "scan/commit_changes.h"
#include "scan/data_file_reader.h"
#include "scan/ordered_task_reader.h"
#include "util/thread_pools.h"
#include "util/uri.h"

namespace deltacpp {

using namespace internal;  // NOLINT: the change feed is glue over the internal layers

namespace {

// One file of one commit, ready to read.
struct ChangeTask {
  ChangeFile file;
  std::string abs_path;
  std::vector<std::shared_ptr<arrow::Scalar>> partition_values;  // per data field
  int64_t version = 0;
  int64_t timestamp_us = 0;
};

// What every task of a change feed read shares.
struct ChangesPlan {
  std::string table_root;
  FileReadPlan data_plan;  // the needed table columns
  FileReadPlan cdc_plan;   // the same plus `_change_type`
  std::shared_ptr<arrow::Schema> full_schema;  // needed table columns + the change columns
  std::optional<arrow::compute::Expression> filter;  // bound to full_schema
  std::vector<int> output_fields;                    // full_schema positions
  std::shared_ptr<arrow::Schema> output_schema;
  std::vector<ChangeTask> tasks;
  int parallelism = 2;
};

using Batches = std::vector<std::shared_ptr<arrow::RecordBatch>>;

std::shared_ptr<arrow::Field> ChangeTypeField() {
  return arrow::field(std::string(kChangeTypeColumn), arrow::utf8());
}
std::shared_ptr<arrow::Field> CommitVersionField() {
  return arrow::field(std::string(kCommitVersionColumn), arrow::int64());
}
std::shared_ptr<arrow::Field> CommitTimestampField() {
  return arrow::field(std::string(kCommitTimestampColumn),
                      arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
}

// Sorted a \ b.
std::vector<uint64_t> Difference(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

arrow::Result<std::shared_ptr<arrow::Array>> RowsMask(const std::vector<uint64_t>& rows,
                                                      int64_t start, int64_t len) {
  arrow::BooleanBuilder b;
  ARROW_RETURN_NOT_OK(b.Reserve(len));
  auto it = std::lower_bound(rows.begin(), rows.end(), static_cast<uint64_t>(start));
  for (int64_t r = start; r < start + len; ++r) {
    const bool keep = it != rows.end() && *it == static_cast<uint64_t>(r);
    if (keep) ++it;
    b.UnsafeAppend(keep);
  }
  return b.Finish();
}

arrow::Result<Batches> ReadChangeTask(const ChangesPlan& plan, const ChangeTask& t,
                                      arrow::fs::FileSystem& fs) {
  FileReadPlan read_plan = t.file.is_cdc ? plan.cdc_plan : plan.data_plan;
  read_plan.version = t.version;
  FileTask task;
  task.path = t.abs_path;
  task.partition_values = t.partition_values;
  if (t.file.is_cdc) task.partition_values.push_back(nullptr);  // `_change_type`
  std::optional<std::vector<uint64_t>> keep;
  if (t.file.rows_in) {
    auto rows = ReadDeletedRowIndexes(*t.file.rows_in, plan.table_root, fs);
    if (rows.ok() && t.file.rows_not_in) {
      auto minus = ReadDeletedRowIndexes(*t.file.rows_not_in, plan.table_root, fs);
      if (!minus.ok()) {
        rows = minus.status();
      } else {
        rows = Difference(*rows, *minus);
      }
    }
    if (!rows.ok()) {
      return arrow::Status(rows.status().code(),
                           fmt::format("table {} version {}: data file {}: {}", plan.table_root,
                                       t.version, t.abs_path, rows.status().message()),
                           rows.status().detail());
    }
    if (rows->empty()) return Batches{};
    keep = std::move(*rows);
  } else {
    task.deletion_vector = t.file.deletion_vector;
  }
  ARROW_ASSIGN_OR_RAISE(auto batches, ReadDataFile(read_plan, task, fs));

  const int num_data = plan.data_plan.read_schema->num_fields();
  std::shared_ptr<arrow::Scalar> change_type;
  if (!t.file.is_cdc) change_type = std::make_shared<arrow::StringScalar>(t.file.change_type);
  const auto version = std::make_shared<arrow::Int64Scalar>(t.version);
  const auto timestamp = std::make_shared<arrow::TimestampScalar>(
      t.timestamp_us, CommitTimestampField()->type());
  Batches out;
  // Without a deletion vector or filter the reader returns every row in file order, so row
  // positions are counted across its batches.
  int64_t row = 0;
  for (auto batch : batches) {
    const int64_t n = batch->num_rows();
    if (keep) {
      ARROW_ASSIGN_OR_RAISE(auto mask, RowsMask(*keep, row, n));
      row += n;
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(batch, mask));
      batch = filtered.record_batch();
    }
    const int64_t rows = batch->num_rows();
    if (rows == 0) continue;
    std::vector<std::shared_ptr<arrow::Array>> cols;
    for (int i = 0; i < num_data; ++i) cols.push_back(batch->column(i));
    if (t.file.is_cdc) {
      cols.push_back(batch->column(num_data));
    } else {
      ARROW_ASSIGN_OR_RAISE(auto arr, arrow::MakeArrayFromScalar(*change_type, rows));
      cols.push_back(std::move(arr));
    }
    ARROW_ASSIGN_OR_RAISE(auto versions, arrow::MakeArrayFromScalar(*version, rows));
    ARROW_ASSIGN_OR_RAISE(auto stamps, arrow::MakeArrayFromScalar(*timestamp, rows));
    cols.push_back(std::move(versions));
    cols.push_back(std::move(stamps));
    std::shared_ptr<arrow::RecordBatch> full =
        arrow::RecordBatch::Make(plan.full_schema, rows, std::move(cols));
    if (plan.filter) {
      ARROW_ASSIGN_OR_RAISE(auto value, arrow::compute::ExecuteScalarExpression(
                                            *plan.filter, arrow::compute::ExecBatch(*full)));
      std::shared_ptr<arrow::Array> mask;
      if (value.is_scalar()) {
        ARROW_ASSIGN_OR_RAISE(mask, arrow::MakeArrayFromScalar(*value.scalar(), rows));
      } else {
        mask = value.make_array();
      }
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(full, mask));
      full = filtered.record_batch();
      if (full->num_rows() == 0) continue;
    }
    std::vector<std::shared_ptr<arrow::Array>> projected;
    for (int idx : plan.output_fields) projected.push_back(full->column(idx));
    out.push_back(
        arrow::RecordBatch::Make(plan.output_schema, full->num_rows(), std::move(projected)));
  }
  return out;
}

class TableChangesImpl : public TableChanges {
 public:
  TableChangesImpl(std::shared_ptr<const ChangesPlan> plan, std::shared_ptr<LogStore> store,
                   int64_t start, int64_t end)
      : plan_(std::move(plan)), store_(std::move(store)), start_(start), end_(end) {}

  const std::shared_ptr<arrow::Schema>& schema() const override { return plan_->output_schema; }
  int64_t start_version() const override { return start_; }
  int64_t end_version() const override { return end_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Execute() const override {
    auto plan = plan_;
    auto fs = store_->filesystem();
    // Tasks run a bounded number ahead; their batches come out in task (commit) order.
    return std::make_shared<OrderedTaskReader>(
        plan->output_schema, plan->tasks.size(), plan->parallelism,
        [plan, fs](size_t i) { return ReadChangeTask(*plan, plan->tasks[i], *fs); });
  }

 private:
  std::shared_ptr<const ChangesPlan> plan_;
  std::shared_ptr<LogStore> store_;
  int64_t start_;
  int64_t end_;
};

arrow::Status NotRecorded(const std::string& root, int64_t version, const ChangeRange& range) {
  return DeltaError(
      DeltaErrorCode::kVersionNotFound,
      fmt::format("table {}: error getting change data for range [{}, {}] as change data was not "
                  "recorded for version [{}]: the change data feed (delta.enableChangeDataFeed) "
                  "was off there",
                  root, range.start, range.end, version));
}

SchemaVersion SchemaOf(const Snapshot& snap) {
  return SchemaVersion{snap.schema(), snap.column_mapping_mode(), snap.partition_columns(),
                       snap.version()};
}

arrow::Status IncompatibleSchema(const std::string& root, const ChangeRange& range,
                                 const SchemaVersion& read, int64_t version, bool schema_change) {
  // A schema change inside the range splits it in two; data of the start version that the read
  // schema cannot serve (a change after it, found by comparing the two) cannot be split around.
  const std::string advice =
      schema_change ? fmt::format("read the changes from version {} to {} and from version {} "
                                  "to {} separately",
                                  range.start, version - 1, version, range.end)
                    : "read a range that starts at or after the schema change";
  std::string columns;
  for (const auto& f : read.schema->fields()) {
    columns += (columns.empty() ? "" : ", ") + f->name() + " " + f->type()->ToString();
  }
  return DeltaError(
      DeltaErrorCode::kSchemaMismatch,
      fmt::format("table {}: retrieving table changes between version {} and {} failed because "
                  "of an incompatible {} at version {}; the read schema is the one of version {} "
                  "({}); {}",
                  root, range.start, range.end, schema_change ? "schema change" : "data schema",
                  version, read.version, columns, advice));
}

// Matches `name` (case-insensitive) against the table columns and the change columns.
arrow::Result<int> FindOutputColumn(const arrow::Schema& full, const std::string& name,
                                    const std::string& where) {
  int found = -1;
  for (int i = 0; i < full.num_fields(); ++i) {
    if (AsciiLower(full.field(i)->name()) != AsciiLower(name)) continue;
    if (found >= 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("{}: column name '{}' is ambiguous", where, name));
    }
    found = i;
  }
  if (found < 0) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("{}: column '{}' not found; columns are {}", where, name,
                                  full.ToString()));
  }
  return found;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> TableChanges::ToTable() const {
  ARROW_ASSIGN_OR_RAISE(auto reader, Execute());
  return reader->ToTable();
}

arrow::Result<std::shared_ptr<TableChanges>> TableChangesBuilder::Build() const {
  Initialize();
  if (!table_) return arrow::Status::Invalid("TableChangesBuilder needs a table");
  const std::string& root = table_->root();
  const auto& store = table_->store();
  ARROW_ASSIGN_OR_RAISE(auto latest, table_->Latest());
  ARROW_ASSIGN_OR_RAISE(auto timeline, CommitTimeline::Load(store, root, latest->config()));
  ChangeRangeRequest request{options_.starting_version, options_.starting_timestamp_ms,
                             options_.ending_version, options_.ending_timestamp_ms};
  ARROW_ASSIGN_OR_RAISE(ChangeRange range, ResolveChangeRange(timeline, request, root));
  if (!range.empty() && range.end > latest->version()) {
    // A commit landed after the snapshot was taken: serve the range up to it.
    ARROW_ASSIGN_OR_RAISE(latest, table_->SnapshotAt(range.end));
  }

  // The read schema: the ending version's when column mapping is on anywhere it matters (data
  // files then name columns by physical name and a later drop or rename must not show),
  // otherwise the latest version's, as delta-spark chooses.
  std::shared_ptr<Snapshot> start_snap, read_snap = latest;
  if (!range.empty()) {
    ARROW_ASSIGN_OR_RAISE(start_snap, table_->SnapshotAt(range.start));
    std::shared_ptr<Snapshot> end_snap = latest;
    if (range.end != latest->version()) {
      ARROW_ASSIGN_OR_RAISE(end_snap, table_->SnapshotAt(range.end));
    }
    const auto none = ColumnMappingMode::kNone;
    if (start_snap->column_mapping_mode() != none || end_snap->column_mapping_mode() != none ||
        latest->column_mapping_mode() != none) {
      read_snap = end_snap;
    }
    if (!start_snap->config().change_data_feed) return NotRecorded(root, range.start, range);
  }
  const SchemaVersion read_schema = SchemaOf(*read_snap);
  const std::string where =
      fmt::format("table {} changes from version {} to {}", root, range.start, range.end);

  // Columns: table columns of the read schema, then the change columns.
  const auto& logical = read_snap->schema();
  arrow::FieldVector all_fields = logical->fields();
  all_fields.push_back(ChangeTypeField());
  all_fields.push_back(CommitVersionField());
  all_fields.push_back(CommitTimestampField());
  const auto all_schema = arrow::schema(all_fields);
  const int num_table = logical->num_fields();
  std::vector<int> output_all;
  if (options_.columns.empty()) {
    for (int i = 0; i < all_schema->num_fields(); ++i) output_all.push_back(i);
  } else {
    for (const auto& name : options_.columns) {
      ARROW_ASSIGN_OR_RAISE(int i, FindOutputColumn(*all_schema, name, where));
      output_all.push_back(i);
    }
  }
  std::optional<BoundExpr> bound;
  std::set<int> needed_table;
  for (int i : output_all) {
    if (i < num_table) needed_table.insert(i);
  }
  if (!options_.filter.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(options_.filter));
    ARROW_ASSIGN_OR_RAISE(bound, BindPredicate(parsed, *all_schema, /*allow_current_time=*/true));
    for (const auto& col : ReferencedColumns(*bound)) {
      int i = all_schema->GetFieldIndex(col.logical_path.front());
      if (i >= 0 && i < num_table) needed_table.insert(i);
    }
  }

  auto plan = std::make_shared<ChangesPlan>();
  plan->table_root = root;
  std::set<std::string> partition_lower;
  for (const auto& p : read_snap->partition_columns()) partition_lower.insert(AsciiLower(p));
  arrow::FieldVector data_fields;
  std::vector<int> table_to_full(num_table, -1);
  for (int i : needed_table) {
    table_to_full[i] = static_cast<int>(data_fields.size());
    data_fields.push_back(logical->field(i));
  }
  for (FileReadPlan* fp : {&plan->data_plan, &plan->cdc_plan}) {
    fp->table_root = root;
    fp->mode = read_snap->column_mapping_mode();
    fp->batch_size = options_.batch_size;
    arrow::FieldVector fields = data_fields;
    for (const auto& f : fields) {
      fp->is_partition.push_back(partition_lower.count(AsciiLower(f->name())) > 0);
    }
    if (fp == &plan->cdc_plan) {
      fields.push_back(ChangeTypeField());
      fp->is_partition.push_back(false);
    }
    fp->read_schema = arrow::schema(fields);
    for (int k = 0; k < static_cast<int>(fields.size()); ++k) fp->output_fields.push_back(k);
    fp->output_schema = fp->read_schema;
  }
  arrow::FieldVector full_fields = data_fields;
  full_fields.push_back(ChangeTypeField());
  full_fields.push_back(CommitVersionField());
  full_fields.push_back(CommitTimestampField());
  plan->full_schema = arrow::schema(full_fields);
  const int num_data = static_cast<int>(data_fields.size());
  arrow::FieldVector out_fields;
  for (int i : output_all) {
    const int pos = i < num_table ? table_to_full[i] : num_data + (i - num_table);
    plan->output_fields.push_back(pos);
    out_fields.push_back(plan->full_schema->field(pos));
  }
  plan->output_schema = arrow::schema(out_fields);
  if (bound) {
    ARROW_ASSIGN_OR_RAISE(auto filter, ToArrowFilter(*bound));
    ARROW_ASSIGN_OR_RAISE(plan->filter, filter.Bind(*plan->full_schema));
  }
  plan->parallelism = std::max(2, arrow::internal::GetCpuThreadPool()->GetCapacity());

  // Partition value keys of the needed partition columns.
  std::vector<std::string> partition_key(num_data);
  for (int k = 0; k < num_data; ++k) {
    if (plan->data_plan.is_partition[k]) {
      partition_key[k] = read_snap->column_mapping_mode() == ColumnMappingMode::kNone
                             ? data_fields[k]->name()
                             : PhysicalName(*data_fields[k]);
    }
  }

  // The commits of the range.
  for (int64_t v = range.start; !range.empty() && v <= range.end; ++v) {
    auto commit = timeline.commits().find(v);
    if (commit == timeline.commits().end()) {
      return DeltaError(DeltaErrorCode::kVersionNotFound,
                        fmt::format("{}: the commit of version {} is not in the log (cleaned "
                                    "up?), so its changes cannot be read",
                                    where, v));
    }
    ARROW_ASSIGN_OR_RAISE(auto buf, store->Read(commit->second.path));
    ARROW_ASSIGN_OR_RAISE(auto actions,
                          ParseActionFile(std::string_view(buf->data_as<char>(), buf->size()),
                                          fmt::format("table {}: commit {}", root,
                                                      commit->second.path)));
    if (actions.protocol) ARROW_RETURN_NOT_OK(CheckReadSupported(*actions.protocol, root, v));
    if (actions.metadata) {
      if (!TableConfig::Parse(actions.metadata->configuration).change_data_feed) {
        return NotRecorded(root, v, range);
      }
      // The start version's own schema is checked below; a schema set there governs all of
      // the data read.
      if (v > range.start) {
        ARROW_ASSIGN_OR_RAISE(auto schema, SchemaFromDeltaJson(actions.metadata->schema_string));
        SchemaVersion data{schema,
                           TableConfig::Parse(actions.metadata->configuration).column_mapping_mode,
                           actions.metadata->partition_columns, v};
        if (!IsChangeDataReadCompatible(data, read_schema)) {
          return IncompatibleSchema(root, range, read_schema, v, true);
        }
      }
    }
    int64_t ts_ms = 0;
    if (timeline.UsesInCommitTimestamp(v) && actions.commit_info &&
        actions.commit_info->in_commit_timestamp) {
      ts_ms = *actions.commit_info->in_commit_timestamp;
    } else {
      ARROW_ASSIGN_OR_RAISE(ts_ms, timeline.TimestampOf(v));
    }
    for (auto& file : CommitChangeFiles(actions)) {
      ChangeTask task;
      auto resolved = ResolveFileInTable(root, root, file.path);
      if (!resolved.ok()) {
        return arrow::Status(resolved.status().code(),
                             fmt::format("{}: version {}: file {}: {}", where, v, file.path,
                                         resolved.status().message()),
                             resolved.status().detail());
      }
      task.abs_path = std::move(*resolved);
      task.partition_values.resize(num_data);
      for (int k = 0; k < num_data; ++k) {
        if (!plan->data_plan.is_partition[k]) continue;
        // A file written before the column became a partition column has no value for it.
        std::optional<std::string_view> raw;
        auto it = file.partition_values.find(partition_key[k]);
        if (it != file.partition_values.end() && it->second) raw = *it->second;
        auto scalar = ParsePartitionValue(raw, data_fields[k]->type());
        if (!scalar.ok()) {
          return DeltaError(DeltaErrorCode::kCorruptLog,
                            fmt::format("{}: version {}: file {}: partition column '{}': {}",
                                        where, v, file.path, data_fields[k]->name(),
                                        scalar.status().message()));
        }
        task.partition_values[k] = *scalar;
      }
      task.file = std::move(file);
      task.version = v;
      task.timestamp_us = ts_ms * 1000;
      plan->tasks.push_back(std::move(task));
    }
  }
  if (!range.empty() && !IsChangeDataReadCompatible(SchemaOf(*start_snap), read_schema)) {
    return IncompatibleSchema(root, range, read_schema, range.start, false);
  }
  return std::make_shared<TableChangesImpl>(std::move(plan), store, range.start, range.end);
}

}  // namespace deltacpp
