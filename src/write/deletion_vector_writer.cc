#include "write/deletion_vector_writer.h"

#include <arrow/filesystem/localfs.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <random>
#include <set>

#include "deltacpp/error.h"
#include "protocol/deletion_vector.h"
#include "storage/local_sync.h"
#include "util/random_uuid.h"

namespace deltacpp::internal {

namespace {

constexpr int32_t kMaxRandomPrefixLength = 32;

arrow::Status InvalidArgument(std::string message) {
  return DeltaError(DeltaErrorCode::kInvalidArgument, std::move(message));
}

// A DV file being assembled: its `u` payload (prefix + Z85 UUID) and content.
struct PendingFile {
  std::string path_or_inline_dv;
  std::string content;
};

}  // namespace

DeletionVectorWriter::DeletionVectorWriter(DeletionVectorWriterOptions options)
    : options_(std::move(options)) {
  if (options_.fs == nullptr) options_.fs = std::make_shared<arrow::fs::LocalFileSystem>();
}

arrow::Result<std::unique_ptr<DeletionVectorWriter>> DeletionVectorWriter::Make(
    DeletionVectorWriterOptions options) {
  if (options.table_root.empty()) {
    return InvalidArgument("deletion vector writer: empty table root");
  }
  if (options.random_prefix_length < 0 ||
      options.random_prefix_length > kMaxRandomPrefixLength) {
    return InvalidArgument(fmt::format(
        "table {}: deletion vector random prefix length {} is outside 0..{}",
        options.table_root, options.random_prefix_length, kMaxRandomPrefixLength));
  }
  return std::unique_ptr<DeletionVectorWriter>(new DeletionVectorWriter(std::move(options)));
}

std::string DeletionVectorWriter::RandomPrefix() const {
  static constexpr std::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  // A fresh random_device per call, as for UUIDs: forked processes must not repeat prefixes.
  std::random_device rd;
  std::string prefix;
  for (int32_t i = 0; i < options_.random_prefix_length; ++i) {
    prefix.push_back(kAlphabet[rd() % kAlphabet.size()]);
  }
  return prefix;
}

arrow::Result<std::vector<DeletionVectorUpdate>> DeletionVectorWriter::Write(
    const std::vector<DeletionVectorRequest>& requests) {
  if (aborted_) {
    return arrow::Status::Invalid("deletion vector writer used after Abort");
  }
  const std::string& root = options_.table_root;
  arrow::fs::FileSystem& fs = *options_.fs;

  std::set<std::string_view> seen;
  std::vector<DeletionVectorUpdate> updates;
  updates.reserve(requests.size());
  // Every DV is computed before anything is written, so a bad request or an unreadable existing
  // DV fails the call with no file created.
  std::vector<PendingFile> files;
  for (const DeletionVectorRequest& request : requests) {
    const std::string where = fmt::format("table {}: data file {}", root, request.path);
    if (!seen.insert(request.path).second) {
      return InvalidArgument(fmt::format("{}: given twice to the deletion vector writer", where));
    }
    if (request.num_records < 0) {
      return InvalidArgument(
          fmt::format("{}: negative number of records {}", where, request.num_records));
    }
    std::vector<uint64_t> rows = request.rows;
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    if (!rows.empty() && rows.back() >= static_cast<uint64_t>(request.num_records)) {
      return InvalidArgument(fmt::format("{}: row index {} to delete is beyond its {} records",
                                         where, rows.back(), request.num_records));
    }
    std::vector<uint64_t> existing;
    if (request.existing) {
      auto read = ReadDeletedRowIndexes(*request.existing, root, fs);
      if (!read.ok()) {
        return read.status().WithMessage(where, ": existing deletion vector: ",
                                         read.status().message());
      }
      existing = read.MoveValueUnsafe();
      if (!existing.empty() && existing.back() >= static_cast<uint64_t>(request.num_records)) {
        return DeltaError(DeltaErrorCode::kCorruptLog,
                          fmt::format("{}: existing deletion vector '{}' deletes row {} of a file "
                                      "with {} records",
                                      where, request.existing->UniqueId(), existing.back(),
                                      request.num_records));
      }
    }
    std::vector<uint64_t> all;
    all.reserve(existing.size() + rows.size());
    std::set_union(existing.begin(), existing.end(), rows.begin(), rows.end(),
                   std::back_inserter(all));

    DeletionVectorUpdate update;
    update.path = request.path;
    update.deleted_rows = static_cast<int64_t>(all.size());
    update.newly_deleted_rows = static_cast<int64_t>(all.size() - existing.size());
    if (update.newly_deleted_rows == 0) {
      update.outcome = DeletionVectorOutcome::kUnchanged;
    } else if (update.deleted_rows == request.num_records) {
      update.outcome = DeletionVectorOutcome::kRemoveFile;
    } else {
      update.outcome = DeletionVectorOutcome::kNewDeletionVector;
      auto bitmap = SerializeRoaringBitmapArray(all);
      if (!bitmap.ok()) return bitmap.status().WithMessage(where, ": ", bitmap.status().message());
      DeletionVectorDescriptor dv;
      dv.cardinality = update.deleted_rows;
      if (options_.max_inline_bytes >= 0 &&
          bitmap->size() <= static_cast<size_t>(options_.max_inline_bytes)) {
        dv.storage_type = "i";
        dv.path_or_inline_dv = Z85Encode(*bitmap);
        dv.size_in_bytes = static_cast<int32_t>(bitmap->size());
      } else {
        // Offsets are int32: a file that has grown past that starts a new one.
        if (files.empty() ||
            files.back().content.size() >
                static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
          PendingFile file;
          ARROW_ASSIGN_OR_RAISE(file.path_or_inline_dv,
                                EncodeUuidDeletionVectorPath(RandomPrefix(), RandomUuidV4()));
          file.content.push_back(static_cast<char>(kDeletionVectorFileVersion));
          files.push_back(std::move(file));
        }
        dv.storage_type = "u";
        dv.path_or_inline_dv = files.back().path_or_inline_dv;
        dv.offset = static_cast<int32_t>(files.back().content.size());
        auto appended = AppendDeletionVectorFileEntry(*bitmap, &files.back().content);
        if (!appended.ok()) return appended.WithMessage(where, ": ", appended.message());
        dv.size_in_bytes = static_cast<int32_t>(bitmap->size());
      }
      update.unique_id = dv.UniqueId();
      update.descriptor = std::move(dv);
    }
    updates.push_back(std::move(update));
  }

  const size_t written_before = written_files_.size();
  for (const PendingFile& file : files) {
    DeletionVectorDescriptor probe;
    probe.storage_type = "u";
    probe.path_or_inline_dv = file.path_or_inline_dv;
    ARROW_ASSIGN_OR_RAISE(std::string path, DeletionVectorAbsolutePath(probe, root));
    arrow::Status put = WriteFile(path, file.content);
    if (!put.ok()) {
      for (size_t i = written_before; i < written_files_.size(); ++i) {
        (void)fs.DeleteFile(written_files_[i]);
      }
      written_files_.resize(written_before);
      return put;
    }
    written_files_.push_back(std::move(path));
  }
  return updates;
}

arrow::Status DeletionVectorWriter::WriteFile(const std::string& path,
                                             const std::string& content) {
  arrow::fs::FileSystem& fs = *options_.fs;
  const std::string where = fmt::format("table {}: deletion vector file {}", options_.table_root,
                                        path);
  auto failed = [&](const arrow::Status& st) {
    return st.WithMessage(where, ": ", st.message());
  };
  // The name holds a fresh UUID, so it is never expected to exist; if it does, it is someone
  // else's file and is neither overwritten nor removed.
  auto info = fs.GetFileInfo(path);
  if (!info.ok()) return failed(info.status());
  if (info->type() != arrow::fs::FileType::NotFound) {
    return DeltaError(DeltaErrorCode::kVersionExists, fmt::format("{}: already exists", where));
  }
  // Folders that do not exist yet, innermost first, so their entries get synced too.
  std::vector<std::string> new_dirs;
  for (size_t slash = path.find_last_of('/'); slash != std::string::npos && slash > 0;
       slash = path.find_last_of('/', slash - 1)) {
    const std::string dir = path.substr(0, slash);
    auto dir_info = fs.GetFileInfo(dir);
    if (!dir_info.ok()) return failed(dir_info.status());
    if (dir_info->type() != arrow::fs::FileType::NotFound) break;
    new_dirs.push_back(dir);
  }
  if (!new_dirs.empty()) {
    arrow::Status made = fs.CreateDir(new_dirs.front(), /*recursive=*/true);
    if (!made.ok()) return failed(made);
  }
  arrow::Status st = [&]() -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto out, fs.OpenOutputStream(path));
    arrow::Status written = out->Write(content.data(), static_cast<int64_t>(content.size()));
    arrow::Status closed = out->Close();
    ARROW_RETURN_NOT_OK(written);
    ARROW_RETURN_NOT_OK(closed);
    return SyncWrittenLocalFile(fs, path, new_dirs);
  }();
  if (!st.ok()) {
    (void)fs.DeleteFile(path);
    return failed(st);
  }
  return arrow::Status::OK();
}

arrow::Status DeletionVectorWriter::Abort() {
  aborted_ = true;
  arrow::Status first_error;
  for (const std::string& path : written_files_) {
    auto info = options_.fs->GetFileInfo(path);
    if (info.ok() && info->type() == arrow::fs::FileType::NotFound) continue;
    arrow::Status st = options_.fs->DeleteFile(path);
    if (!st.ok() && first_error.ok()) first_error = st;
  }
  written_files_.clear();
  return first_error;
}

}  // namespace deltacpp::internal
