// Z-order: one 64-bit key per row interleaving the bits of several columns, so that rows
// sorted by it are close in every one of those columns at once.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

namespace deltacpp::internal {

/// The Z-order key of each row of `rows` over `columns` (names of top-level fields of `rows`,
/// matched case-insensitively). Each column's values are first replaced by their dense rank
/// among the distinct values (nulls lowest, NaN above every number), scaled to 64 / k bits for
/// k columns, so that columns of any orderable type and spread weigh alike; the key takes one
/// bit of each column in turn, most significant first. Errors: InvalidArgument for no columns,
/// more than 64, an unknown one, or one of a type without an order (struct, list, map).
arrow::Result<std::shared_ptr<arrow::UInt64Array>> ZOrderKeys(
    const arrow::RecordBatch& rows, const std::vector<std::string>& columns);

/// `rows` sorted by ZOrderKeys (stable: rows with equal keys keep their order).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> SortByZOrder(
    const std::shared_ptr<arrow::RecordBatch>& rows, const std::vector<std::string>& columns);

}  // namespace deltacpp::internal
