// MERGE's join: a hash table over the equality keys of the source rows, probed with the keys of
// each target file's rows.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace deltacpp::internal {

/// True when values of `type` can be join keys: they compare equal exactly when their encoded
/// bytes do (booleans, integers, floating point with -0.0 = 0.0 and NaN = NaN as Spark,
/// decimals, dates, times, timestamps, strings, binaries).
bool IsJoinKeyType(const arrow::DataType& type);

/// The source rows by key. Keys are the values of one or more key columns; a row with a NULL in
/// any key matches nothing (SQL `=`). Without key columns every row is under one key, so every
/// probe returns every row (a join on a condition without equalities).
class JoinKeyIndex {
 public:
  /// Indexes `num_rows` rows whose keys are `keys` (one array per key column, IsJoinKeyType).
  static arrow::Result<JoinKeyIndex> Build(const std::vector<std::shared_ptr<arrow::Array>>& keys,
                                           int64_t num_rows);

  /// Calls `emit(probe_row, indexed_row)` for every pair of rows with equal keys, probe rows in
  /// ascending order and, for each, indexed rows ascending. `keys` are the probe rows' key
  /// columns, of the types given to Build.
  arrow::Status Probe(const std::vector<std::shared_ptr<arrow::Array>>& keys, int64_t num_rows,
                      const std::function<void(int64_t, int64_t)>& emit) const;

  /// The indexed rows with no NULL key.
  int64_t num_indexed() const { return num_indexed_; }

 private:
  std::unordered_map<std::string, int64_t> first_;  ///< key -> first row with it
  std::vector<int64_t> next_;                       ///< row -> next row with its key, or -1
  int64_t num_indexed_ = 0;
};

}  // namespace deltacpp::internal
