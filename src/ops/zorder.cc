#include "ops/zorder.h"

#include <arrow/compute/api.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

bool Orderable(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRUCT:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::MAP:
    case arrow::Type::NA:
      return false;
    default:
      return true;
  }
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::UInt64Array>> ZOrderKeys(
    const arrow::RecordBatch& rows, const std::vector<std::string>& columns) {
  Initialize();  // the rank and sort kernels must be registered
  const size_t k = columns.size();
  if (k == 0 || k > 64) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("Z-order needs 1 to 64 columns, not {}", k));
  }
  const int bits = static_cast<int>(64 / k);
  const int64_t n = rows.num_rows();
  std::vector<std::vector<uint64_t>> codes(k);
  for (size_t c = 0; c < k; ++c) {
    int index = -1;
    for (int i = 0; i < rows.num_columns(); ++i) {
      if (EqualsIgnoreCase(rows.schema()->field(i)->name(), columns[c])) index = i;
    }
    if (index < 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("Z-order column {} is not a column of the rows", columns[c]));
    }
    const auto& values = rows.column(index);
    if (!Orderable(*values->type())) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        fmt::format("Z-order column {} has type {}, which has no order",
                                    columns[c], values->type()->ToString()));
    }
    arrow::compute::RankOptions options(arrow::compute::SortOrder::Ascending,
                                        arrow::compute::NullPlacement::AtStart,
                                        arrow::compute::RankOptions::Dense);
    ARROW_ASSIGN_OR_RAISE(auto ranked, arrow::compute::CallFunction("rank", {values}, &options));
    const auto& ranks = static_cast<const arrow::UInt64Array&>(*ranked.make_array());
    uint64_t distinct = 0;
    for (int64_t r = 0; r < n; ++r) distinct = std::max(distinct, ranks.Value(r));
    // rank 1..distinct -> [0, 2^bits), spread evenly.
    const long double scale =
        distinct == 0 ? 0.0L : std::ldexp(1.0L, bits) / static_cast<long double>(distinct);
    const uint64_t top = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    auto& out = codes[c];
    out.resize(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      const auto scaled =
          static_cast<uint64_t>(static_cast<long double>(ranks.Value(r) - 1) * scale);
      out[static_cast<size_t>(r)] = std::min(scaled, top);
    }
  }
  arrow::UInt64Builder builder;
  ARROW_RETURN_NOT_OK(builder.Resize(n));
  for (int64_t r = 0; r < n; ++r) {
    uint64_t key = 0;
    for (int b = bits - 1; b >= 0; --b) {
      for (size_t c = 0; c < k; ++c) {
        key = (key << 1) | ((codes[c][static_cast<size_t>(r)] >> b) & 1ULL);
      }
    }
    builder.UnsafeAppend(key);
  }
  std::shared_ptr<arrow::UInt64Array> keys;
  ARROW_RETURN_NOT_OK(builder.Finish(&keys));
  return keys;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> SortByZOrder(
    const std::shared_ptr<arrow::RecordBatch>& rows, const std::vector<std::string>& columns) {
  ARROW_ASSIGN_OR_RAISE(auto keys, ZOrderKeys(*rows, columns));
  ARROW_ASSIGN_OR_RAISE(auto order, arrow::compute::SortIndices(*keys));
  ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(rows, order));
  return taken.record_batch();
}

}  // namespace deltacpp::internal
