// Change-data (`cdc`) files of one commit: changed rows tagged with their `_change_type`, written
// under `_change_data/` like data files. Returns `cdc` actions; never commits.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

#include "deltacpp/actions.h"
#include "write/data_writer.h"

namespace deltacpp::internal {

/// The column holding each change row's kind: insert, delete, update_preimage or
/// update_postimage.
inline constexpr char kChangeTypeColumn[] = "_change_type";

/// Writes the change-data files of one commit: rows in the table's logical schema plus
/// `_change_type`, laid out like data files (physical column names, partition columns only in
/// the folders and partitionValues) under `_change_data/`, named `cdc-...`, without statistics.
/// Not thread-safe.
class ChangeDataWriter {
 public:
  /// `data_options` are those of the commit's data files. SchemaMismatch when the table has a
  /// column named `_change_type` (the name the change data feed reserves).
  static arrow::Result<std::unique_ptr<ChangeDataWriter>> Make(DataWriterOptions data_options);

  /// Writes `rows` (in the table's logical schema) as changes of kind `change_type`.
  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& rows,
                      const std::string& change_type);

  /// True once a row was written.
  bool written() const { return written_; }

  /// Closes the files and returns their `cdc` actions (dataChange=false).
  arrow::Result<std::vector<CdcFile>> Finish();

  /// Deletes every file written so far, also after Finish.
  arrow::Status Abort();

 private:
  ChangeDataWriter() = default;

  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<DataWriter> writer_;
  bool written_ = false;
};

}  // namespace deltacpp::internal
