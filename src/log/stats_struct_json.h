// Turns a checkpoint's typed `stats_parsed` struct back into the `stats` JSON text, for
// checkpoints written with writeStatsAsStruct only.
#pragma once

#include <arrow/api.h>

namespace deltacpp::internal {

/// One JSON string per row of `stats_parsed` (numRecords, minValues, maxValues, nullCount,
/// tightBounds); null where the row is null. Values use the text forms of `add.stats`:
/// dates `yyyy-mm-dd`, timestamps ISO-8601 with milliseconds (`Z` when zoned).
arrow::Result<std::shared_ptr<arrow::Array>> StatsStructToJson(const arrow::StructArray& stats);

}  // namespace deltacpp::internal
