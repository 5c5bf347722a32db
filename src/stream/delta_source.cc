// The Delta table source: positions (version, index) over the initial snapshot's files and the
// data-changing adds of later commits; each batch's offset records where it starts and ends,
// so a replay reads exactly the same files.
#include "deltacpp/stream/delta_source.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "deltacpp/table_changes.h"
#include "log/commit_parser.h"
#include "log/commit_timeline.h"
#include "log/log_file_name.h"
#include "protocol/schema_json.h"
#include "scan/change_range.h"
#include "scan/change_schema_check.h"
#include "scan/commit_changes.h"
#include "scan/data_files_reader.h"
#include "stream/checkpoint_dir.h"

namespace deltacpp {

using namespace internal;  // NOLINT: the source glues internal layers together

namespace {

constexpr int64_t kDefaultMaxFiles = 1000;

// The next file to read: index `index` of the initial snapshot at `version` (snapshot) or of
// the data-changing adds of commit `version`.
struct Position {
  int64_t version = 0;
  int64_t index = 0;
  bool snapshot = false;
  bool operator==(const Position&) const = default;
};

std::string PositionJson(const Position& p) {
  return fmt::format("{{\"version\":{},\"index\":{},\"snapshot\":{}}}", p.version, p.index,
                     p.snapshot ? "true" : "false");
}

struct Offset {
  std::string table_id;
  Position from, to;
};

std::string OffsetJson(const Offset& o) {
  std::string id;
  for (char c : o.table_id) {
    if (c != '"' && c != '\\') id += c;
  }
  return fmt::format("{{\"reservoirId\":\"{}\",\"from\":{},\"to\":{}}}", id, PositionJson(o.from),
                     PositionJson(o.to));
}

arrow::Result<Offset> ParseOffset(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  auto corrupt = [&] {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("'{}' is not a Delta source offset", text));
  };
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("reservoirId") ||
      !doc["reservoirId"].IsString()) {
    return corrupt();
  }
  Offset o;
  o.table_id = doc["reservoirId"].GetString();
  for (auto [key, target] : {std::pair{"from", &o.from}, std::pair{"to", &o.to}}) {
    if (!doc.HasMember(key) || !doc[key].IsObject()) return corrupt();
    const auto& p = doc[key];
    if (!p.HasMember("version") || !p["version"].IsInt64() || !p.HasMember("index") ||
        !p["index"].IsInt64() || !p.HasMember("snapshot") || !p["snapshot"].IsBool()) {
      return corrupt();
    }
    *target = {p["version"].GetInt64(), p["index"].GetInt64(), p["snapshot"].GetBool()};
  }
  return o;
}

// What a stream takes from one commit.
struct CommitEntry {
  std::vector<AddedDataFile> files;  ///< after the change-commit policy
  int64_t num_actions = 0;           ///< adds, removes and cdc files (CDF rate limit)
  int64_t timestamp_ms = 0;
};

class DeltaSource : public StreamSource {
 public:
  explicit DeltaSource(DeltaSourceOptions options) : options_(std::move(options)) {}

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  arrow::Status Open(const std::string& state_dir) override {
    state_dir_ = state_dir;
    const int starts = options_.starting_version.has_value() +
                       options_.starting_timestamp_ms.has_value() + options_.starting_latest;
    if (starts > 1) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "startingVersion, startingTimestamp and latest are exclusive");
    }
    if (options_.starting_version && *options_.starting_version < 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("startingVersion {} is negative", *options_.starting_version));
    }
    ARROW_ASSIGN_OR_RAISE(table_, DeltaTable::Open(options_.location));
    ARROW_ASSIGN_OR_RAISE(auto latest, table_->Latest());
    schema_snapshot_ = latest;
    table_id_ = latest->metadata().id;
    schema_string_ = latest->metadata().schema_string;
    schema_ = latest->schema();
    if (options_.read_change_feed) {
      auto fields = schema_->fields();
      fields.push_back(arrow::field(std::string(kChangeTypeColumn), arrow::utf8()));
      fields.push_back(arrow::field(std::string(kCommitVersionColumn), arrow::int64()));
      fields.push_back(arrow::field(std::string(kCommitTimestampColumn),
                                    arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
      schema_ = arrow::schema(fields);
    }
    return arrow::Status::OK();
  }

  arrow::Status LimitToAvailableNow() override {
    ARROW_ASSIGN_OR_RAISE(auto latest, table_->Latest());
    available_until_ = latest->version();
    return arrow::Status::OK();
  }

  arrow::Result<std::optional<std::string>> PlanBatch(int64_t batch_id,
                                                      const std::optional<std::string>& start,
                                                      bool unlimited) override {
    Position from;
    if (start) {
      ARROW_ASSIGN_OR_RAISE(auto previous, ParseOffset(*start));
      ARROW_RETURN_NOT_OK(CheckSameTable(previous, batch_id));
      from = previous.to;
    } else {
      ARROW_ASSIGN_OR_RAISE(from, InitialPosition());
    }
    ARROW_ASSIGN_OR_RAISE(Position to, Advance(from, unlimited));
    if (to == from) return std::nullopt;
    return OffsetJson({table_id_, from, to});
  }

  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReadBatch(
      int64_t batch_id, const std::optional<std::string>& start,
      const std::string& end) override {
    (void)start;
    ARROW_ASSIGN_OR_RAISE(auto offset, ParseOffset(end));
    ARROW_RETURN_NOT_OK(CheckSameTable(offset, batch_id));
    std::vector<std::shared_ptr<arrow::RecordBatchReader>> parts;
    Position p = offset.from;
    if (p.snapshot) {
      ARROW_ASSIGN_OR_RAISE(auto files, SnapshotFiles(p.version));
      const int64_t stop = offset.to.snapshot ? offset.to.index
                                              : static_cast<int64_t>(files->size());
      std::vector<AddedDataFile> chosen(files->begin() + std::min<int64_t>(p.index, files->size()),
                                        files->begin() + std::min<int64_t>(stop, files->size()));
      ARROW_ASSIGN_OR_RAISE(auto snap, table_->SnapshotAt(p.version));
      ARROW_ASSIGN_OR_RAISE(auto rows, ReadFiles(std::move(chosen), p.version,
                                                 snap->timestamp_ms()));
      parts.push_back(std::move(rows));
      if (offset.to.snapshot) return Concatenate(parts);
      p = {p.version + 1, 0, false};
    }
    if (options_.read_change_feed) {
      // Whole commits [p.version, to.version).
      if (offset.to.version > p.version) {
        ARROW_ASSIGN_OR_RAISE(auto changes, TableChangesBuilder(table_)
                                                .StartingVersion(p.version)
                                                .EndingVersion(offset.to.version - 1)
                                                .Build());
        ARROW_ASSIGN_OR_RAISE(auto rows, changes->Execute());
        parts.push_back(std::move(rows));
      }
      return Concatenate(parts);
    }
    for (int64_t v = p.version; v <= offset.to.version; ++v) {
      const int64_t first = v == p.version ? p.index : 0;
      ARROW_ASSIGN_OR_RAISE(const CommitEntry* commit, LoadCommit(v));
      if (!commit) break;
      const int64_t stop = v == offset.to.version ? offset.to.index
                                                  : static_cast<int64_t>(commit->files.size());
      if (first >= stop) continue;
      std::vector<AddedDataFile> chosen(commit->files.begin() + first,
                                        commit->files.begin() + stop);
      ARROW_ASSIGN_OR_RAISE(auto rows, ReadFiles(std::move(chosen), v, commit->timestamp_ms));
      parts.push_back(std::move(rows));
    }
    Forget(offset.to.version);
    return Concatenate(parts);
  }

  std::optional<int64_t> Backlog(const std::optional<std::string>& end) override {
    if (!end) return std::nullopt;
    auto offset = ParseOffset(*end);
    auto latest = table_->Latest();
    if (!offset.ok() || !latest.ok()) return std::nullopt;
    // Commits not read yet (the one the next batch starts in included).
    return std::max<int64_t>(0, (*latest)->version() - offset->to.version + 1);
  }

 private:
  arrow::Status CheckSameTable(const Offset& o, int64_t batch_id) const {
    if (o.table_id == table_id_) return arrow::Status::OK();
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("batch {}: the stream read table {} with id {}, but the table "
                                  "there now has id {} (replaced?); start a new query with a "
                                  "new checkpoint",
                                  batch_id, table_->root(), o.table_id, table_id_));
  }

  // Where the query starts: chosen on its first run and kept in the source's state, so that a
  // run that found nothing to read (startingVersion=latest) does not move the start.
  arrow::Result<Position> InitialPosition() {
    const std::string path = state_dir_ + "/start";
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      ARROW_ASSIGN_OR_RAISE(auto text, ReadSmallFile(path));
      while (!text.empty() && text.back() == '\n') text.pop_back();
      ARROW_ASSIGN_OR_RAISE(auto kept, ParseOffset(text));
      ARROW_RETURN_NOT_OK(CheckSameTable(kept, 0));
      return kept.from;
    }
    ARROW_ASSIGN_OR_RAISE(Position start, ChooseStart());
    ARROW_RETURN_NOT_OK(WriteFileAtomically(path, OffsetJson({table_id_, start, start}) + "\n"));
    return start;
  }

  arrow::Result<Position> ChooseStart() {
    ARROW_ASSIGN_OR_RAISE(auto latest, table_->Latest());
    if (options_.starting_version) {
      if (*options_.starting_version > latest->version() + 1) {
        return DeltaError(DeltaErrorCode::kVersionNotFound,
                          fmt::format("table {}: startingVersion {} is after the latest version "
                                      "{}",
                                      table_->root(), *options_.starting_version,
                                      latest->version()));
      }
      return Position{*options_.starting_version, 0, false};
    }
    if (options_.starting_timestamp_ms) {
      ARROW_ASSIGN_OR_RAISE(
          auto timeline, CommitTimeline::Load(table_->store(), table_->root(), latest->config()));
      ChangeRangeRequest request;
      request.start_timestamp_ms = options_.starting_timestamp_ms;
      ARROW_ASSIGN_OR_RAISE(auto range, ResolveChangeRange(timeline, request, table_->root()));
      return Position{range.start, 0, false};
    }
    if (options_.starting_latest) return Position{latest->version() + 1, 0, false};
    return Position{latest->version(), 0, true};
  }

  // The position after the next batch's files from `from`.
  arrow::Result<Position> Advance(Position from, bool unlimited) {
    const int64_t max_files = options_.limits.max_files.value_or(kDefaultMaxFiles);
    const auto max_bytes = options_.limits.max_bytes;
    int64_t files = 0, bytes = 0;
    auto full = [&] {
      if (unlimited || files == 0) return false;
      return files >= max_files || (max_bytes && bytes >= *max_bytes);
    };
    Position p = from;
    if (p.snapshot) {
      ARROW_ASSIGN_OR_RAISE(auto snapshot_files, SnapshotFiles(p.version));
      const auto n = static_cast<int64_t>(snapshot_files->size());
      while (p.index < n && !full()) {
        bytes += (*snapshot_files)[p.index].size;
        ++files;
        ++p.index;
      }
      if (p.index < n) return p;
      p = {p.version + 1, 0, false};
    }
    ARROW_ASSIGN_OR_RAISE(auto latest, table_->Latest());
    int64_t last = latest->version();
    if (available_until_) last = std::min(last, *available_until_);
    while (p.version <= last && !full()) {
      ARROW_ASSIGN_OR_RAISE(const CommitEntry* commit, LoadCommit(p.version));
      if (!commit) break;
      if (options_.read_change_feed) {  // whole commits
        files += std::max<int64_t>(1, commit->num_actions);
        p = {p.version + 1, 0, false};
        continue;
      }
      const auto n = static_cast<int64_t>(commit->files.size());
      while (p.index < n && !full()) {
        bytes += commit->files[p.index].size;
        ++files;
        ++p.index;
      }
      if (p.index < n) return p;
      p = {p.version + 1, 0, false};
    }
    return p;
  }

  // The initial snapshot's files at `version`, by modification time then path.
  arrow::Result<const std::vector<AddedDataFile>*> SnapshotFiles(int64_t version) {
    if (snapshot_files_ && snapshot_files_version_ == version) return &*snapshot_files_;
    ARROW_ASSIGN_OR_RAISE(auto snap, table_->SnapshotAt(version));
    std::vector<AddedDataFile> files;
    const auto& live = snap->live_files();
    live.ForEach(
        [&](FileRef ref) { files.push_back(AddedDataFileAt(live.actions(ref), ref.row)); });
    std::sort(files.begin(), files.end(), [](const AddedDataFile& a, const AddedDataFile& b) {
      return std::tie(a.modification_time, a.path) < std::tie(b.modification_time, b.path);
    });
    snapshot_files_ = std::move(files);
    snapshot_files_version_ = version;
    return &*snapshot_files_;
  }

  // Commit `version` as the stream takes it; nullptr when it does not exist yet.
  // A metaData action at `version`. Rows of versions before the read schema's own (a stream
  // started at an earlier version) are read when that schema can serve them, as delta-spark
  // reads across additive changes; a change after it stops the stream, whose next run reads on
  // with the new schema.
  arrow::Status CheckMetadata(const Metadata& metadata, int64_t version) const {
    if (metadata.id != table_id_) {
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("table {} version {}: the table was replaced (its id "
                                    "changed from {} to {}); start a new stream",
                                    table_->root(), version, table_id_, metadata.id));
    }
    if (metadata.schema_string == schema_string_) return arrow::Status::OK();
    if (version < schema_snapshot_->version()) {
      ARROW_ASSIGN_OR_RAISE(auto schema, SchemaFromDeltaJson(metadata.schema_string));
      const SchemaVersion data{
          schema, TableConfig::Parse(metadata.configuration).column_mapping_mode,
          metadata.partition_columns, version};
      const SchemaVersion read{schema_snapshot_->schema(), schema_snapshot_->column_mapping_mode(),
                               schema_snapshot_->partition_columns(),
                               schema_snapshot_->version()};
      if (IsChangeDataReadCompatible(data, read)) return arrow::Status::OK();
      return DeltaError(DeltaErrorCode::kSchemaMismatch,
                        fmt::format("table {} version {}: rows written with this version's "
                                    "schema cannot be read with the schema of version {} (a "
                                    "column dropped, renamed or retyped, or partitioning "
                                    "changed); start the stream after version {}",
                                    table_->root(), version, schema_snapshot_->version(),
                                    version));
    }
    return DeltaError(DeltaErrorCode::kSchemaMismatch,
                      fmt::format("table {} version {}: the table's schema changed; the "
                                  "stream stops here and reads on with the new schema when "
                                  "run again",
                                  table_->root(), version));
  }

  arrow::Result<const CommitEntry*> LoadCommit(int64_t version) {
    auto cached = commits_.find(version);
    if (cached != commits_.end()) return &cached->second;
    const std::string path = table_->root() + "/_delta_log/" + CommitFileName(version);
    auto buf = table_->store()->Read(path);
    if (!buf.ok()) {
      ARROW_ASSIGN_OR_RAISE(auto latest, table_->Latest());
      if (version > latest->version()) return nullptr;
      return DeltaError(DeltaErrorCode::kVersionNotFound,
                        fmt::format("table {}: the stream needs commit {}, which is no longer "
                                    "in the log (cleaned up): {}",
                                    table_->root(), version, buf.status().message()));
    }
    ARROW_ASSIGN_OR_RAISE(auto actions,
                          ParseActionFile(std::string_view((*buf)->data_as<char>(),
                                                           (*buf)->size()),
                                          fmt::format("table {}: commit {}", table_->root(),
                                                      path)));
    CommitEntry entry;
    entry.num_actions = actions.num_adds + actions.num_removes +
                        static_cast<int64_t>(actions.cdc_files.size());
    if (actions.commit_info && actions.commit_info->in_commit_timestamp) {
      entry.timestamp_ms = *actions.commit_info->in_commit_timestamp;
    } else if (auto st = table_->store()->Stat(path); st.ok()) {
      entry.timestamp_ms = st->modification_time_ms;
    }
    if (actions.metadata) ARROW_RETURN_NOT_OK(CheckMetadata(*actions.metadata, version));
    if (!options_.read_change_feed) {
      auto changes = DataChangesOf(actions);
      if (changes.data_removes > 0) {
        const std::string op = actions.commit_info && actions.commit_info->operation
                                   ? *actions.commit_info->operation
                                   : std::string("operation unknown");
        if (options_.skip_change_commits) {
          changes.adds.clear();
        } else if (options_.ignore_changes) {
          // The files the commit rewrote are emitted again, rows it kept included.
        } else if (options_.ignore_deletes && changes.adds.empty()) {
          // Whole files removed (partition deletes): nothing to emit.
        } else {
          return DeltaError(
              DeltaErrorCode::kUnsupportedFeature,
              fmt::format("table {} version {}: the commit ({}) removes or changes existing "
                          "rows, which a stream of appended rows cannot follow; set "
                          "skipChangeCommits to skip such commits, or readChangeFeed to "
                          "stream the changes",
                          table_->root(), version, op));
        }
      }
      entry.files = std::move(changes.adds);
    }
    return &commits_.emplace(version, std::move(entry)).first->second;
  }

  // Drops cached commits before `version`.
  void Forget(int64_t version) {
    commits_.erase(commits_.begin(), commits_.lower_bound(version));
  }

  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> ReadFiles(
      std::vector<AddedDataFile> files, int64_t version, int64_t timestamp_ms) {
    ARROW_ASSIGN_OR_RAISE(auto rows, ReadDataFiles(*schema_snapshot_, std::move(files), version));
    if (!options_.read_change_feed) return rows;
    // Snapshot rows in a change feed: inserts of that version.
    ARROW_ASSIGN_OR_RAISE(auto table, rows->ToTable());
    const int64_t n = table->num_rows();
    ARROW_ASSIGN_OR_RAISE(auto types, arrow::MakeArrayFromScalar(arrow::StringScalar("insert"), n));
    ARROW_ASSIGN_OR_RAISE(auto versions,
                          arrow::MakeArrayFromScalar(arrow::Int64Scalar(version), n));
    const arrow::TimestampScalar stamp(timestamp_ms * 1000, schema_->fields().back()->type());
    ARROW_ASSIGN_OR_RAISE(auto stamps, arrow::MakeArrayFromScalar(stamp, n));
    auto columns = table->columns();
    columns.push_back(std::make_shared<arrow::ChunkedArray>(types));
    columns.push_back(std::make_shared<arrow::ChunkedArray>(versions));
    columns.push_back(std::make_shared<arrow::ChunkedArray>(stamps));
    return std::make_shared<arrow::TableBatchReader>(arrow::Table::Make(schema_, columns, n));
  }

  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Concatenate(
      const std::vector<std::shared_ptr<arrow::RecordBatchReader>>& parts) {
    std::vector<std::shared_ptr<arrow::Table>> tables;
    for (const auto& part : parts) {
      ARROW_ASSIGN_OR_RAISE(auto t, part->ToTable());
      // Every part is in the source schema's column order; only field metadata may differ.
      if (t->num_columns() != schema_->num_fields()) {
        return DeltaError(DeltaErrorCode::kSchemaMismatch,
                          fmt::format("table {}: rows read with {} columns, the stream's schema "
                                      "has {}",
                                      table_->root(), t->num_columns(), schema_->num_fields()));
      }
      tables.push_back(arrow::Table::Make(schema_, t->columns(), t->num_rows()));
    }
    std::shared_ptr<arrow::Table> all;
    if (tables.empty()) {
      ARROW_ASSIGN_OR_RAISE(all, arrow::Table::MakeEmpty(schema_));
    } else {
      ARROW_ASSIGN_OR_RAISE(all, arrow::ConcatenateTables(tables));
    }
    return std::make_shared<arrow::TableBatchReader>(all);
  }

  DeltaSourceOptions options_;
  std::string state_dir_;
  std::shared_ptr<DeltaTable> table_;
  std::shared_ptr<Snapshot> schema_snapshot_;
  std::string table_id_;
  std::string schema_string_;
  std::shared_ptr<arrow::Schema> schema_;
  std::optional<int64_t> available_until_;
  std::map<int64_t, CommitEntry> commits_;
  std::optional<std::vector<AddedDataFile>> snapshot_files_;
  int64_t snapshot_files_version_ = -1;
};

}  // namespace

std::shared_ptr<StreamSource> MakeDeltaSource(DeltaSourceOptions options) {
  return std::make_shared<DeltaSource>(std::move(options));
}

}  // namespace deltacpp
