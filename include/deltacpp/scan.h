// Reading a snapshot: choose columns and a filter, plan the files (partition pruning and
// statistics-based skipping), and stream the rows as Arrow record batches.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/expression.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace deltacpp {

class Snapshot;

/// Scan settings.
struct ScanOptions {
  /// Logical column names to return (case-insensitive); all columns when empty.
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
};

/// One file the scan will read.
struct ScanFile {
  std::string path;           ///< absolute path of the data file
  std::string log_path;       ///< the file's add.path as recorded in the log
  int64_t size = 0;
  int64_t deleted_rows = 0;   ///< cardinality of its deletion vector, 0 when it has none
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
  /// Restricts the output to these columns (case-insensitive, in this order).
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
