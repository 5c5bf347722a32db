// A snapshot's live files as data: the batches of file actions they were decoded in (checkpoint
// parts, commits) plus, per batch, which rows are live. Snapshots of nearby versions share the
// batches; a new version only adds the batch of its own adds and new selections for the batches
// its removes touch.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace deltacpp {

/// Where a live file's add action is: its chunk in LiveFiles::chunks() and its row there.
struct FileRef {
  int32_t chunk = -1;
  int64_t row = -1;
  friend bool operator==(const FileRef&, const FileRef&) = default;
  friend auto operator<=>(const FileRef&, const FileRef&) = default;
};

/// One batch of add actions (columns as the protocol names them: path, partitionValues, size,
/// modificationTime, dataChange, stats, tags, deletionVector, baseRowId,
/// defaultRowCommitVersion, clusteringProvider) and the selection of its live rows.
///
/// Immutable; copies share the batch and the selection.
class FileChunk {
 public:
  /// What every snapshot holding the same batch shares (lookup index, parsed statistics).
  struct Shared;

  FileChunk() = default;
  /// `selection`: one bit per row of `actions`, set for a live row; null when every row is live.
  FileChunk(std::shared_ptr<arrow::RecordBatch> actions, std::shared_ptr<arrow::Buffer> selection,
            int64_t num_live, std::shared_ptr<Shared> shared);

  const std::shared_ptr<arrow::RecordBatch>& actions() const { return actions_; }
  /// The live-row bitmap; null when every row of actions() is live.
  const std::shared_ptr<arrow::Buffer>& selection() const { return selection_; }
  int64_t num_rows() const { return actions_ ? actions_->num_rows() : 0; }
  int64_t num_live() const { return num_live_; }
  bool IsLive(int64_t row) const;
  /// Calls `f(row)` for each live row, in row order.
  template <typename F>
  void ForEachLive(F&& f) const {
    const int64_t n = num_rows();
    if (!selection_) {
      for (int64_t r = 0; r < n; ++r) f(r);
      return;
    }
    const uint8_t* bits = selection_->data();
    for (int64_t r = 0; r < n; ++r) {
      if (bits[r >> 3] & (1u << (r & 7))) f(r);
    }
  }
  const std::shared_ptr<Shared>& shared() const { return shared_; }

 private:
  std::shared_ptr<arrow::RecordBatch> actions_;
  std::shared_ptr<arrow::Buffer> selection_;
  int64_t num_live_ = 0;
  std::shared_ptr<Shared> shared_;
};

/// The live files of one version, in a stable order (chunk by chunk, row order within a chunk).
class LiveFiles {
 public:
  LiveFiles() = default;
  explicit LiveFiles(std::vector<FileChunk> chunks);

  /// Number of live files.
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<FileChunk>& chunks() const { return chunks_; }
  /// The batch holding `ref`'s add action (its row is ref.row).
  const arrow::RecordBatch& actions(FileRef ref) const { return *chunks_[ref.chunk].actions(); }
  /// add.path of `ref`, as recorded in the log.
  std::string_view path(FileRef ref) const;
  /// Calls `f(ref)` for each live file, in order.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      chunks_[c].ForEachLive([&](int64_t row) { f(FileRef{static_cast<int32_t>(c), row}); });
    }
  }
  /// Every live file's reference, in order.
  std::vector<FileRef> Refs() const;
  /// Sum of the live files' sizes in bytes.
  int64_t total_size_bytes() const;
  /// The live rows of every chunk copied into one batch, in order (a fresh copy each call).
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ToBatch() const;

 private:
  std::vector<FileChunk> chunks_;
  int64_t size_ = 0;
};

}  // namespace deltacpp
