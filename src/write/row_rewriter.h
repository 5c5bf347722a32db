// Row-level changes to the live files of one snapshot (DELETE, UPDATE): reads a file's rows with
// their positions, and turns "drop these rows" / "replace these rows" into deletion vectors or
// rewritten files, plus the change data. Returns actions; never commits.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "deltacpp/actions.h"
#include "deltacpp/snapshot.h"
#include "write/change_data_writer.h"
#include "write/data_writer.h"
#include "write/deletion_vector_writer.h"

namespace deltacpp::internal {

/// The live rows of one data file.
struct FileRows {
  /// The file in Snapshot::live_files().
  FileRef file_row;
  /// The rows the file's deletion vector keeps, in the snapshot's logical schema (partition
  /// columns included), in file order.
  std::shared_ptr<arrow::RecordBatch> rows;
  /// Position in the Parquet file (deletion vectors not applied) of each row of `rows`.
  std::vector<uint64_t> positions;
  /// Rows of the Parquet file, deleted ones included.
  int64_t physical_rows = 0;
};

/// The rows of `rows` where `keep` is true, in order.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> SelectRows(
    const std::shared_ptr<arrow::RecordBatch>& rows, const std::vector<bool>& keep);

/// How changed files are rewritten.
enum class RewriteMode {
  /// A file keeps its data; the rows that go are added to its deletion vector.
  kDeletionVectors,
  /// A file is replaced by a new one holding the rows that stay (copy-on-write).
  kCopyOnWrite,
};

/// What the changes of one operation come to.
struct RewriteOutcome {
  std::vector<RemoveFile> removes;
  std::vector<AddFile> adds;  ///< new data files, then files re-added with a new DV
  std::vector<CdcFile> change_files;
  /// Log paths of the files removed or given a new DV (what the operation read or removed).
  std::vector<std::string> touched_files;
  int64_t deleted_rows = 0;   ///< rows dropped by Delete / RemoveWholeFile
  int64_t updated_rows = 0;   ///< rows replaced by Update
  int64_t copied_rows = 0;    ///< unchanged rows written to new files
  int64_t removed_files = 0;  ///< files removed for good (not re-added with a DV)
  int64_t removed_bytes = 0;
  int64_t added_files = 0;    ///< new data files
  int64_t added_bytes = 0;
  /// As delta-spark counts them: every new DV; the files whose DV was replaced by a larger
  /// one; every old DV that goes (replaced, or with its file).
  int64_t deletion_vectors_added = 0;
  int64_t deletion_vectors_updated = 0;
  int64_t deletion_vectors_removed = 0;
  /// Rows written to new data files (copied or updated): their row ids are not kept.
  bool rows_moved = false;
};

/// Settings of a RowRewriter.
struct RowRewriterOptions {
  std::shared_ptr<const Snapshot> snapshot;
  /// The logical schema rows are read and written in; null: the snapshot's. A schema that
  /// adds nullable columns at the end (MERGE with schema evolution) reads them as nulls from
  /// the existing files.
  std::shared_ptr<arrow::Schema> schema;
  /// Settings of the new data files (in the snapshot's logical schema).
  DataWriterOptions data_options;
  RewriteMode mode = RewriteMode::kCopyOnWrite;
  /// The table has the change data feed: the changes go to cdc files when readers could not
  /// derive them from the add and remove actions alone.
  bool change_data_feed = false;
  /// Names the operation in errors, e.g. "DELETE (id > 5)".
  std::string operation;
  /// When set, every batch of rows written (kept, new and change-data rows, all in the
  /// snapshot's schema) goes through this first: a write that also evolves the schema passes
  /// its commit's schema in `data_options` and converts the rows to it here.
  std::function<arrow::Result<std::shared_ptr<arrow::RecordBatch>>(
      const std::shared_ptr<arrow::RecordBatch>&)>
      to_output;
};

/// The changes one operation makes to the files of one snapshot, for one commit.
///
/// Per file, exactly one of RemoveWholeFile, Delete, Update or Change. A file whose every live
/// row goes is removed; otherwise, with deletion vectors, the file is removed and re-added with its
/// deletion vector extended by the dropped rows (stats kept as they were, with
/// `tightBounds=false`, numRecords unchanged; row-tracking fields kept); with copy-on-write it
/// is removed and the rows that stay are written to a new file. Updated rows are written to
/// new files either way.
///
/// Change data: a commit that has cdc files must describe every change in them, since readers
/// then ignore its adds and removes. Deletes alone need none when they can be read off the
/// actions (whole-file removes; deletion vectors, whose difference readers take as the deleted
/// rows). A copy-on-write Delete (as delta-spark, also one that drops a whole file) and an
/// Update start the cdc files; from then on every delete of the commit, earlier ones included
/// (their files are read again), is written to them as `delete`; updates are written as
/// `update_preimage` and `update_postimage`.
///
/// Not thread-safe, but it can have lanes: further rewriters of the same options, each used by
/// one thread, whose outcomes its Finish merges. Abort() deletes every data, deletion vector
/// and cdc file written, in every lane.
class RowRewriter {
 public:
  static arrow::Result<std::unique_ptr<RowRewriter>> Make(RowRewriterOptions options);

  /// The logical schema (RowRewriterOptions::schema, else the snapshot's): the schema of
  /// FileRows::rows and of Update's new rows.
  const std::shared_ptr<arrow::Schema>& schema() const;

  /// Reads the live rows of file `file_row` of Snapshot::live_files(). Errors name the table,
  /// version and file.
  arrow::Result<FileRows> Read(FileRef file_row) const;

  /// Removes file `file_row` with every row, without reading it.
  arrow::Status RemoveWholeFile(FileRef file_row);

  /// Drops the rows of `file` where `drop` is true (null: kept). `drop` has one value per row.
  arrow::Status Delete(const FileRows& file, const arrow::BooleanArray& drop);

  /// Replaces the rows of `file` where `replace` is true by `new_rows` (in the schema(), one
  /// row per replaced row, in the same order).
  arrow::Status Update(const FileRows& file, const arrow::BooleanArray& replace,
                       const std::shared_ptr<arrow::RecordBatch>& new_rows);

  /// Drops the rows of `file` where `drop` is true and replaces those where `replace` is true by
  /// `new_rows` (as Update), in one change of the file: what MERGE needs when one file loses
  /// some rows and has others updated. A row may not be in both masks. Same as Delete or
  /// Update when the other mask selects nothing. (row_rewriter_change.cc)
  arrow::Status Change(const FileRows& file, const arrow::BooleanArray& drop,
                       const arrow::BooleanArray& replace,
                       const std::shared_ptr<arrow::RecordBatch>& new_rows);

  /// Makes `count` lanes in all (this rewriter is lane 0), for files changed from several
  /// threads at once: each lane has its own data, deletion-vector and change-data writers, and
  /// must be used by one thread at a time; a file is changed in one lane only. Not while a
  /// lane is in use.
  arrow::Status MakeLanes(int count);
  int num_lanes() const { return 1 + static_cast<int>(lanes_.size()); }
  /// Lane `i` (0: this rewriter).
  RowRewriter& lane(int i) { return i == 0 ? *this : *lanes_[i - 1]; }

  /// Writes the deletion vectors, closes every file and returns what to commit, for every
  /// lane (when one lane's changes need change-data files, every lane's deletes go there too).
  /// Nothing may be called afterwards but Abort.
  arrow::Result<RewriteOutcome> Finish();

  /// Deletes every file written (data, deletion vector, cdc); also after Finish, when the
  /// commit failed.
  arrow::Status Abort();

 private:
  explicit RowRewriter(RowRewriterOptions options);
  // Finish of this lane alone.
  arrow::Result<RewriteOutcome> FinishLane();
  arrow::Status StartChangeData();
  arrow::Status WriteDeletedAsChangeData(FileRef file_row,
                                         const std::optional<std::vector<uint64_t>>& positions);
  arrow::Status RemoveFile(FileRef file_row);
  arrow::Status WriteRows(const std::shared_ptr<arrow::RecordBatch>& rows);
  arrow::Status WriteChange(const std::shared_ptr<arrow::RecordBatch>& rows, const char* type);
  // Queues `positions` (rows of `file` to drop) for the file's deletion vector, written by
  // Finish.
  void RequestDeletionVector(const FileRows& file, std::vector<uint64_t> positions);
  arrow::Status FileError(FileRef file_row, const arrow::Status& st) const;
  std::string LogPath(FileRef file_row) const;

  RowRewriterOptions options_;
  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<DataWriter> data_writer_;
  std::unique_ptr<ChangeDataWriter> change_data_;
  std::unique_ptr<DeletionVectorWriter> dv_writer_;
  bool change_data_started_ = false;
  std::vector<std::pair<FileRef, std::optional<std::vector<uint64_t>>>> pending_deletes_;
  std::vector<DeletionVectorRequest> dv_requests_;
  std::vector<FileRef> dv_request_rows_;  ///< file of each DV request
  std::set<FileRef> seen_rows_;  ///< files already changed
  RewriteOutcome outcome_;
  bool finished_ = false;
  std::vector<std::unique_ptr<RowRewriter>> lanes_;  ///< lanes 1..n-1
};

}  // namespace deltacpp::internal
