#include "log/live_file_list.h"

#include <arrow/compute/api.h>
#include <arrow/util/bit_util.h>

#include <algorithm>
#include <functional>
#include <map>

#include "protocol/path_encoding.h"

namespace deltacpp::internal {

FileKeyReader::FileKeyReader(const arrow::RecordBatch& batch, std::string_view table_root)
    : table_root_(table_root),
      path_(static_cast<const arrow::StringArray&>(*batch.column(kPathCol))),
      dv_(static_cast<const arrow::StructArray&>(*batch.column(kDeletionVectorCol))),
      storage_(static_cast<const arrow::StringArray&>(*dv_.field(kDvStorageType))),
      dv_path_(static_cast<const arrow::StringArray&>(*dv_.field(kDvPathOrInlineDv))),
      offset_(static_cast<const arrow::Int32Array&>(*dv_.field(kDvOffset))) {}

std::string_view FileKeyReader::Key(int64_t i, std::string* scratch) const {
  const std::string_view path = path_.GetView(i);
  const bool has_dv = dv_.IsValid(i);
  if (!has_dv && IsCanonicalAsIs(path)) return path;
  *scratch = CanonicalFilePath(path, table_root_);
  if (has_dv) {
    scratch->push_back('\0');
    scratch->append(storage_.GetView(i));
    scratch->append(dv_path_.GetView(i));
    if (offset_.IsValid(i)) {
      scratch->push_back('@');
      scratch->append(std::to_string(offset_.Value(i)));
    }
  }
  return *scratch;
}

namespace {

uint64_t KeyHash(std::string_view key) { return std::hash<std::string_view>{}(key); }

// `batch` without the columns replay adds after the file action columns (`_is_add`, ...).
std::shared_ptr<arrow::RecordBatch> FileActionColumns(const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (batch->num_columns() <= kNumFileActionColumns) return batch;
  std::vector<std::shared_ptr<arrow::Array>> cols(batch->columns().begin(),
                                                  batch->columns().begin() + kNumFileActionColumns);
  return arrow::RecordBatch::Make(FileActionSchema(), batch->num_rows(), std::move(cols));
}

const std::vector<std::pair<uint64_t, int64_t>>& KeyIndex(const FileChunk& chunk,
                                                          std::string_view root) {
  FileChunk::Shared& shared = *chunk.shared();
  std::call_once(shared.index_once, [&] {
    const auto& batch = *chunk.actions();
    const auto& paths = *batch.column(kPathCol);
    FileKeyReader keys(batch, root);
    std::string scratch;
    shared.index.reserve(static_cast<size_t>(batch.num_rows()));
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      if (paths.IsValid(i)) shared.index.emplace_back(KeyHash(keys.Key(i, &scratch)), i);
    }
    std::sort(shared.index.begin(), shared.index.end());
  });
  return shared.index;
}

// The live rows of `chunk` copied into a chunk of their own (every row live), with the typed
// statistics carried over when they were parsed.
arrow::Result<FileChunk> Compacted(const std::vector<const FileChunk*>& parts) {
  arrow::RecordBatchVector batches;
  arrow::ArrayVector stats;
  std::shared_ptr<arrow::DataType> stats_type;
  bool stats_complete = true;
  int64_t live = 0;
  for (const FileChunk* part : parts) {
    std::shared_ptr<arrow::RecordBatch> batch = part->actions();
    std::shared_ptr<arrow::Array> part_stats;
    {
      std::lock_guard lock(part->shared()->stats_mutex);
      part_stats = part->shared()->stats;
      if (!part_stats || (stats_type && !stats_type->Equals(*part->shared()->stats_type))) {
        stats_complete = false;
      } else {
        stats_type = part->shared()->stats_type;
      }
    }
    if (part->selection()) {
      arrow::BooleanArray mask(part->num_rows(), part->selection());
      ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(batch, mask));
      batch = kept.record_batch();
      if (stats_complete) {
        ARROW_ASSIGN_OR_RAISE(auto kept_stats, arrow::compute::Filter(part_stats, mask));
        part_stats = kept_stats.make_array();
      }
    }
    live += batch->num_rows();
    batches.push_back(std::move(batch));
    if (stats_complete) stats.push_back(std::move(part_stats));
  }
  std::shared_ptr<arrow::RecordBatch> merged;
  if (batches.size() == 1) {
    merged = batches[0];
  } else {
    ARROW_ASSIGN_OR_RAISE(merged, arrow::ConcatenateRecordBatches(batches));
  }
  auto shared = std::make_shared<FileChunk::Shared>();
  if (stats_complete && stats_type) {
    ARROW_ASSIGN_OR_RAISE(auto merged_stats, arrow::Concatenate(stats));
    shared->stats_type = stats_type;
    shared->stats = std::static_pointer_cast<arrow::StructArray>(merged_stats);
  }
  return FileChunk(std::move(merged), nullptr, live, std::move(shared));
}

}  // namespace

arrow::Result<FileChunk> MakeFileChunk(const std::shared_ptr<arrow::RecordBatch>& actions,
                                       const std::vector<bool>* live) {
  auto batch = FileActionColumns(actions);
  if (!live) return FileChunk(batch, nullptr, batch->num_rows(), nullptr);
  const int64_t n = batch->num_rows();
  ARROW_ASSIGN_OR_RAISE(auto bits, arrow::AllocateEmptyBitmap(n));
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if ((*live)[i]) {
      arrow::bit_util::SetBit(bits->mutable_data(), i);
      ++count;
    }
  }
  if (count == n) return FileChunk(batch, nullptr, n, nullptr);
  return FileChunk(batch, std::shared_ptr<arrow::Buffer>(std::move(bits)), count, nullptr);
}

std::optional<FileRef> FindLiveFile(const LiveFiles& files, std::string_view key,
                                    std::string_view table_root) {
  const uint64_t hash = KeyHash(key);
  std::string scratch;
  const auto& chunks = files.chunks();
  for (size_t c = chunks.size(); c-- > 0;) {
    const auto& index = KeyIndex(chunks[c], table_root);
    auto it = std::lower_bound(index.begin(), index.end(), std::pair<uint64_t, int64_t>{hash, 0});
    if (it == index.end() || it->first != hash) continue;
    FileKeyReader keys(*chunks[c].actions(), table_root);
    for (; it != index.end() && it->first == hash; ++it) {
      if (chunks[c].IsLive(it->second) && keys.Key(it->second, &scratch) == key) {
        return FileRef{static_cast<int32_t>(c), it->second};
      }
    }
  }
  return std::nullopt;
}

arrow::Result<LiveFiles> UpdateLiveFiles(const LiveFiles& base, const std::vector<std::string>& gone,
                                         std::optional<FileChunk> added,
                                         std::string_view table_root) {
  // Rows to drop, per chunk.
  std::map<int32_t, std::vector<int64_t>> dropped;
  for (const auto& key : gone) {
    if (auto ref = FindLiveFile(base, key, table_root)) dropped[ref->chunk].push_back(ref->row);
  }
  std::vector<FileChunk> chunks;
  const auto& old = base.chunks();
  for (size_t c = 0; c < old.size(); ++c) {
    auto it = dropped.find(static_cast<int32_t>(c));
    if (it == dropped.end()) {
      chunks.push_back(old[c]);
      continue;
    }
    const FileChunk& chunk = old[c];
    const int64_t n = chunk.num_rows();
    const int64_t live = chunk.num_live() - static_cast<int64_t>(it->second.size());
    if (live == 0) continue;
    ARROW_ASSIGN_OR_RAISE(auto bits, arrow::AllocateBitmap(n));
    if (chunk.selection()) {
      std::memcpy(bits->mutable_data(), chunk.selection()->data(), arrow::bit_util::BytesForBits(n));
    } else {
      arrow::bit_util::SetBitsTo(bits->mutable_data(), 0, n, true);
    }
    for (int64_t row : it->second) arrow::bit_util::ClearBit(bits->mutable_data(), row);
    FileChunk updated(chunk.actions(), std::shared_ptr<arrow::Buffer>(std::move(bits)), live,
                      chunk.shared());
    // A chunk mostly dead is copied down to its live rows, so dead rows never dominate.
    if (n >= 64 && live * 2 < n) {
      ARROW_ASSIGN_OR_RAISE(updated, Compacted({&updated}));
    }
    chunks.push_back(std::move(updated));
  }
  if (added && added->num_live() > 0) chunks.push_back(std::move(*added));
  // Merge the newest chunks while the older of the last two is at most twice the newer: chunk
  // sizes then grow geometrically from the newest back, so n commits leave O(log n) chunks and
  // each file is copied O(log n) times in all.
  while (chunks.size() >= 2) {
    const FileChunk& newer = chunks[chunks.size() - 1];
    const FileChunk& older = chunks[chunks.size() - 2];
    if (older.num_live() > 2 * newer.num_live()) break;
    ARROW_ASSIGN_OR_RAISE(auto merged, Compacted({&older, &newer}));
    chunks.pop_back();
    chunks.back() = std::move(merged);
  }
  return LiveFiles(std::move(chunks));
}

}  // namespace deltacpp::internal
