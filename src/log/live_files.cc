// LiveFiles and FileChunk: the accessors every reader of a snapshot's file list uses.
#include "deltacpp/live_files.h"

#include <arrow/compute/api.h>
#include <arrow/util/bit_util.h>

#include "log/file_action_schema.h"
#include "log/live_file_list.h"

namespace deltacpp {

FileChunk::FileChunk(std::shared_ptr<arrow::RecordBatch> actions,
                     std::shared_ptr<arrow::Buffer> selection, int64_t num_live,
                     std::shared_ptr<Shared> shared)
    : actions_(std::move(actions)),
      selection_(std::move(selection)),
      num_live_(num_live),
      shared_(shared ? std::move(shared) : std::make_shared<Shared>()) {}

bool FileChunk::IsLive(int64_t row) const {
  if (row < 0 || row >= num_rows()) return false;
  return !selection_ || arrow::bit_util::GetBit(selection_->data(), row);
}

LiveFiles::LiveFiles(std::vector<FileChunk> chunks) : chunks_(std::move(chunks)) {
  for (const auto& c : chunks_) size_ += c.num_live();
}

std::string_view LiveFiles::path(FileRef ref) const {
  const auto& paths =
      static_cast<const arrow::StringArray&>(*actions(ref).column(internal::kPathCol));
  return paths.GetView(ref.row);
}

std::vector<FileRef> LiveFiles::Refs() const {
  std::vector<FileRef> out;
  out.reserve(static_cast<size_t>(size_));
  ForEach([&](FileRef ref) { out.push_back(ref); });
  return out;
}

int64_t LiveFiles::total_size_bytes() const {
  int64_t total = 0;
  for (const auto& chunk : chunks_) {
    const auto& sizes =
        static_cast<const arrow::Int64Array&>(*chunk.actions()->column(internal::kSizeCol));
    chunk.ForEachLive([&](int64_t row) {
      if (sizes.IsValid(row)) total += sizes.Value(row);
    });
  }
  return total;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> LiveFiles::ToBatch() const {
  arrow::RecordBatchVector parts;
  for (const auto& chunk : chunks_) {
    if (chunk.num_live() == 0) continue;
    if (!chunk.selection()) {
      parts.push_back(chunk.actions());
      continue;
    }
    arrow::BooleanArray mask(chunk.num_rows(), chunk.selection());
    ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(chunk.actions(), mask));
    parts.push_back(kept.record_batch());
  }
  if (parts.empty()) return arrow::RecordBatch::MakeEmpty(internal::FileActionSchema());
  if (parts.size() == 1) return parts[0];
  return arrow::ConcatenateRecordBatches(parts);
}

}  // namespace deltacpp
