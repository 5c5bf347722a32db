// File statistics as typed columns: the `stats` JSON of a batch of add actions parsed once into
// struct<numRecords, minValues, maxValues, nullCount, tightBounds> (the layout of a checkpoint's
// stats_parsed), and read back per file for the columns a filter needs.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "deltacpp/live_files.h"
#include "expr/file_stats.h"

namespace deltacpp::internal {

enum class StatKind { kMin, kMax, kNullCount };

/// Fields of minValues/maxValues (`counts` false) or nullCount (`counts` true) over the data
/// fields `fields` (logical fields, named physically in the result), limited to the leaves
/// whose dot-joined physical path is in `present` (every leaf when `present` is null).
arrow::FieldVector StatsFields(const arrow::FieldVector& fields, const std::string& prefix,
                               const std::set<std::string>* present, bool counts);

/// Appends one row to `builder` (of struct `type`, a StatsFields struct): the `kind` values of
/// `stats`, null where a statistic is unknown or not of the field's type.
arrow::Status FillStats(arrow::StructBuilder* builder, const arrow::StructType& type,
                        const std::string& prefix, const FileStats& stats, StatKind kind);

/// The typed statistics of a table's data columns (partition columns excluded).
class StatsLayout {
 public:
  /// `data_schema`: the logical data fields (no partition columns).
  explicit StatsLayout(std::shared_ptr<arrow::Schema> data_schema);
  const std::shared_ptr<arrow::Schema>& data_schema() const { return data_schema_; }
  /// struct<numRecords: int64, minValues, maxValues, nullCount, tightBounds: bool>.
  const std::shared_ptr<arrow::DataType>& type() const { return type_; }

 private:
  std::shared_ptr<arrow::Schema> data_schema_;
  std::shared_ptr<arrow::DataType> type_;
};

/// One typed row per row of `stats` (add.stats JSON text); a null row where the text is null or
/// malformed (the file then has unknown statistics, as with ParseStatsJson).
arrow::Result<std::shared_ptr<arrow::StructArray>> ParseStatsColumn(const arrow::StringArray& stats,
                                                                    const StatsLayout& layout);

/// The typed statistics of every row of `chunk`'s actions (ParseStatsColumn), parsed on the first
/// call and kept with the chunk, so every snapshot sharing the chunk reuses them. Parsed again
/// only for another layout (the table's schema changed).
arrow::Result<std::shared_ptr<arrow::StructArray>> ChunkStats(const FileChunk& chunk,
                                                             const StatsLayout& layout);

/// Reads FileStats of single rows of a typed statistics array for a fixed set of columns.
class TypedStatsReader {
 public:
  /// `physical_paths`: dot-joined physical paths of the columns wanted.
  TypedStatsReader(std::shared_ptr<arrow::StructArray> stats,
                   const std::vector<std::string>& physical_paths);
  /// The row's statistics; nullopt when the file has none.
  std::optional<FileStats> At(int64_t row) const;

 private:
  struct Column {
    std::string path;
    std::shared_ptr<arrow::Array> min, max, null_count;
  };
  std::shared_ptr<arrow::StructArray> stats_;
  std::shared_ptr<arrow::Array> num_records_, tight_bounds_;
  std::vector<Column> columns_;
};

}  // namespace deltacpp::internal
