// Deletion vectors for row-level deletes: old ∪ new deleted rows per data file, stored inline or
// in DV files under the table root. Returns descriptors; never commits.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>

#include "deltacpp/actions.h"

namespace deltacpp::internal {

/// Serialized bitmaps up to this many bytes are stored inline by default (at most 160 Z85
/// characters in the log). A DV that deletes a few scattered rows or a few runs serializes to
/// 30-100 bytes, about the size of a `u` descriptor, so inlining it costs the log little and
/// saves a scan one file read per data file; larger DVs go to files.
inline constexpr int32_t kDefaultMaxInlineDeletionVectorBytes = 128;

/// Where and how deletion vectors are written.
struct DeletionVectorWriterOptions {
  std::string table_root;  ///< absolute local path, as for ReadDeletedRowIndexes
  /// Filesystem of the table (the store's filesystem()): existing DVs are read and DV files
  /// written through it. Null means the local filesystem.
  std::shared_ptr<arrow::fs::FileSystem> fs;
  /// Serialized bitmaps of at most this many bytes become inline ("i") descriptors; larger ones
  /// go to a DV file. Negative: never inline (what delta-spark and delta-kernel-rs do).
  int32_t max_inline_bytes = kDefaultMaxInlineDeletionVectorBytes;
  /// Length of the random folder (letters and digits) DV files go in, as the `u` prefix of
  /// their descriptors (`delta.randomizeFilePrefixes` / `delta.randomPrefixLength`). 0: the
  /// table root.
  int32_t random_prefix_length = 0;
};

/// One data file of the table and the rows an operation deletes from it.
struct DeletionVectorRequest {
  std::string path;  ///< the file's add.path (used to name it in errors and results)
  std::optional<DeletionVectorDescriptor> existing;  ///< the DV the file has now, if any
  int64_t num_records = 0;  ///< physical rows of the file (exact add.stats numRecords)
  std::vector<uint64_t> rows;  ///< row indexes to delete, any order, duplicates allowed
};

/// What an operation commits for one file.
enum class DeletionVectorOutcome {
  kNewDeletionVector,  ///< remove(path, existing) + add(path, descriptor)
  kRemoveFile,         ///< every row is deleted: remove the file, add nothing back
  kUnchanged,          ///< no row beyond the existing DV: commit nothing for this file
};

/// The result for one DeletionVectorRequest.
struct DeletionVectorUpdate {
  std::string path;  ///< DeletionVectorRequest::path
  DeletionVectorOutcome outcome = DeletionVectorOutcome::kUnchanged;
  /// The new DV (old ∪ new rows) for kNewDeletionVector; unset otherwise.
  std::optional<DeletionVectorDescriptor> descriptor;
  /// storageType + pathOrInlineDv (+ "@" offset): the DV part of the new add's file key
  /// (DeletionVectorDescriptor::UniqueId); empty unless kNewDeletionVector.
  std::string unique_id;
  int64_t deleted_rows = 0;  ///< size of old ∪ new (num_records for kRemoveFile)
  int64_t newly_deleted_rows = 0;  ///< rows deleted now that the existing DV did not hold
};

/// Turns row deletions into deletion vectors. Each Write call is one operation's worth of DVs:
/// their union with the files' existing DVs is computed first, then every DV too large to be
/// inline goes into ONE new file `[<prefix>/]deletion_vector_<uuid>.bin` (version byte 1, then
/// per DV a big-endian size, the serialized bitmap and its big-endian CRC-32; descriptors point
/// at the size field). Descriptors are only returned once their file is complete and, on the
/// local filesystem, fsynced together with its directory; a failed write removes what it
/// wrote. Not thread-safe.
class DeletionVectorWriter {
 public:
  /// Errors (kInvalidArgument): an empty table root, a negative or over-long (> 32) random
  /// prefix length.
  static arrow::Result<std::unique_ptr<DeletionVectorWriter>> Make(
      DeletionVectorWriterOptions options);

  /// The outcome for each request, in request order. Errors, with nothing written:
  /// kInvalidArgument for a negative num_records, a row index >= num_records, a path given
  /// twice; the existing DV's read errors (kMissingFile, kCorruptLog) and kCorruptLog when it
  /// deletes rows >= num_records; kVersionExists when the new file's name is taken; the
  /// filesystem's error when writing or syncing the DV file fails. Invalid after Abort.
  arrow::Result<std::vector<DeletionVectorUpdate>> Write(
      const std::vector<DeletionVectorRequest>& requests);

  /// Absolute paths of the DV files written so far.
  const std::vector<std::string>& written_files() const { return written_files_; }

  /// Deletes every DV file written so far (used when the operation fails before committing);
  /// the writer is unusable afterwards. Folders it created are left in place. Returns the first
  /// deletion error, after trying every file.
  arrow::Status Abort();

 private:
  explicit DeletionVectorWriter(DeletionVectorWriterOptions options);
  std::string RandomPrefix() const;
  arrow::Status WriteFile(const std::string& path, const std::string& content);

  DeletionVectorWriterOptions options_;
  std::vector<std::string> written_files_;
  bool aborted_ = false;
};

}  // namespace deltacpp::internal
