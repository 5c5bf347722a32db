#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <memory>

namespace deltacpp::cli {

/// `batch` with the validity bitmaps of NOT NULL nested fields removed where every null they
/// hold sits under a null ancestor (a null struct, or a position outside any present list or
/// map entry). Such nulls are invisible to readers, but Parquet's writer refuses any null in a
/// required field, so a null struct with a NOT NULL field could not be written otherwise.
/// The schema, declared nullability included, is unchanged. A NOT NULL field holding a null
/// that is visible (its parent present) is an Invalid status naming the field.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> WithMaskedNullsCleared(
    const arrow::RecordBatch& batch);

}  // namespace deltacpp::cli
