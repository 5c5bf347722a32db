// Refusing string values that are not valid UTF-8 before they are written: Delta strings are
// UTF-8, and their statistics and partition values go into the JSON log.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace deltacpp::internal {

/// OK when every string value of `batch` that a data file would hold is valid UTF-8: values of
/// string, large string and string view columns, at any depth inside structs, lists and maps.
/// Values under a null parent are not written and not checked. Otherwise SchemaMismatch naming
/// the first offending row and its column: `<context>column '<path>' row <n> of the write: the
/// string is not valid UTF-8 (byte 0xNN at offset K of '...')`, where the path names the leaf
/// (`s.name`, `tags.element`, `attrs.key`, `attrs.value`) and rows count from 1: `n` is
/// `rows_before` plus the 1-based row within `batch`.
///
/// Top-level binary columns named in `partition_columns` are checked too: their values become
/// partition values, which the log holds as text.
arrow::Status CheckStringsAreUtf8(const arrow::RecordBatch& batch, int64_t rows_before,
                                  std::string_view context,
                                  const std::vector<std::string>& partition_columns = {});

}  // namespace deltacpp::internal
