// Building and updating LiveFiles: the key every file action is reconciled by, the per-batch
// lookup index, the selection of live rows and the merging that keeps the chunk count small.
#pragma once

#include <arrow/api.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/live_files.h"
#include "log/file_action_schema.h"

namespace deltacpp {

/// What every snapshot holding one batch of add actions shares. Built on first use, then kept
/// for as long as any snapshot holds the batch.
struct FileChunk::Shared {
  /// (hash of the file key, row), sorted: finds the row of a key without a scan.
  std::once_flag index_once;
  std::vector<std::pair<uint64_t, int64_t>> index;

  /// The rows' add.stats parsed into a struct of typed columns (see ChunkStats), with the type
  /// it was parsed for; null until a reader asks.
  std::mutex stats_mutex;
  std::shared_ptr<arrow::DataType> stats_type;
  std::shared_ptr<arrow::StructArray> stats;
};

}  // namespace deltacpp

namespace deltacpp::internal {

/// Key of a file action: the canonical path (CanonicalFilePath) plus the deletion vector's
/// unique id. Two actions on one file with one deletion vector have the same key.
class FileKeyReader {
 public:
  FileKeyReader(const arrow::RecordBatch& batch, std::string_view table_root);

  /// The key of row i. The usual row (a plain relative path, no deletion vector) is its path
  /// as stored, returned without a copy; other keys are built in `scratch`.
  std::string_view Key(int64_t i, std::string* scratch) const;

 private:
  std::string_view table_root_;
  const arrow::StringArray& path_;
  const arrow::StructArray& dv_;
  const arrow::StringArray& storage_;
  const arrow::StringArray& dv_path_;
  const arrow::Int32Array& offset_;
};

/// A chunk of the rows of `actions` (FileActionSchema() columns; extra trailing columns are
/// dropped) that `live` marks; every row when `live` is null.
arrow::Result<FileChunk> MakeFileChunk(const std::shared_ptr<arrow::RecordBatch>& actions,
                                       const std::vector<bool>* live);

/// The live file whose key (FileKeyReader) is `key`, if any.
std::optional<FileRef> FindLiveFile(const LiveFiles& files, std::string_view key,
                                    std::string_view table_root);

/// `base` without the live files whose keys are `gone`, plus the chunk `added` (rows that are
/// all live). Costs the commit, not the table: chunks no key touches are shared as they are,
/// touched ones get a new selection (one bit per row), and the newest chunks are merged when
/// they grow comparable in size, so a long run of commits keeps few chunks. Chunks left mostly
/// dead are compacted.
arrow::Result<LiveFiles> UpdateLiveFiles(const LiveFiles& base, const std::vector<std::string>& gone,
                                         std::optional<FileChunk> added,
                                         std::string_view table_root);

}  // namespace deltacpp::internal
