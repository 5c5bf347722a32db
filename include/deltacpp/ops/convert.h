// CONVERT TO DELTA: make a folder of Parquet files (flat or Hive-partitioned) a Delta table in
// place, by writing its first commit; the data files stay where they are.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deltacpp/transaction.h"

namespace deltacpp {

/// What a conversion made.
struct ConvertResult {
  int64_t version = 0;                          ///< the commit written (0)
  int64_t num_files = 0;                        ///< data files taken into the table
  int64_t num_rows = 0;                         ///< rows in them (when statistics were collected)
  std::shared_ptr<arrow::Schema> schema;        ///< the table's schema, partition columns last
  std::vector<std::string> partition_columns;
};

/// Progress of a long conversion: files whose footer (and, collecting statistics, rows) were
/// read so far, out of those listed.
struct ConvertProgress {
  int64_t files_read = 0;
  int64_t files = 0;
};

/// Converts the Parquet files under `location` into a Delta table:
/// `ConvertToDeltaBuilder("/data/events").PartitionBy("date DATE, country STRING").Execute()`.
///
/// Every visible file under the folder is a data file (names starting with `_` or `.`, such as
/// `_SUCCESS` or `.crc` files, are skipped, and hidden folders are not entered); symbolic links
/// are not followed. Partitioned: each file must sit at the depth of the partition columns,
/// below folders named `<column>=<value>` in the declared order (names case-insensitive,
/// values unescaped as Hive writes them, `__HIVE_DEFAULT_PARTITION__` for null) whose values
/// parse as the declared types. The table schema merges the files' schemas by column name in
/// order of first appearance (a column missing from a file reads as null there), with the
/// partition columns after them; Parquet timestamps become `timestamp` when adjusted to UTC or
/// INT96, `timestamp_ntz` otherwise. Statistics are collected from the files' rows as writers
/// collect them (CollectStats(false) leaves them out). One commit (version 0, operation
/// CONVERT, operationParameters numFiles, partitionedBy, collectStats; metric
/// numConvertedFiles) holds the protocol, the metadata and an add per file, with its size and
/// modification time.
///
/// Errors, each leaving the folder as it was: TableAlreadyExists when the folder is a Delta
/// table already; InvalidArgument for a partition layout that does not match the folders (a
/// file at another depth, a folder not named `<column>=...` for the column of its level), a
/// file that is not Parquet, a partition column also in the files, no data file, or a
/// malformed --partition-by; SchemaMismatch naming both files and the column when the files'
/// schemas do not merge (one column with two types); UnsupportedFeature for a column type Delta
/// does not have (unsigned integers, ...); a malformed partition value names its folder.
class ConvertToDeltaBuilder {
 public:
  explicit ConvertToDeltaBuilder(std::string_view location) : location_(location) {}

  /// The partition columns as `name TYPE, ...` (the order of the folder levels).
  ConvertToDeltaBuilder& PartitionBy(std::string ddl) {
    partition_by_ = std::move(ddl);
    return *this;
  }
  ConvertToDeltaBuilder& CollectStats(bool collect) {
    collect_stats_ = collect;
    return *this;
  }
  /// Table properties of the new table.
  ConvertToDeltaBuilder& Properties(std::map<std::string, std::string> properties) {
    properties_ = std::move(properties);
    return *this;
  }
  ConvertToDeltaBuilder& OnProgress(std::function<void(const ConvertProgress&)> callback) {
    on_progress_ = std::move(callback);
    return *this;
  }
  ConvertToDeltaBuilder& Options(TransactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  arrow::Result<ConvertResult> Execute() const;

 private:
  std::string location_;
  std::optional<std::string> partition_by_;
  bool collect_stats_ = true;
  std::map<std::string, std::string> properties_;
  std::function<void(const ConvertProgress&)> on_progress_;
  TransactionOptions options_;
};

}  // namespace deltacpp
