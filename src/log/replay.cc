#include "log/replay.h"

#include <arrow/array/concatenate.h>
#include <arrow/compute/api.h>
#include <arrow/util/bit_util.h>
#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_set>

#include "deltacpp/error.h"
#include "log/checkpoint_reader.h"
#include "log/commit_parser.h"
#include "log/file_action_schema.h"
#include "log/live_file_list.h"
#include "protocol/path_encoding.h"
#include "protocol/schema_json.h"
#include "protocol/table_features.h"
#include "util/thread_pools.h"

namespace deltacpp::internal {

namespace {

// Hashes keys of every string type alike, so the set of seen keys is probed with views.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
};

// The rows of one batch that stay live, as runs [begin, end) in row order.
struct LiveRows {
  std::shared_ptr<arrow::RecordBatch> batch;
  std::vector<std::pair<int64_t, int64_t>> runs;
  int64_t rows = 0;
};

LiveRows RunsOf(const std::shared_ptr<arrow::RecordBatch>& batch, const std::vector<bool>& keep) {
  LiveRows out{batch, {}, 0};
  const int64_t n = static_cast<int64_t>(keep.size());
  for (int64_t i = 0; i < n;) {
    if (!keep[i]) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j < n && keep[j]) ++j;
    out.runs.emplace_back(i, j);
    out.rows += j - i;
    i = j;
  }
  return out;
}

// The live file list: every run of every part in order, copied once. A single run is returned
// as a slice without copying. A part whose runs are many and short (removes scattered through a
// checkpoint) is filtered first, which is cheaper than concatenating thousands of tiny slices.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> AssembleLiveFiles(std::vector<LiveRows> parts) {
  int64_t total = 0;
  size_t runs = 0;
  for (const auto& p : parts) {
    total += p.rows;
    runs += p.runs.size();
  }
  if (total == 0) return arrow::RecordBatch::MakeEmpty(FileActionSchema());
  for (auto& p : parts) {
    if (p.runs.empty()) continue;
    if (runs == 1) {
      const auto [begin, end] = p.runs[0];
      return p.batch->Slice(begin, end - begin);
    }
    if (p.runs.size() > 256 && static_cast<int64_t>(p.runs.size()) * 64 > p.rows) {
      arrow::BooleanBuilder mask;
      ARROW_RETURN_NOT_OK(mask.AppendEmptyValues(p.batch->num_rows()));
      ARROW_ASSIGN_OR_RAISE(auto mask_array, mask.Finish());
      auto* bits = mask_array->data()->GetMutableValues<uint8_t>(1, 0);
      for (const auto& [begin, end] : p.runs) arrow::bit_util::SetBitsTo(bits, begin, end - begin, true);
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(p.batch, mask_array));
      p.batch = filtered.record_batch();
      p.runs = {{0, p.batch->num_rows()}};
    }
  }
  const int num_columns = FileActionSchema()->num_fields();
  std::vector<std::shared_ptr<arrow::Array>> columns(num_columns);
  std::vector<arrow::Status> statuses(num_columns);
  // Columns are independent; the large string columns (stats, path) dominate.
  ARROW_RETURN_NOT_OK(CpuParallelFor(true, num_columns, [&](int c) {
    arrow::ArrayVector pieces;
    for (const auto& p : parts) {
      for (const auto& [begin, end] : p.runs) {
        pieces.push_back(p.batch->column(c)->Slice(begin, end - begin));
      }
    }
    auto joined = arrow::Concatenate(pieces);
    if (joined.ok()) {
      columns[c] = std::move(*joined);
    } else {
      statuses[c] = joined.status();
    }
    return arrow::Status::OK();
  }));
  for (const auto& st : statuses) ARROW_RETURN_NOT_OK(st);
  return arrow::RecordBatch::Make(FileActionSchema(), total, std::move(columns));
}

int64_t CommitTimestamp(const std::optional<CommitInfo>& ci, const TableConfig& config,
                        int64_t file_time_ms) {
  if (config.in_commit_timestamps && ci && ci->in_commit_timestamp) return *ci->in_commit_timestamp;
  return file_time_ms;
}

}  // namespace

namespace {

// The per-commit rules of the protocol for file actions: a path appears at most once among the
// adds and at most once among the removes (whatever its deletion vector), and the same path may
// be both added and removed only with different deletion vectors. Actions of one commit have no
// order, so a commit breaking these has no single meaning.
arrow::Status CheckCommitFileActions(const arrow::RecordBatch& batch, const std::string& root,
                                     int64_t version, const std::string& file) {
  const auto& paths = static_cast<const arrow::StringArray&>(*batch.column(kPathCol));
  const auto& is_add =
      static_cast<const arrow::BooleanArray&>(*batch.column(kNumFileActionColumns));
  FileKeyReader keys(batch, root);
  // Views into the batch for paths kept as they are (the usual case, no copy); keys that had
  // to be built are owned by `built`, whose elements never move.
  std::unordered_set<std::string_view> add_paths, remove_paths, add_keys;
  std::deque<std::string> built;
  std::string scratch;
  auto view = [&](std::string_view key) -> std::string_view {
    if (key.data() == scratch.data()) return built.emplace_back(key);
    return key;
  };
  auto fail = [&](std::string_view path, std::string_view what) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("table {} version {}: commit {}: file {} {} in one commit", root,
                                  version, file, path, what));
  };
  for (int pass = 0; pass < 2; ++pass) {
    const bool adds = pass == 0;
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      if (is_add.Value(i) != adds) continue;
      const std::string_view raw = paths.GetView(i);
      const std::string_view path =
          IsCanonicalAsIs(raw) ? raw : built.emplace_back(CanonicalFilePath(raw, root));
      if (adds) {
        if (!add_paths.insert(path).second) return fail(raw, "is added twice");
        add_keys.insert(view(keys.Key(i, &scratch)));
      } else {
        if (!remove_paths.insert(path).second) return fail(raw, "is removed twice");
        if (add_keys.contains(keys.Key(i, &scratch))) {
          return fail(raw, "is both added and removed with the same deletion vector");
        }
      }
    }
  }
  return arrow::Status::OK();
}

// Reads and parses commits in parallel; I/O and JSON parsing dominate.
arrow::Result<std::vector<ParsedActions>> ParseCommits(LogStore& store, const std::string& root,
                                                       const std::vector<LogFile>& commits) {
  std::vector<ParsedActions> parsed(commits.size());
  std::vector<arrow::Status> statuses(commits.size());
  auto parse_one = [&](int i) {
    auto buf = store.Read(commits[i].entry.path);
    if (!buf.ok()) {
      statuses[i] = DeltaError(DeltaErrorCode::kCorruptLog,
                               fmt::format("table {} version {}: cannot read commit {}: {}", root,
                                           commits[i].name.version, commits[i].entry.path,
                                           buf.status().message()));
      return arrow::Status::OK();
    }
    auto result = ParseActionFile(
        std::string_view((*buf)->data_as<char>(), (*buf)->size()),
        fmt::format("table {} version {}: commit {}", root, commits[i].name.version,
                    commits[i].entry.path));
    if (!result.ok()) {
      statuses[i] = result.status();
      return arrow::Status::OK();
    }
    if (result->file_actions && result->file_actions->num_rows() > 1) {
      statuses[i] = CheckCommitFileActions(*result->file_actions, root, commits[i].name.version,
                                           commits[i].entry.path);
    }
    parsed[i] = std::move(*result);
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(CpuParallelFor(
      commits.size() > 4, static_cast<int>(commits.size()), parse_one));
  for (auto& st : statuses) ARROW_RETURN_NOT_OK(st);
  return parsed;
}

// Reconciles `parsed` (commits after the base, oldest first) on top of `base` (a checkpoint's
// content, or an earlier snapshot's non-file actions plus its files `base_files`) into the state
// of `version`.
// Leaves commit_info and timestamp_ms to the caller.
// `commits` names the file of each of `parsed`, `base_source` that of `base` (for messages).
arrow::Result<Snapshot::State> Reconcile(const std::string& root,
                                         const std::shared_ptr<LogStore>& store, int64_t version,
                                         std::vector<ParsedActions>& parsed,
                                         const std::vector<LogFile>& commits,
                                         CheckpointContent& base, std::string_view base_source,
                                         const LiveFiles* base_files = nullptr) {
  Snapshot::State state;
  state.table_root = root;
  state.store = store;
  state.version = version;

  // Newest first: the first protocol/metaData/txn/domain seen wins.
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::string_view metadata_source;
  std::set<std::string> seen_domains;
  auto take_non_file = [&](ParsedActions& a, std::string_view source) {
    if (!protocol && a.protocol) protocol = std::move(a.protocol);
    if (!metadata && a.metadata) {
      metadata = std::move(a.metadata);
      metadata_source = source;
    }
    for (auto it = a.txns.rbegin(); it != a.txns.rend(); ++it) {
      state.txns.emplace(it->app_id, *it);
    }
    for (auto it = a.domains.rbegin(); it != a.domains.rend(); ++it) {
      if (seen_domains.insert(it->domain).second && !it->removed) {
        state.domains.emplace(it->domain, *it);
      }
    }
  };
  for (size_t i = parsed.size(); i-- > 0;) take_non_file(parsed[i], commits[i].entry.path);
  take_non_file(base.actions, base_source);

  const std::string at = fmt::format("table {} version {}", root, version);
  if (!protocol) {
    return DeltaError(DeltaErrorCode::kCorruptLog, at + ": the log has no protocol action");
  }
  ARROW_RETURN_NOT_OK(CheckReadSupported(*protocol, root, version));
  if (!metadata) {
    return DeltaError(DeltaErrorCode::kCorruptLog, at + ": the log has no metaData action");
  }
  state.protocol = std::move(*protocol);
  state.metadata = std::move(*metadata);
  {
    auto schema = SchemaFromDeltaJson(state.metadata.schema_string);
    if (!schema.ok()) {
      return arrow::Status(schema.status().code(),
                           fmt::format("{}: schema of the metaData in {}: {}", at,
                                       metadata_source, schema.status().message()),
                           schema.status().detail());
    }
    state.schema = *schema;
  }
  state.config = TableConfig::Parse(state.metadata.configuration);
  if (state.config.invalid.count("delta.columnMapping.mode")) {
    return DeltaError(DeltaErrorCode::kUnsupportedFeature,
                      fmt::format("{}: unsupported column mapping mode '{}' in "
                                  "delta.columnMapping.mode",
                                  at, state.metadata.configuration.at("delta.columnMapping.mode")));
  }
  // Readers date commits by these: a malformed value would misdate every version.
  for (const char* key : {"delta.enableInCommitTimestamps",
                          "delta.inCommitTimestampEnablementVersion",
                          "delta.inCommitTimestampEnablementTimestamp"}) {
    auto st = state.config.CheckValid(key, at);
    if (!st.ok()) return DeltaError(DeltaErrorCode::kCorruptLog, st.message());
  }
  state.column_mapping_mode = state.config.column_mapping_mode;

  // File actions: newest commit first; within a commit adds before removes, so a file that is
  // both removed and re-added in one commit stays live.
  std::unordered_set<std::string, KeyHash, std::equal_to<>> seen;
  std::string scratch;
  std::vector<LiveRows> commit_live;  // newest commit first
  for (auto it = parsed.rbegin(); it != parsed.rend(); ++it) {
    const auto& batch = it->file_actions;
    if (!batch) continue;
    const auto& is_add = static_cast<const arrow::BooleanArray&>(*batch->column(kNumFileActionColumns));
    FileKeyReader keys(*batch, root);
    std::vector<bool> keep(batch->num_rows(), false);
    for (int pass = 0; pass < 2; ++pass) {
      const bool adds = pass == 0;
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        if (is_add.Value(i) != adds) continue;
        const std::string_view key = keys.Key(i, &scratch);
        if (seen.contains(key)) continue;
        seen.emplace(key);
        if (adds) keep[i] = true;
      }
    }
    commit_live.push_back(RunsOf(batch, keep));
  }
  // The commits' live adds become one chunk, oldest commit first.
  std::optional<FileChunk> from_commits;
  std::reverse(commit_live.begin(), commit_live.end());
  ARROW_ASSIGN_OR_RAISE(auto commit_rows, AssembleLiveFiles(std::move(commit_live)));
  if (commit_rows->num_rows() > 0) {
    ARROW_ASSIGN_OR_RAISE(from_commits, MakeFileChunk(commit_rows, nullptr));
  }
  if (base_files) {
    // An earlier snapshot's files: only what the commits name is looked up and deselected.
    std::vector<std::string> gone(seen.begin(), seen.end());
    ARROW_ASSIGN_OR_RAISE(state.files,
                          UpdateLiveFiles(*base_files, gone, std::move(from_commits), root));
    return state;
  }
  // A checkpoint's batches stay as they were decoded, with a selection of their live rows.
  std::vector<FileChunk> chunks;
  for (const auto& batch : base.adds) {
    const auto& paths = *batch->column(kPathCol);
    std::vector<bool> keep(batch->num_rows(), false);
    if (seen.empty()) {
      for (int64_t i = 0; i < batch->num_rows(); ++i) keep[i] = paths.IsValid(i);
    } else {
      FileKeyReader keys(*batch, root);
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        // A null path is a row of another action.
        keep[i] = paths.IsValid(i) && !seen.contains(keys.Key(i, &scratch));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto chunk, MakeFileChunk(batch, &keep));
    if (chunk.num_live() > 0) chunks.push_back(std::move(chunk));
  }
  if (from_commits) chunks.push_back(std::move(*from_commits));
  state.files = LiveFiles(std::move(chunks));
  return state;
}

}  // namespace

arrow::Result<Snapshot::State> ReplayLogSegment(const std::shared_ptr<LogStore>& store,
                                                const LogSegment& segment) {
  const std::string& root = segment.table_root;
  CheckpointContent checkpoint;
  if (segment.checkpoint_version) {
    auto read = ReadCheckpoint(*store, segment);
    if (!read.ok()) {
      // As delta-spark does: a checkpoint that cannot be read is replayed around, from an older
      // checkpoint or from commit 0, when the commits it summarises are all still there.
      auto older = BuildLogSegment(*store, root, segment.version, *segment.checkpoint_version);
      if (!older.ok()) {
        return DeltaError(
            DeltaErrorCode::kCorruptLog,
            fmt::format("table {} version {}: the checkpoint of version {} cannot be read, and "
                        "the log cannot be replayed without it ({}): {}",
                        root, segment.version, *segment.checkpoint_version,
                        older.status().message(), read.status().message()));
      }
      return ReplayLogSegment(store, *older);
    }
    checkpoint = std::move(*read);
  }
  ARROW_ASSIGN_OR_RAISE(auto parsed, ParseCommits(*store, root, segment.commits));
  const std::string base_source =
      segment.checkpoint_files.empty() ? std::string() : segment.checkpoint_files[0].entry.path;
  ARROW_ASSIGN_OR_RAISE(auto state, Reconcile(root, store, segment.version, parsed,
                                              segment.commits, checkpoint, base_source));
  state.checkpoint_version = segment.checkpoint_version;

  // commitInfo and timestamp of this exact version.
  int64_t file_time = 0;
  if (!parsed.empty() && segment.commits.back().name.version == segment.version) {
    state.commit_info = parsed.back().commit_info;
    file_time = segment.commits.back().entry.modification_time_ms;
  } else if (segment.version_commit) {
    // The commit of a checkpointed version gives its commitInfo (and in-commit timestamp): one
    // that is listed but cannot be read or parsed is an error, not a missing timestamp.
    const std::string& path = segment.version_commit->entry.path;
    file_time = segment.version_commit->entry.modification_time_ms;
    auto buf = store->Read(path);
    if (!buf.ok()) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("table {} version {}: cannot read commit {}: {}", root,
                                    segment.version, path, buf.status().message()));
    }
    ARROW_ASSIGN_OR_RAISE(
        auto p, ParseActionFile(std::string_view((*buf)->data_as<char>(), (*buf)->size()),
                                fmt::format("table {} version {}: commit {}", root,
                                            segment.version, path)));
    state.commit_info = p.commit_info;
  } else if (!segment.checkpoint_files.empty()) {
    file_time = segment.checkpoint_files[0].entry.modification_time_ms;
  }
  state.timestamp_ms = CommitTimestamp(state.commit_info, state.config, file_time);
  return state;
}

arrow::Result<Snapshot::State> ReplayCommitsOnto(const Snapshot::State& base,
                                                 const std::vector<LogFile>& commits) {
  if (commits.empty()) return base;
  const std::string& root = base.table_root;
  for (size_t i = 0; i < commits.size(); ++i) {
    const int64_t expected = base.version + 1 + static_cast<int64_t>(i);
    if (commits[i].name.kind != LogFileKind::kCommit || commits[i].name.version != expected) {
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("table {}: commit {} is missing after version {}", root,
                                    expected, base.version));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto parsed, ParseCommits(*base.store, root, commits));
  CheckpointContent previous;
  previous.actions.protocol = base.protocol;
  previous.actions.metadata = base.metadata;
  for (const auto& [app_id, txn] : base.txns) previous.actions.txns.push_back(txn);
  for (const auto& [name, domain] : base.domains) previous.actions.domains.push_back(domain);
  ARROW_ASSIGN_OR_RAISE(
      auto state, Reconcile(root, base.store, commits.back().name.version, parsed, commits,
                            previous, fmt::format("the snapshot of version {}", base.version),
                            &base.files));
  state.checkpoint_version = base.checkpoint_version;
  state.commit_info = parsed.back().commit_info;
  state.timestamp_ms = CommitTimestamp(state.commit_info, state.config,
                                       commits.back().entry.modification_time_ms);
  return state;
}

}  // namespace deltacpp::internal
