// OPTIMIZE: the files in scope grouped by partition into bins, each bin's live rows read and
// written again (Z-ordered when asked) on several threads, committed as dataChange=false
// removes and adds.
#include "deltacpp/ops/optimize.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "deltacpp/error.h"
#include "deltacpp/scan.h"
#include "expr/binder.h"
#include "expr/parser.h"
#include "ops/clustering_columns.h"
#include "ops/data_writer_settings.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "ops/row_level_op.h"
#include "ops/zorder.h"
#include "protocol/table_features.h"
#include "txn/writer_features.h"
#include "util/clock.h"
#include "util/random_uuid.h"
#include "util/thread_pools.h"
#include "util/uri.h"
#include "write/row_rewriter.h"

namespace deltacpp {

using namespace internal;  // NOLINT: operations glue the internal layers together

namespace {

// delta-spark's spark.databricks.delta.optimize.maxFileSize.
constexpr int64_t kDefaultTargetFileSize = 1LL << 30;
// Rows handed to the writer at once when a sorted partition is written out.
constexpr int64_t kWriteSlice = 64 * 1024;
// Files of a bin read at once.
constexpr size_t kReadGroup = 16;

// One group of files of one partition, rewritten together.
struct Bin {
  std::vector<const ScanFile*> files;
  bool zorder = false;
  int64_t bytes = 0;
};

std::string PartitionKey(const ScanFile& f) {
  std::string key;
  for (const auto& [name, value] : f.partition_values) {
    key += name;
    key += value ? "=" + *value : "\x01";
    key += '\x00';
  }
  return key;
}

OptimizeFileSizes SizesOf(const std::vector<int64_t>& sizes) {
  OptimizeFileSizes s;
  s.total_files = static_cast<int64_t>(sizes.size());
  if (sizes.empty()) return s;
  s.min = *std::min_element(sizes.begin(), sizes.end());
  s.max = *std::max_element(sizes.begin(), sizes.end());
  for (int64_t v : sizes) s.total_size += v;
  s.avg = static_cast<double>(s.total_size) / static_cast<double>(sizes.size());
  return s;
}

// Nearest-rank percentile of sorted `sizes`.
int64_t Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The tag delta-spark gives clustered files: the columns they are clustered by.
constexpr const char* kZCubeZOrderBy = "ZCUBE_ZORDER_BY";
constexpr const char* kZCubeId = "ZCUBE_ID";

}  // namespace

std::vector<std::pair<std::string, int64_t>> OptimizeMetrics::Named() const {
  return {{"numRemovedFiles", num_files_removed},
          {"numRemovedBytes", files_removed.total_size},
          {"p25FileSize", p25_file_size},
          {"numDeletionVectorsRemoved", num_deletion_vectors_removed},
          {"minFileSize", files_added.min},
          {"p75FileSize", p75_file_size},
          {"p50FileSize", p50_file_size},
          {"numAddedBytes", files_added.total_size},
          {"numAddedFiles", num_files_added},
          {"maxFileSize", files_added.max}};
}

arrow::Result<OptimizeMetrics> OptimizeBuilder::Execute() const {
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<DeltaTable> table = table_;
  if (!table) {
    ARROW_ASSIGN_OR_RAISE(table, DeltaTable::Open(location_));
  }
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<const Snapshot> snapshot, table->Latest());
  const std::string op_name = purge_ ? "REORG" : "OPTIMIZE";
  const std::string context =
      fmt::format("{} on table {} version {}", op_name, table->root(), snapshot->version());
  auto invalid = [&](const std::string& what) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, fmt::format("{}: {}", context, what));
  };

  // --- Options ---
  const int64_t target = target_file_size_.value_or(
      snapshot->config().target_file_size.value_or(kDefaultTargetFileSize));
  if (target <= 0) return invalid(fmt::format("the target file size {} is not positive", target));
  const int64_t min_size = min_file_size_.value_or(target);
  if (min_size < 0) return invalid(fmt::format("the minimum file size {} is negative", min_size));
  if (!(max_deleted_rows_ratio_ >= 0 && max_deleted_rows_ratio_ <= 1)) {
    return invalid(fmt::format("the deleted rows ratio {} is not between 0 and 1",
                               max_deleted_rows_ratio_));
  }
  ARROW_ASSIGN_OR_RAISE(const auto clustering, ClusteringColumns(*snapshot));
  const bool clustered = !clustering.empty() && !purge_;
  if (!clustering.empty() && !zorder_by_.empty()) {
    return invalid("ZORDER BY is not allowed on a clustered table; OPTIMIZE clusters it by its "
                   "clustering columns");
  }
  if (!clustering.empty() && where_) {
    return invalid("a WHERE is not allowed on a clustered table");
  }
  if (purge_ && !zorder_by_.empty()) return invalid("a purge cannot ZORDER BY");
  const auto& schema = snapshot->schema();
  const auto& partition_columns = snapshot->partition_columns();
  auto is_partition = [&](const std::string& name) {
    return std::any_of(partition_columns.begin(), partition_columns.end(),
                       [&](const std::string& p) { return EqualsIgnoreCase(p, name); });
  };
  std::vector<std::string> order_by;  // exact field names
  for (const auto& c : zorder_by_) {
    auto field = std::find_if(schema->fields().begin(), schema->fields().end(),
                              [&](const auto& f) { return EqualsIgnoreCase(f->name(), c); });
    if (field == schema->fields().end()) {
      return invalid(fmt::format("ZORDER BY column {} is not a top-level column of the table", c));
    }
    if (is_partition(c)) {
      return invalid(fmt::format("ZORDER BY column {} is a partition column: its files are "
                                 "already apart",
                                 c));
    }
    if (std::find(order_by.begin(), order_by.end(), (*field)->name()) != order_by.end()) {
      return invalid(fmt::format("ZORDER BY names column {} twice", c));
    }
    order_by.push_back((*field)->name());
  }
  if (clustered) {
    for (const auto& c : clustering) {
      if (c.find('.') != std::string::npos) {
        return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                          fmt::format("{}: clustering by nested column {} is not supported",
                                      context, c));
      }
      order_by.push_back(c);
    }
  }
  if (where_) {
    ARROW_RETURN_NOT_OK(CheckOptionText(*where_, context + ": ", "the predicate"));
    auto bound = [&]() -> arrow::Result<BoundExpr> {
      ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(*where_));
      return BindPredicate(parsed, *schema);
    }();
    if (!bound.ok()) {
      return bound.status().WithMessage(
          fmt::format("{}: WHERE ({}): {}", context, *where_, bound.status().message()));
    }
    for (const auto& column : ReferencedColumns(*bound)) {
      if (!is_partition(column.LogicalName())) {
        return DeltaError(DeltaErrorCode::kInvalidExpression,
                          fmt::format("{}: WHERE ({}) names {}, which is not a partition "
                                      "column: OPTIMIZE selects whole partitions",
                                      context, *where_, column.LogicalName()));
      }
    }
  }

  TransactionOptions options = options_;
  for (const auto& f : RowLevelWriterFeatures()) options.enforced_features.push_back(f);
  ARROW_ASSIGN_OR_RAISE(auto txn, Transaction::Start(table, snapshot, options));

  // --- Plan: files in scope, by partition, into bins ---
  ScanBuilder scan_builder = snapshot->NewScan();
  if (where_) scan_builder.Filter(*where_);
  ARROW_ASSIGN_OR_RAISE(auto scan, scan_builder.Build());
  const std::vector<ScanFile> files = scan->files();
  OptimizeMetrics metrics;
  metrics.total_considered_files = static_cast<int64_t>(files.size());
  metrics.clustering_columns = order_by;
  const std::string cluster_tag = JsonStringArray(order_by);
  const LiveFiles& live = snapshot->live_files();
  auto clustered_already = [&](const ScanFile& f) {
    const AddFile add = AddForLiveFile(live.actions(f.file_ref), f.file_ref.row);
    auto it = add.tags.find(kZCubeZOrderBy);
    return add.clustering_provider.has_value() && it != add.tags.end() &&
           it->second == cluster_tag;
  };
  std::map<std::string, std::vector<const ScanFile*>> by_partition;
  for (const auto& f : files) by_partition[PartitionKey(f)].push_back(&f);
  std::vector<Bin> bins;
  for (auto& [key, group] : by_partition) {
    if (!order_by.empty()) {
      Bin bin;
      bin.zorder = true;
      for (const ScanFile* f : group) {
        if (clustered && !full_ && clustered_already(*f)) continue;
        bin.files.push_back(f);
        bin.bytes += f->size;
      }
      if (bin.files.empty()) continue;
      if (clustered && bin.files.size() == 1 && clustered_already(*bin.files[0])) continue;
      bins.push_back(std::move(bin));
      continue;
    }
    std::vector<const ScanFile*> candidates;
    for (const ScanFile* f : group) {
      const bool has_dv = f->deletion_vector.has_value();
      if (purge_) {
        if (has_dv) candidates.push_back(f);
        continue;
      }
      const int64_t records = f->num_records.value_or(0);
      const bool too_deleted =
          has_dv && (records <= 0 || static_cast<double>(f->deleted_rows) >
                                         max_deleted_rows_ratio_ * static_cast<double>(records));
      if (f->size < min_size || too_deleted) candidates.push_back(f);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const ScanFile* a, const ScanFile* b) { return a->size < b->size; });
    Bin bin;
    auto close = [&] {
      const bool has_dv = std::any_of(bin.files.begin(), bin.files.end(),
                                      [](const ScanFile* f) { return f->deletion_vector; });
      if (bin.files.size() > 1 || (bin.files.size() == 1 && has_dv)) bins.push_back(bin);
      bin = Bin{};
    };
    for (const ScanFile* f : candidates) {
      if (!bin.files.empty() && bin.bytes + f->size > target) close();
      bin.files.push_back(f);
      bin.bytes += f->size;
    }
    close();
  }
  metrics.num_batches = static_cast<int64_t>(bins.size());

  // --- Rewrite ---
  ARROW_ASSIGN_OR_RAISE(auto writer_options,
                        WriterOptionsFor(table->root(), table->store()->filesystem(), schema,
                                         snapshot->metadata(), ""));
  ARROW_RETURN_NOT_OK(IndexClusteringColumns(*snapshot, schema, &writer_options));
  writer_options.data_change = false;
  writer_options.target_file_size = target;
  RowRewriterOptions reader_options;
  reader_options.snapshot = snapshot;
  reader_options.schema = schema;
  reader_options.data_options = writer_options;
  reader_options.operation = op_name;
  ARROW_ASSIGN_OR_RAISE(auto reader, RowRewriter::Make(std::move(reader_options)));

  OptimizeProgress progress;
  for (const auto& bin : bins) {
    progress.files_to_read += static_cast<int64_t>(bin.files.size());
    progress.bytes_to_read += bin.bytes;
  }
  std::mutex mutex;  // guards progress, writers, bin_adds, first_error
  std::vector<std::unique_ptr<DataWriter>> writers;
  std::vector<std::vector<AddFile>> bin_adds(bins.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> rows_written{0};
  arrow::Status first_error;
  auto report = [&](int64_t files_read, int64_t bytes_read, int64_t files_written) {
    std::lock_guard lock(mutex);
    progress.files_read += files_read;
    progress.bytes_read += bytes_read;
    progress.files_written += files_written;
    if (on_progress_) on_progress_(progress);
  };
  auto rewrite_bin = [&](size_t b) -> arrow::Status {
    const Bin& bin = bins[b];
    ARROW_ASSIGN_OR_RAISE(auto owned, DataWriter::Make(writer_options));
    DataWriter* writer = owned.get();
    {
      std::lock_guard lock(mutex);
      writers.push_back(std::move(owned));
    }
    // The bin's files are read a group at a time on the file task pool, the next group while
    // the writer takes the current one.
    auto read_group = [&](size_t first) -> arrow::Result<std::vector<FileRows>> {
      const size_t count = std::min(kReadGroup, bin.files.size() - first);
      std::vector<FileRows> out(count);
      ARROW_RETURN_NOT_OK(RunFileTasks(static_cast<int>(count), [&](int i) -> arrow::Status {
        ARROW_ASSIGN_OR_RAISE(out[static_cast<size_t>(i)],
                              reader->Read(bin.files[first + static_cast<size_t>(i)]->file_ref));
        return arrow::Status::OK();
      }));
      return out;
    };
    std::vector<std::shared_ptr<arrow::RecordBatch>> held;
    auto next_group = std::async(std::launch::async, read_group, 0);
    for (size_t first = 0; first < bin.files.size(); first += kReadGroup) {
      auto group = next_group.get();
      if (first + kReadGroup < bin.files.size()) {
        next_group = std::async(std::launch::async, read_group, first + kReadGroup);
      }
      // Returning destroys `next_group`, which waits for the reads under way.
      ARROW_RETURN_NOT_OK(group.status());
      int64_t bytes = 0;
      for (size_t i = 0; i < group->size(); ++i) {
        FileRows& rows = (*group)[i];
        bytes += bin.files[first + i]->size;
        rows_written += rows.rows->num_rows();
        if (bin.zorder) {
          held.push_back(std::move(rows.rows));
        } else if (rows.rows->num_rows() > 0) {
          ARROW_RETURN_NOT_OK(writer->Write(rows.rows));
        }
      }
      report(static_cast<int64_t>(group->size()), bytes, 0);
    }
    if (bin.zorder) {
      ARROW_ASSIGN_OR_RAISE(auto all, arrow::ConcatenateRecordBatches(held));
      held.clear();
      ARROW_ASSIGN_OR_RAISE(auto sorted, SortByZOrder(all, order_by));
      all.reset();
      for (int64_t offset = 0; offset < sorted->num_rows(); offset += kWriteSlice) {
        ARROW_RETURN_NOT_OK(writer->Write(sorted->Slice(offset, kWriteSlice)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto adds, writer->Finish());
    if (clustered) {
      const std::string cube = RandomUuidV4();
      for (auto& add : adds) {
        add.clustering_provider = "liquid";
        add.tags[kZCubeId] = cube;
        add.tags[kZCubeZOrderBy] = cluster_tag;
      }
    }
    report(0, 0, static_cast<int64_t>(adds.size()));
    std::lock_guard lock(mutex);
    bin_adds[b] = std::move(adds);
    return arrow::Status::OK();
  };
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int lanes = std::max(
      1, std::min<int>(parallelism_ > 0 ? parallelism_ : std::min(hardware, 4),
                       static_cast<int>(bins.size())));
  // Plain threads, not pool tasks: reads wait on Arrow's pools themselves.
  std::vector<std::thread> threads;
  for (int lane = 0; lane < lanes && !bins.empty(); ++lane) {
    threads.emplace_back([&] {
      while (!stop) {
        const size_t b = next++;
        if (b >= bins.size()) return;
        auto st = rewrite_bin(b);
        if (!st.ok()) {
          std::lock_guard lock(mutex);
          if (first_error.ok()) first_error = std::move(st);
          stop = true;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  auto abort_all = [&] {
    for (auto& w : writers) (void)w->Abort();
  };
  if (!first_error.ok()) {
    abort_all();
    return first_error;
  }

  // --- Commit ---
  std::vector<RemoveFile> removes;
  std::vector<std::string> read_paths;
  std::vector<int64_t> removed_sizes;
  std::set<std::string> partitions;
  const int64_t now = WallClockMillis();
  for (const auto& bin : bins) {
    for (const ScanFile* f : bin.files) {
      RemoveFile remove = RemoveForLiveFile(live, f->file_ref, now);
      remove.data_change = false;
      removes.push_back(std::move(remove));
      read_paths.push_back(f->log_path);
      removed_sizes.push_back(f->size);
      partitions.insert(PartitionKey(*f));
      if (f->deletion_vector) {
        ++metrics.num_deletion_vectors_removed;
        metrics.num_deletion_vector_rows_removed += f->deleted_rows;
      }
    }
  }
  if (!zorder_by_.empty()) {
    ZOrderStats z;
    std::set<std::string> cubes;
    for (const auto& bin : bins) {
      for (const ScanFile* f : bin.files) {
        const AddFile add = AddForLiveFile(live.actions(f->file_ref), f->file_ref.row);
        auto by = add.tags.find(kZCubeZOrderBy);
        auto id = add.tags.find(kZCubeId);
        const bool in_cube = by != add.tags.end() && by->second == cluster_tag &&
                             id != add.tags.end();
        ZOrderFileStats& into = in_cube ? z.input_cube_files : z.input_other_files;
        ++into.num;
        into.size += f->size;
        if (in_cube) cubes.insert(id->second);
        ++z.merged_files.num;
        z.merged_files.size += f->size;
      }
    }
    z.input_num_cubes = static_cast<int64_t>(cubes.size());
    z.merged_num_cubes = z.input_num_cubes;
    z.num_output_cubes = static_cast<int64_t>(bins.size());
    metrics.zorder_stats = z;
  }
  std::vector<AddFile> adds;
  std::vector<int64_t> added_sizes;
  for (auto& group : bin_adds) {
    for (auto& add : group) {
      added_sizes.push_back(add.size);
      adds.push_back(std::move(add));
    }
  }
  std::sort(added_sizes.begin(), added_sizes.end());
  metrics.num_rows = rows_written;
  metrics.num_files_added = static_cast<int64_t>(adds.size());
  metrics.num_files_removed = static_cast<int64_t>(removes.size());
  metrics.files_added = SizesOf(added_sizes);
  metrics.files_removed = SizesOf(removed_sizes);
  metrics.p25_file_size = Percentile(added_sizes, 0.25);
  metrics.p50_file_size = Percentile(added_sizes, 0.50);
  metrics.p75_file_size = Percentile(added_sizes, 0.75);
  metrics.partitions_optimized = static_cast<int64_t>(partitions.size());
  metrics.total_files_skipped = metrics.total_considered_files - metrics.num_files_removed;
  if (removes.empty()) {
    abort_all();
    metrics.execution_time_ms = MillisSince(start);
    return metrics;
  }

  const auto features = EffectiveFeatures(snapshot->protocol());
  if (std::find(features.begin(), features.end(), "rowTracking") != features.end()) {
    txn->SetCommitTag("delta.rowTracking.preserved", "false");
  }
  txn->ReadFiles(read_paths);
  txn->RemoveFiles(std::move(removes));
  txn->AddFiles(std::move(adds));
  std::map<std::string, std::string> parameters;
  parameters["predicate"] = where_ ? JsonStringArray({*where_}) : "[]";
  if (purge_) {
    parameters["applyPurge"] = "true";
  } else {
    parameters["zOrderBy"] = clustered ? "[]" : JsonStringArray(order_by);
    parameters["clusterBy"] = clustered ? cluster_tag : "[]";
    parameters["auto"] = "false";
    if (clustered) parameters["isFull"] = full_ ? "true" : "false";
  }
  std::map<std::string, std::string> named;
  for (const auto& [name, value] : metrics.Named()) named[name] = std::to_string(value);
  auto committed = txn->Commit(op_name, parameters, named);
  if (!committed.ok()) {
    // Files a commit may reference must survive an unknown outcome; VACUUM removes them later
    // if the commit did not land.
    if (!IsDeltaError(committed.status(), DeltaErrorCode::kCommitStateUnknown)) abort_all();
    return committed.status();
  }
  metrics.version = committed->version;
  metrics.execution_time_ms = MillisSince(start);
  return metrics;
}

}  // namespace deltacpp
