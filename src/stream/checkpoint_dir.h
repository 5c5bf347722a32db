// The checkpoint directory of a streaming query: its id, the offsets of planned batches, the
// markers of finished ones, a lock held while the query runs.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace deltacpp::internal {

class CheckpointDir {
 public:
  /// Creates the directory when missing, takes its lock (InvalidArgument when another query
  /// holds it), reads or creates the query id.
  static arrow::Result<std::unique_ptr<CheckpointDir>> Open(const std::string& path);
  ~CheckpointDir();
  CheckpointDir(const CheckpointDir&) = delete;
  CheckpointDir& operator=(const CheckpointDir&) = delete;

  const std::string& path() const { return path_; }
  const std::string& query_id() const { return query_id_; }
  /// `<path>/sources/0`, created.
  std::string source_state_dir() const;

  /// The latest planned batch and its end offset; nullopt when none was planned.
  std::optional<std::pair<int64_t, std::string>> LatestOffset() const;
  /// The end offset of `batch_id`, if it was planned and is still kept.
  arrow::Result<std::optional<std::string>> OffsetOf(int64_t batch_id) const;
  /// The latest finished batch.
  std::optional<int64_t> LatestCommit() const;

  /// Records the plan of `batch_id` (atomically: a crash leaves it whole or absent).
  arrow::Status WriteOffset(int64_t batch_id, const std::string& end_offset);
  /// Marks `batch_id` finished, then drops entries more than `keep` batches old.
  arrow::Status WriteCommit(int64_t batch_id, int64_t keep = 100);

 private:
  CheckpointDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::string path_;
  int lock_fd_ = -1;
  std::string query_id_;
  std::map<int64_t, std::string> offsets_;  ///< batch id -> end offset
  std::set<int64_t> commits_;  ///< batch ids with a commit marker on disk
  std::optional<int64_t> latest_commit_;
};

/// Writes `text` to the local file `path` atomically (LogStore::PutReplace of the local store).
arrow::Status WriteFileAtomically(const std::string& path, const std::string& text);
/// The whole content of a local file.
arrow::Result<std::string> ReadSmallFile(const std::string& path);

}  // namespace deltacpp::internal
