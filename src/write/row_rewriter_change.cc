// RowRewriter::Change: some rows of a file dropped and others replaced in one change of the file
// (MERGE), beside the single-kind Delete and Update of row_rewriter.cc.
#include <arrow/compute/api.h>

#include "ops/op_util.h"
#include "write/row_rewriter.h"

namespace deltacpp::internal {

namespace {

// TRUE where the mask is TRUE (NULL counts as false).
std::vector<bool> Selected(const arrow::BooleanArray& mask) {
  std::vector<bool> out(mask.length());
  for (int64_t i = 0; i < mask.length(); ++i) out[i] = mask.IsValid(i) && mask.Value(i);
  return out;
}

}  // namespace

arrow::Status RowRewriter::Change(const FileRows& file, const arrow::BooleanArray& drop,
                                  const arrow::BooleanArray& replace,
                                  const std::shared_ptr<arrow::RecordBatch>& new_rows) {
  if (finished_) return arrow::Status::Invalid("RowRewriter: already finished");
  const int64_t rows = file.rows->num_rows();
  if (drop.length() != rows || replace.length() != rows) {
    return FileError(file.file_row,
                     arrow::Status::Invalid("the masks have ", drop.length(), " and ",
                                            replace.length(), " values for ", rows, " rows"));
  }
  const auto dropped = Selected(drop);
  const auto replaced = Selected(replace);
  int64_t num_dropped = 0;
  int64_t num_replaced = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (dropped[i] && replaced[i]) {
      return FileError(file.file_row, arrow::Status::Invalid("row ", i,
                                                             " is both dropped and replaced"));
    }
    num_dropped += dropped[i];
    num_replaced += replaced[i];
  }
  if (num_replaced == 0) return Delete(file, drop);
  if (num_dropped == 0) return Update(file, replace, new_rows);
  if (num_replaced != new_rows->num_rows()) {
    return FileError(file.file_row, arrow::Status::Invalid(num_replaced, " rows are replaced by ",
                                                           new_rows->num_rows(), " new rows"));
  }
  if (!seen_rows_.insert(file.file_row).second) {
    return FileError(file.file_row, arrow::Status::Invalid("the file is changed twice"));
  }
  outcome_.updated_rows += num_replaced;
  outcome_.deleted_rows += num_dropped;
  // An update always needs change data (readers cannot tell updates from the actions), so the
  // deleted rows go to it too.
  ARROW_ASSIGN_OR_RAISE(auto old_rows, SelectRows(file.rows, replaced));
  ARROW_ASSIGN_OR_RAISE(auto gone_rows, SelectRows(file.rows, dropped));
  auto st = WriteRows(new_rows);
  if (st.ok()) st = StartChangeData();
  if (st.ok() && change_data_started_) st = WriteChange(old_rows, "update_preimage");
  if (st.ok() && change_data_started_) st = WriteChange(new_rows, "update_postimage");
  if (st.ok() && change_data_started_) st = WriteChange(gone_rows, "delete");
  if (!st.ok()) return FileError(file.file_row, st);
  if (num_dropped + num_replaced == rows) return RemoveFile(file.file_row);
  std::vector<bool> keep(rows);
  std::vector<uint64_t> positions;
  for (int64_t i = 0; i < rows; ++i) {
    keep[i] = !dropped[i] && !replaced[i];
    if (!keep[i]) positions.push_back(file.positions[i]);
  }
  if (options_.mode == RewriteMode::kDeletionVectors) {
    RequestDeletionVector(file, std::move(positions));
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(RemoveFile(file.file_row));
  ARROW_ASSIGN_OR_RAISE(auto kept, SelectRows(file.rows, keep));
  outcome_.copied_rows += kept->num_rows();
  st = WriteRows(kept);
  return st.ok() ? st : FileError(file.file_row, st);
}

}  // namespace deltacpp::internal
