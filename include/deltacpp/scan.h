// Reading a snapshot: choose columns and a filter, plan the files (partition pruning and
// statistics-based skipping), and stream the rows as Arrow record batches.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/expression.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deltacpp/actions.h"
#include "deltacpp/live_files.h"

namespace deltacpp {

class Snapshot;

/// Scan settings.
struct ScanOptions {
  /// Logical column names to return (case-insensitive); all columns when empty. The names
  /// kMetadataFilePath and kMetadataRowIndex (when no table column has them) ask for those
  /// metadata columns at that position.
  std::vector<std::string> columns;
  /// SQL-like predicate (`id > 5 AND country = 'ID'`); empty for no filter.
  std::string filter;
  /// An Arrow compute expression over the logical columns (field refs by exact logical name),
  /// applied to rows together with `filter`: rows where it is not TRUE are dropped. Arrow's
  /// semantics apply (not Spark's), and it does not prune files; only `filter` does.
  std::optional<arrow::compute::Expression> row_filter;
  /// Rows per output batch (upper bound).
  int64_t batch_size = 64 * 1024;
  /// Files read at the same time.
  int parallelism = 0;  ///< 0: the CPU thread pool's capacity (at least 2)
  /// When set, only these files (add.path values as in the log) are read.
  std::optional<std::vector<std::string>> only_files;
  /// Metadata columns appended to the output after the table's columns, in this order:
  /// kMetadataFilePath and/or kMetadataRowIndex (also accepted without the `_metadata.` prefix,
  /// case-insensitively). They can also be named among `columns`, at any position.
  std::vector<std::string> metadata_columns;
};

/// `_metadata.file_path` (STRING, not null): the data file's full URI as Spark gives it,
/// `file:` followed by the absolute path percent-encoded like add.path (`file:/tmp/t/part-0.parquet`);
/// equal to ScanFile::uri.
inline constexpr const char* kMetadataFilePath = "_metadata.file_path";
/// `_metadata.row_index` (BIGINT, not null): the row's position in its data file, counted from 0
/// over all the file's rows: before deletion vectors, row-group skipping and the filter, so it is
/// the position a deletion vector names.
inline constexpr const char* kMetadataRowIndex = "_metadata.row_index";

/// Statistics of one column of a file, as recorded in its add.stats.
struct ScanColumnStats {
  std::shared_ptr<arrow::Scalar> min;  ///< lower bound of the non-null values; null: unknown
  std::shared_ptr<arrow::Scalar> max;  ///< upper bound of the non-null values; null: unknown
  std::optional<int64_t> null_count;
};

/// One file the scan will read.
struct ScanFile {
  std::string path;           ///< absolute path of the data file
  std::string log_path;       ///< the file's add.path as recorded in the log
  std::string uri;            ///< the file's full URI: the value of `_metadata.file_path`
  int64_t size = 0;
  int64_t deleted_rows = 0;   ///< cardinality of its deletion vector, 0 when it has none
  /// Where the file's add action is in snapshot->live_files().
  FileRef file_ref;
  /// True when partition values and statistics prove the filter TRUE for every row of the file
  /// (always without a filter): a reader may then skip evaluating it.
  bool all_rows_match = false;
  /// Partition values as in the log (nullopt for a null value), by logical column name.
  std::map<std::string, std::optional<std::string>> partition_values;
  /// The same values typed as the partition columns (a null scalar for a null value).
  std::map<std::string, std::shared_ptr<arrow::Scalar>> typed_partition_values;
  /// add.stats numRecords: rows in the file before its deletion vector; nullopt when unknown.
  std::optional<int64_t> num_records;
  /// add.stats tightBounds; nullopt when the stats do not say.
  std::optional<bool> tight_bounds;
  /// Min/max/null count of the data columns the scan's filter reads (the stats planning parsed),
  /// by logical column name (dot-joined for nested fields); empty without such a filter.
  std::map<std::string, ScanColumnStats> column_stats;
  /// The file's deletion vector, if it has one.
  std::optional<DeletionVectorDescriptor> deletion_vector;
};

/// A planned scan: which files will be read and what the output looks like.
class Scan {
 public:
  virtual ~Scan() = default;
  /// Output schema: the requested logical columns, partition columns with their declared types.
  virtual const std::shared_ptr<arrow::Schema>& schema() const = 0;
  /// Files left after partition pruning and statistics skipping.
  virtual std::vector<ScanFile> files() const = 0;
  /// Files the plan skipped.
  virtual int64_t num_skipped_files() const = 0;
  /// Streams the rows; files are read in parallel, deletion vectors applied, the filter
  /// applied to rows. Errors name the table, version and file.
  virtual arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Execute() const = 0;
  /// Reads everything into one table.
  arrow::Result<std::shared_ptr<arrow::Table>> ToTable() const;
};

/// Builds a Scan over a snapshot.
class ScanBuilder {
 public:
  explicit ScanBuilder(std::shared_ptr<const Snapshot> snapshot)
      : snapshot_(std::move(snapshot)) {}
  /// Restricts the output to these columns (case-insensitive, in this order). The metadata
  /// columns kMetadataFilePath and kMetadataRowIndex may be among them.
  ScanBuilder& Columns(std::vector<std::string> columns) {
    options_.columns = std::move(columns);
    return *this;
  }
  /// Keeps only rows for which `predicate` is TRUE. Parse and binding errors are reported by
  /// Build() as InvalidExpression.
  ScanBuilder& Filter(std::string predicate) {
    options_.filter = std::move(predicate);
    return *this;
  }
  /// Keeps only rows for which the Arrow expression `predicate` (see ScanOptions::row_filter)
  /// is TRUE. A reference to a missing column or a non-boolean expression is reported by
  /// Build() as InvalidExpression.
  ScanBuilder& Filter(arrow::compute::Expression predicate) {
    options_.row_filter = std::move(predicate);
    return *this;
  }
  /// Appends metadata columns to the output (see ScanOptions::metadata_columns). An unknown
  /// name is reported by Build() as InvalidArgument.
  ScanBuilder& WithMetadataColumns(std::vector<std::string> names) {
    options_.metadata_columns = std::move(names);
    return *this;
  }
  ScanBuilder& Options(ScanOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// Plans the scan.
  arrow::Result<std::shared_ptr<Scan>> Build() const;

 private:
  std::shared_ptr<const Snapshot> snapshot_;
  ScanOptions options_;
};

}  // namespace deltacpp
