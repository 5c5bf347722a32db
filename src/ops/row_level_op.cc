#include "ops/row_level_op.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include "deltacpp/error.h"
#include "deltacpp/scan.h"
#include "expr/binder.h"
#include "expr/data_skipping.h"
#include "expr/file_stats.h"
#include "expr/parser.h"
#include "expr/to_arrow.h"
#include "log/file_action_schema.h"
#include "ops/data_writer_settings.h"
#include "ops/op_util.h"
#include "ops/option_text.h"
#include "protocol/partition_values.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "txn/writer_features.h"
#include "util/uri.h"

namespace deltacpp::internal {

int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

arrow::Status ForEachCandidateRead(
    const RowLevelOperation& op, const std::vector<size_t>& candidate_indexes,
    const std::function<arrow::Status(size_t index, FileRows file)>& each) {
  if (candidate_indexes.empty()) return arrow::Status::OK();
  // A plain thread, not a pool task: the read waits on Arrow's pools itself, and a pool task
  // waiting for its own pool could deadlock a small pool.
  auto read = [&op](size_t index) { return op.rewriter->Read(op.candidates[index]); };
  auto next = std::async(std::launch::async, read, candidate_indexes[0]);
  for (size_t k = 0; k < candidate_indexes.size(); ++k) {
    auto current = next.get();
    if (k + 1 < candidate_indexes.size()) {
      next = std::async(std::launch::async, read, candidate_indexes[k + 1]);
    }
    // Returning destroys `next`, which waits for the read under way.
    ARROW_RETURN_NOT_OK(current.status());
    ARROW_RETURN_NOT_OK(each(candidate_indexes[k], std::move(*current)));
  }
  return arrow::Status::OK();
}

int ChooseLanes(const RowLevelOperation& op, const std::vector<size_t>& candidate_indexes) {
  const int files = static_cast<int>(candidate_indexes.size());
  if (op.parallelism > 0) return std::max(1, std::min(op.parallelism, files));
  constexpr int64_t kParallelBytes = 64LL << 20;
  int64_t bytes = 0;
  const LiveFiles& live = op.snapshot->live_files();
  for (size_t i : candidate_indexes) {
    const FileRef ref = op.candidates[i];
    bytes += RemoveForLiveFile(live.actions(ref), ref.row, 0).size.value_or(0);
  }
  if (bytes < kParallelBytes) return 1;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min({threads, 4, files}));
}

arrow::Status ForEachCandidateInLanes(
    const RowLevelOperation& op, const std::vector<size_t>& candidate_indexes, int lanes,
    const std::function<arrow::Status(int lane, size_t index, FileRows file)>& each) {
  if (lanes <= 1 || candidate_indexes.size() < 2) {
    return ForEachCandidateRead(op, candidate_indexes, [&](size_t index, FileRows file) {
      return each(0, index, std::move(file));
    });
  }
  ARROW_RETURN_NOT_OK(op.rewriter->MakeLanes(lanes));
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  arrow::Status first_error;
  auto fail = [&](arrow::Status st) {
    std::lock_guard lock(error_mutex);
    if (first_error.ok()) first_error = std::move(st);
    stop = true;
  };
  // Plain threads, not pool tasks: a read waits on Arrow's pools itself.
  std::vector<std::thread> threads;
  for (int lane = 0; lane < lanes; ++lane) {
    threads.emplace_back([&, lane] {
      while (!stop) {
        const size_t k = next++;
        if (k >= candidate_indexes.size()) return;
        const size_t index = candidate_indexes[k];
        auto rows = op.rewriter->Read(op.candidates[index]);
        if (!rows.ok()) return fail(rows.status());
        auto st = each(lane, index, std::move(*rows));
        if (!st.ok()) return fail(std::move(st));
      }
    });
  }
  for (auto& t : threads) t.join();
  return first_error;
}

arrow::Result<RewriteOutcome> FinishRewrite(RowLevelOperation& op, const arrow::Status& run_status,
                                            std::chrono::steady_clock::duration* rewrite_time) {
  if (!run_status.ok()) {
    (void)op.rewriter->Abort();
    return run_status;
  }
  const auto finish_start = std::chrono::steady_clock::now();
  auto finished = op.rewriter->Finish();
  if (!finished.ok()) {
    (void)op.rewriter->Abort();
    return finished.status();
  }
  *rewrite_time += std::chrono::steady_clock::now() - finish_start;
  return std::move(*finished);
}

arrow::Result<std::optional<int64_t>> CommitUnlessUnchanged(
    RowLevelOperation& op, RewriteOutcome outcome,
    const std::map<std::string, std::string>& parameters,
    const std::vector<std::pair<std::string, int64_t>>& named) {
  if (outcome.removes.empty() && outcome.adds.empty()) {
    (void)op.rewriter->Abort();
    return std::nullopt;
  }
  std::map<std::string, std::string> metrics;
  for (const auto& [name, value] : named) metrics[name] = std::to_string(value);
  ARROW_ASSIGN_OR_RAISE(auto version,
                        CommitRowLevelOperation(op, std::move(outcome), parameters, metrics));
  return version;
}

arrow::Result<RowLevelOperation> StartRowLevelOperation(
    std::shared_ptr<DeltaTable> table, const std::string& location, std::string name,
    const std::optional<std::string>& predicate, TransactionOptions options,
    std::shared_ptr<arrow::Schema> write_schema) {
  if (!table) {
    ARROW_ASSIGN_OR_RAISE(table, DeltaTable::Open(location));
  }
  const std::string context = fmt::format("{} on table {}: ", name, table->root());
  if (predicate) {
    ARROW_RETURN_NOT_OK(CheckOptionText(*predicate, context, "the predicate"));
  }
  RowLevelOperation op;
  op.name = std::move(name);
  op.predicate = predicate;
  op.table = table;
  ARROW_ASSIGN_OR_RAISE(auto latest, table->Latest());
  op.snapshot = latest;
  const auto& snapshot = *op.snapshot;
  // Rows copied unchanged keep satisfying the table's rules; new rows are checked by the
  // operation (UPDATE) before they are written.
  const auto& row_level = RowLevelWriterFeatures();
  options.enforced_features.insert(options.enforced_features.end(), row_level.begin(),
                                   row_level.end());
  // delta-spark's default for row-level operations is the table's isolation level, which is
  // WriteSerializable unless the table asks for Serializable: blind appends that land meanwhile
  // do not conflict.
  if (!options.isolation) {
    options.isolation = snapshot.config().serializable_isolation
                            ? IsolationLevel::kSerializable
                            : IsolationLevel::kWriteSerializable;
  }
  ARROW_ASSIGN_OR_RAISE(op.txn, Transaction::Start(table, op.snapshot, options));

  if (predicate) {
    auto bound = [&]() -> arrow::Result<BoundExpr> {
      ARROW_ASSIGN_OR_RAISE(auto parsed, ParseExpression(*predicate));
      return BindPredicate(parsed, *snapshot.schema(), /*allow_current_time=*/true);
    }();
    if (!bound.ok()) {
      return bound.status().WithMessage(fmt::format("{}version {}: predicate ({}): {}", context,
                                                    snapshot.version(), *predicate,
                                                    bound.status().message()));
    }
    op.bound = std::move(*bound);
    ARROW_ASSIGN_OR_RAISE(auto match, ToArrowFilter(*op.bound));
    ARROW_ASSIGN_OR_RAISE(op.match, match.Bind(*snapshot.schema()));
    // The transaction binds its read predicates again when it checks conflicts, without the
    // current time (its value would differ); a predicate that needs it counts as reading the
    // whole table, which is never less strict.
    auto parsed = ParseExpression(*predicate);
    if (parsed.ok() && BindPredicate(*parsed, *snapshot.schema()).ok()) {
      op.txn->ReadPredicate(*predicate);
    } else {
      op.txn->ReadWholeTable();
    }
    ARROW_ASSIGN_OR_RAISE(auto scan, snapshot.NewScan().Filter(*predicate).Build());
    for (const auto& f : scan->files()) {
      op.candidates.push_back(f.file_ref);
      op.candidate_paths.push_back(f.log_path);
      if (f.all_rows_match) op.all_rows_match.push_back(f.file_ref);
    }
  } else {
    op.txn->ReadWholeTable();
    const LiveFiles& files = snapshot.live_files();
    files.ForEach([&](FileRef ref) {
      op.candidates.push_back(ref);
      op.candidate_paths.push_back(RemoveForLiveFile(files.actions(ref), ref.row, 0).path);
      op.all_rows_match.push_back(ref);
    });
  }

  if (!write_schema) write_schema = snapshot.schema();
  ARROW_ASSIGN_OR_RAISE(auto writer_options,
                        WriterOptionsFor(table->root(), table->store()->filesystem(),
                                         write_schema, snapshot.metadata(), ""));
  ARROW_RETURN_NOT_OK(IndexClusteringColumns(snapshot, write_schema, &writer_options));
  RowRewriterOptions rewriter;
  rewriter.snapshot = op.snapshot;
  rewriter.schema = write_schema;
  rewriter.data_options = std::move(writer_options);
  const auto features = EffectiveFeatures(snapshot.protocol());
  const bool dv_supported =
      std::find(features.begin(), features.end(), "deletionVectors") != features.end();
  rewriter.mode = snapshot.config().deletion_vectors && dv_supported
                      ? RewriteMode::kDeletionVectors
                      : RewriteMode::kCopyOnWrite;
  rewriter.change_data_feed = snapshot.config().change_data_feed;
  rewriter.operation = predicate ? fmt::format("{} ({})", op.name, *predicate) : op.name;
  ARROW_ASSIGN_OR_RAISE(op.rewriter, RowRewriter::Make(std::move(rewriter)));
  return op;
}

bool AllRowsMatchFile(const RowLevelOperation& op, FileRef file) {
  return std::binary_search(op.all_rows_match.begin(), op.all_rows_match.end(), file);
}

arrow::Result<std::shared_ptr<arrow::BooleanArray>> MatchMask(const RowLevelOperation& op,
                                                              const arrow::RecordBatch& rows) {
  std::shared_ptr<arrow::Array> mask;
  if (!op.match) {
    ARROW_ASSIGN_OR_RAISE(mask, arrow::MakeArrayFromScalar(arrow::BooleanScalar(true),
                                                           rows.num_rows()));
  } else {
    ARROW_ASSIGN_OR_RAISE(auto value, arrow::compute::ExecuteScalarExpression(
                                          *op.match, arrow::compute::ExecBatch(rows)));
    if (value.is_array()) {
      mask = value.make_array();
    } else {
      ARROW_ASSIGN_OR_RAISE(mask, arrow::MakeArrayFromScalar(*value.scalar(), rows.num_rows()));
    }
  }
  return std::static_pointer_cast<arrow::BooleanArray>(mask);
}

arrow::Result<int64_t> CommitRowLevelOperation(
    RowLevelOperation& op, RewriteOutcome outcome,
    const std::map<std::string, std::string>& parameters,
    const std::map<std::string, std::string>& metrics) {
  auto& txn = *op.txn;
  const auto features = EffectiveFeatures(op.snapshot->protocol());
  // Rows written to new files get fresh row ids: on a row-tracking table the commit says so,
  // as the protocol asks of a writer that does not materialise them.
  if (outcome.rows_moved &&
      std::find(features.begin(), features.end(), "rowTracking") != features.end()) {
    txn.SetCommitTag("delta.rowTracking.preserved", "false");
  }
  txn.ReadFiles(op.candidate_paths);
  txn.RemoveFiles(std::move(outcome.removes));
  txn.AddFiles(std::move(outcome.adds));
  txn.AddCdcFiles(std::move(outcome.change_files));
  auto committed = txn.Commit(op.name, parameters, metrics);
  if (!committed.ok()) {
    // Files a commit may reference must survive an unknown outcome; VACUUM removes them later
    // if the commit did not land.
    if (!IsDeltaError(committed.status(), DeltaErrorCode::kCommitStateUnknown)) {
      (void)op.rewriter->Abort();
    }
    return committed.status();
  }
  return committed->version;
}

}  // namespace deltacpp::internal
