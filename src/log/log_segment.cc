#include "log/log_segment.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <map>

#include "deltacpp/error.h"
#include "log/json_int_field.h"

namespace deltacpp::internal {

std::string LogDir(const std::string& table_root) { return table_root + "/_delta_log"; }

namespace {

std::string BaseName(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Checkpoint candidates at one version, with the preference the protocol recommends:
// UUID-named > multi-part (more parts) > classic.
struct CheckpointChoice {
  int rank = -1;
  std::vector<LogFile> files;
};

std::map<int64_t, CheckpointChoice> CompleteCheckpoints(const std::vector<LogFile>& files) {
  std::map<int64_t, std::vector<const LogFile*>> by_version;
  for (const auto& f : files) {
    switch (f.name.kind) {
      case LogFileKind::kClassicCheckpoint:
      case LogFileKind::kMultiPartCheckpoint:
      case LogFileKind::kUuidCheckpoint:
        if (f.entry.size > 0) by_version[f.name.version].push_back(&f);
        break;
      default:
        break;
    }
  }
  std::map<int64_t, CheckpointChoice> out;
  for (auto& [version, candidates] : by_version) {
    CheckpointChoice best;
    std::map<int32_t, std::map<int32_t, const LogFile*>> multi;  // num_parts -> part -> file
    for (const LogFile* f : candidates) {
      if (f->name.kind == LogFileKind::kUuidCheckpoint) {
        // Among UUID-named ones the greatest file name wins.
        if (best.rank < 3 || BaseName(f->entry.path) > BaseName(best.files[0].entry.path)) {
          best.rank = 3;
          best.files = {*f};
        }
      } else if (f->name.kind == LogFileKind::kMultiPartCheckpoint) {
        multi[f->name.num_parts][f->name.part] = f;
      } else if (best.rank < 1) {
        best.rank = 1;
        best.files = {*f};
      }
    }
    if (best.rank < 3) {
      for (auto it = multi.rbegin(); it != multi.rend(); ++it) {
        int32_t parts = it->first;
        if (parts < 1 || static_cast<int32_t>(it->second.size()) != parts) continue;
        bool complete = it->second.begin()->first == 1 && it->second.rbegin()->first == parts;
        if (!complete) continue;
        best.rank = 2;
        best.files.clear();
        for (auto& [_, f] : it->second) best.files.push_back(*f);
        break;
      }
    }
    if (best.rank >= 0) out.emplace(version, std::move(best));
  }
  return out;
}


}  // namespace

arrow::Result<std::optional<int64_t>> ReadLastCheckpointHint(LogStore& store,
                                                             const std::string& log_dir) {
  const std::string path = log_dir + "/_last_checkpoint";
  auto buf = store.Read(path);
  if (!buf.ok()) {
    if (IsDeltaError(buf.status(), DeltaErrorCode::kMissingFile)) return std::nullopt;
    // A directory, FIFO or unreadable file there is damage, not an absent hint.
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("{}: cannot read it: {}", path, buf.status().message()));
  }
  simdjson::dom::parser parser;
  simdjson::padded_string padded((*buf)->data_as<char>(), (*buf)->size());
  simdjson::dom::element doc;
  // A torn write (the file is replaced without being locked) is expected: no hint then.
  if (parser.parse(padded).get(doc) || !doc.is_object()) return std::nullopt;
  simdjson::dom::object obj = doc.get_object().value();
  // Any number out of its type or range makes the whole hint unusable (never narrowed into a
  // plausible one); the listing, which is authoritative, is used instead.
  auto version = ReadIntField(obj, "version", kNonNegativeLongField, path, "_last_checkpoint");
  if (!version.ok() ||
      !ReadIntField(obj, "size", kNonNegativeLongField, path, "_last_checkpoint").ok() ||
      !ReadIntField(obj, "parts", kPositiveIntField, path, "_last_checkpoint").ok() ||
      !ReadIntField(obj, "sizeInBytes", kNonNegativeLongField, path, "_last_checkpoint").ok() ||
      !ReadIntField(obj, "numOfAddFiles", kNonNegativeLongField, path, "_last_checkpoint").ok()) {
    return std::nullopt;
  }
  return *version;
}

arrow::Result<std::vector<LogFile>> ListLogFiles(LogStore& store, const std::string& table_root,
                                                 std::string_view start_after_name) {
  const std::string log_dir = LogDir(table_root);
  ARROW_ASSIGN_OR_RAISE(auto entries, store.ListAll(log_dir, start_after_name));
  std::vector<LogFile> files;
  files.reserve(entries.size());
  for (auto& e : entries) {
    auto name = ParseLogFileName(BaseName(e.path));
    if (!name) continue;
    if (!e.regular) {
      // Skipping it would read another version as the latest, or report a gap that is not one.
      return DeltaError(DeltaErrorCode::kCorruptLog,
                        fmt::format("table {} version {}: log file {} is not a regular file "
                                    "(a directory, FIFO, socket or device)",
                                    table_root, name->version, e.path));
    }
    files.push_back(LogFile{std::move(e), *name});
  }
  return files;
}

std::optional<int64_t> EarliestReconstructableVersion(const std::vector<LogFile>& files) {
  for (const auto& f : files) {
    if (f.name.kind == LogFileKind::kCommit && f.name.version == 0) return 0;
  }
  auto cps = CompleteCheckpoints(files);
  if (cps.empty()) return std::nullopt;
  return cps.begin()->first;
}

arrow::Result<LogSegment> BuildLogSegment(LogStore& store, const std::string& table_root,
                                          std::optional<int64_t> version,
                                          std::optional<int64_t> checkpoint_below) {
  LogSegment seg;
  seg.table_root = table_root;
  seg.log_dir = LogDir(table_root);

  ARROW_ASSIGN_OR_RAISE(std::optional<int64_t> hint, ReadLastCheckpointHint(store, seg.log_dir));
  if (hint && version && *hint > *version) hint.reset();
  if (hint && checkpoint_below && *hint >= *checkpoint_below) hint.reset();

  std::vector<LogFile> files;
  std::map<int64_t, CheckpointChoice> checkpoints;
  auto list_and_pick = [&](std::string_view start) -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(files, ListLogFiles(store, table_root, start));
    checkpoints = CompleteCheckpoints(files);
    return arrow::Status::OK();
  };
  if (hint) {
    ARROW_RETURN_NOT_OK(list_and_pick(VersionPrefix(*hint)));
    // The hint is only trusted when its checkpoint is really there and complete.
    if (checkpoints.find(*hint) == checkpoints.end()) hint.reset();
  }
  if (!hint) ARROW_RETURN_NOT_OK(list_and_pick({}));

  if (files.empty()) {
    return DeltaError(DeltaErrorCode::kTableNotFound,
                      fmt::format("{} is not a Delta table: no commits in {}", table_root,
                                  seg.log_dir));
  }

  int64_t latest = -1;
  for (const auto& f : files) {
    if (f.name.kind == LogFileKind::kCommit) latest = std::max(latest, f.name.version);
  }
  for (const auto& [v, _] : checkpoints) latest = std::max(latest, v);
  if (latest < 0) {
    return DeltaError(DeltaErrorCode::kTableNotFound,
                      fmt::format("{} is not a Delta table: no commits in {}", table_root,
                                  seg.log_dir));
  }
  const int64_t target = version.value_or(latest);
  if (target < 0 || target > latest) {
    return DeltaError(DeltaErrorCode::kVersionNotFound,
                      fmt::format("table {}: version {} does not exist (latest is {})",
                                  table_root, target, latest));
  }
  seg.version = target;

  // Newest complete checkpoint at or below the target (and below `checkpoint_below`).
  const int64_t newest_usable =
      checkpoint_below ? std::min(target, *checkpoint_below - 1) : target;
  auto it = checkpoints.upper_bound(newest_usable);
  if (it != checkpoints.begin()) {
    --it;
    seg.checkpoint_version = it->first;
    seg.checkpoint_files = it->second.files;
  }
  if (!seg.checkpoint_version) {
    bool has_zero = false;
    for (const auto& f : files) {
      has_zero |= f.name.kind == LogFileKind::kCommit && f.name.version == 0;
    }
    if (!has_zero) {
      auto earliest = EarliestReconstructableVersion(files);
      return DeltaError(
          DeltaErrorCode::kVersionNotFound,
          fmt::format("table {}: version {} cannot be reconstructed (no checkpoint at or before "
                      "it and commit 0 is missing; earliest reconstructable version is {})",
                      table_root, target,
                      earliest ? std::to_string(*earliest) : std::string("none")));
    }
  }
  const int64_t first_needed = seg.checkpoint_version ? *seg.checkpoint_version + 1 : 0;
  int64_t expected = first_needed;
  for (const auto& f : files) {
    if (f.name.kind != LogFileKind::kCommit) continue;
    if (f.name.version == target) seg.version_commit = f;
    if (f.name.version < first_needed || f.name.version > target) continue;
    if (f.name.version != expected) {
      return DeltaError(
          DeltaErrorCode::kCorruptLog,
          fmt::format("table {}: versions are not contiguous: commit {} is missing (found {})",
                      table_root, expected, f.name.version));
    }
    seg.commits.push_back(f);
    ++expected;
  }
  if (expected != target + 1) {
    return DeltaError(DeltaErrorCode::kCorruptLog,
                      fmt::format("table {}: versions are not contiguous: commit {} is missing",
                                  table_root, expected));
  }
  return seg;
}

}  // namespace deltacpp::internal
