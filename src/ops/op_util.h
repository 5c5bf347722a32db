// Small pieces every operation needs: JSON text for commitInfo parameters, remove actions for
// live files, table-property lookups, time and ids.
#pragma once

#include "util/clock.h"

#include <arrow/api.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/actions.h"
#include "deltacpp/snapshot.h"

namespace deltacpp::internal {

/// `["a","b"]`.
std::string JsonStringArray(const std::vector<std::string>& values);
/// `{"k":"v",...}`.
std::string JsonStringObject(const std::map<std::string, std::string>& values);
/// A JSON string literal of `value`.
std::string JsonQuote(const std::string& value);


/// A remove action for live file `row` of `files` (a batch of add actions), with
/// deletionTimestamp `now_ms`, extendedFileMetadata, partition values, size, stats, tags, DV and
/// row-tracking fields copied from the add.
RemoveFile RemoveForLiveFile(const arrow::RecordBatch& files, int64_t row, int64_t now_ms);
/// The same for live file `file` of `files`.
inline RemoveFile RemoveForLiveFile(const LiveFiles& files, FileRef file, int64_t now_ms) {
  return RemoveForLiveFile(files.actions(file), file.row, now_ms);
}


/// The add action of live file `row` of `files` as it was recorded (path, partition values,
/// size, modification time, stats, tags, DV, row-tracking fields, clustering provider), with
/// dataChange true.
AddFile AddForLiveFile(const arrow::RecordBatch& files, int64_t row);

/// `name=value, ...` of one row, for error messages.
std::string RowText(const arrow::RecordBatch& batch, int64_t row);

/// Same versions and the same features in force (in any order).
bool SameProtocol(const Protocol& a, const Protocol& b);

}  // namespace deltacpp::internal
