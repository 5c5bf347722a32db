// MERGE's join: a hash table over the equality keys of the source rows, probed with the keys of
// each target file's rows.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp::internal {

/// True when values of `type` can be join keys: they compare equal exactly when their encoded
/// bytes do (booleans, integers, floating point with -0.0 = 0.0 and NaN = NaN as Spark,
/// decimals, dates, times, timestamps, strings, binaries).
bool IsJoinKeyType(const arrow::DataType& type);

/// The source rows by key. Keys are the values of one or more key columns; a row with a NULL in
/// any key matches nothing (SQL `=`). Without key columns every row is under one key, so every
/// probe returns every row (a join on a condition without equalities).
///
/// An open-addressing table (linear probing, at most half full) of key -> first row with it;
/// rows with equal keys are chained in row order. Keys whose columns are all fixed width and
/// fit in 8 bytes together (one integer, date or timestamp column, the common case) are packed
/// into a 64-bit word and compared as such; other keys are encoded to bytes (strings with their
/// length) kept in one buffer, and compared by hash, then bytes. A bit array of 8 bits per
/// indexed row (one bit per key, by hash) is checked before the table: most probe keys the
/// source lacks cost one look at it. Probe is const and may run on several threads at once.
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
  struct Slot {
    uint64_t key;   ///< the packed key, or the hash of the encoded key
    int64_t first;  ///< first row with the key; -1: empty slot
  };
  /// Encoded keys of a batch of rows: packed words, or hashes plus bytes.
  struct Encoded;
  static arrow::Status Encode(const std::vector<std::shared_ptr<arrow::Array>>& keys,
                              int64_t num_rows, bool packed, Encoded* out);
  /// The hash of a key word (the word is the hash in the byte form).
  uint64_t HashOf(uint64_t word) const;
  /// The slot holding the key `word` (packed, else the hash of `bytes`, its encoding), or the
  /// empty slot where it would go.
  size_t Find(uint64_t word, std::string_view bytes) const;
  /// The encoded bytes of `row` of `batch` (empty in the packed form).
  static std::string_view BytesOf(const Encoded& batch, int64_t row);

  bool packed_ = true;
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  std::vector<int64_t> next_;  ///< row -> next row with its key, or -1
  /// One bit per hash value (high bits of the hash, modulo its size) of the indexed keys.
  std::vector<uint64_t> filter_;
  uint64_t filter_mask_ = 0;
  /// Encoded keys of the indexed rows (the byte form only).
  std::vector<int64_t> key_offsets_;
  std::string key_bytes_;
  int64_t num_indexed_ = 0;
};

}  // namespace deltacpp::internal
