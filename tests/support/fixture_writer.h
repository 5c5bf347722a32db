// Test-only writer laying Delta tables (Parquet data, JSON commits, checkpoints) on disk.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace deltacpp::testing {

/// One data file for FixtureTableWriter::Append / Remove. Construct with the data (and partition
/// values), then adjust with the chainable setters, e.g.
/// `FixtureFile(table, {{"p", "a"}}).WithDeletedRows({1, 3})`.
struct FixtureFile {
  FixtureFile() = default;
  /// A file holding `data` with the given serialized partition values.
  explicit FixtureFile(std::shared_ptr<arrow::Table> data,
                       std::map<std::string, std::optional<std::string>> partition_values = {})
      : data(std::move(data)), partition_values(std::move(partition_values)) {}

  /// Columns of the file, partition columns excluded (column names are the physical names).
  std::shared_ptr<arrow::Table> data;
  /// Serialized partition values, one per partition column (std::nullopt = SQL NULL).
  std::map<std::string, std::optional<std::string>> partition_values;
  /// Upper bound on rows per Parquet row group (smaller values give multi-row-group files).
  int64_t max_row_group_rows = 1 << 20;
  /// Writes `add.stats` (numRecords, minValues, maxValues, nullCount) for primitive columns,
  /// including the leaves of struct columns; lists and maps get no stats.
  bool with_stats = true;
  /// Non-empty: attach an inline ("i") deletion vector deleting these row indexes (the table must
  /// support the deletionVectors feature). Stats then carry `tightBounds: false`.
  std::vector<uint64_t> deleted_rows;
  /// `add.dataChange`.
  bool data_change = true;
  /// `add.tags` (omitted when empty).
  std::map<std::string, std::string> tags;

  /// Sets max_row_group_rows.
  FixtureFile& WithMaxRowGroupRows(int64_t rows) {
    max_row_group_rows = rows;
    return *this;
  }
  /// Sets with_stats.
  FixtureFile& WithStats(bool on) {
    with_stats = on;
    return *this;
  }
  /// Sets deleted_rows.
  FixtureFile& WithDeletedRows(std::vector<uint64_t> rows) {
    deleted_rows = std::move(rows);
    return *this;
  }
  /// Sets data_change.
  FixtureFile& WithDataChange(bool on) {
    data_change = on;
    return *this;
  }
  /// Sets tags.
  FixtureFile& WithTags(std::map<std::string, std::string> t) {
    tags = std::move(t);
    return *this;
  }
};

/// Writes a Delta table commit by commit, tracking the live files in memory. Not a transactional
/// writer: it assumes it is the only writer of the table and that it created it.
class FixtureTableWriter {
 public:
  /// `table_root` is a local directory (created if missing).
  explicit FixtureTableWriter(std::string table_root);

  /// Writes version 0: commitInfo, protocol and metaData. The schemaString is converted from
  /// `schema` (primitive, struct, list and map types; Arrow field metadata becomes Delta field
  /// metadata). Reader features are written iff `min_reader == 3`, writer features iff
  /// `min_writer == 7`. Errors: AlreadyExists when version 0 exists, Invalid for unknown
  /// partition columns, NotImplemented for Arrow types without a Delta equivalent.
  arrow::Status Create(const std::shared_ptr<arrow::Schema>& schema,
                       std::vector<std::string> partition_columns = {},
                       std::map<std::string, std::string> configuration = {}, int min_reader = 1,
                       int min_writer = 2, std::vector<std::string> reader_features = {},
                       std::vector<std::string> writer_features = {},
                       std::optional<int64_t> commit_timestamp_ms = {});

  /// As Create, with a raw `schema_string` written verbatim into metaData.schemaString.
  arrow::Status CreateWithSchemaString(const std::string& schema_string,
                                       std::vector<std::string> partition_columns = {},
                                       std::map<std::string, std::string> configuration = {},
                                       int min_reader = 1, int min_writer = 2,
                                       std::vector<std::string> reader_features = {},
                                       std::vector<std::string> writer_features = {},
                                       std::optional<int64_t> commit_timestamp_ms = {});

  /// Writes each file as snappy Parquet (under Hive-style `col=value/` folders when partitioned)
  /// and then the next commit: commitInfo plus one add per file. `in_commit_timestamp_ms` is
  /// written as commitInfo.inCommitTimestamp; when absent and the table sets
  /// `delta.enableInCommitTimestamps=true`, one is derived from the commit timestamp (kept
  /// strictly increasing). Returns the version written.
  arrow::Result<int64_t> Append(const std::vector<FixtureFile>& files,
                                std::string operation = "WRITE",
                                std::optional<int64_t> commit_timestamp_ms = {},
                                std::optional<int64_t> in_commit_timestamp_ms = {});

  /// Next commit removing the live files at `paths` (as recorded in add.path; remove actions
  /// with deletionTimestamp, dataChange true, extendedFileMetadata, partitionValues, size and the
  /// file's DV) and adding `add_files`. Errors: KeyError when a path is not live.
  arrow::Result<int64_t> Remove(const std::vector<std::string>& paths,
                                const std::vector<FixtureFile>& add_files = {},
                                std::string operation = "DELETE",
                                std::optional<int64_t> commit_timestamp_ms = {});

  /// Writes `json_lines` verbatim as the next commit (version 0 when nothing was written yet).
  /// Lines that parse as actions also update the tracked state (protocol, metaData, txn,
  /// domainMetadata, add, remove); malformed lines are written but otherwise ignored.
  arrow::Result<int64_t> CommitRaw(const std::vector<std::string>& json_lines);

  /// Writes a classic single-file checkpoint `<version>.checkpoint.parquet` of the tracked state
  /// at the latest version (top-level columns txn, add, remove, metaData, protocol, plus
  /// domainMetadata when live domains exist; add.stats as a JSON string; every tombstone is kept,
  /// retention is not applied), then `_last_checkpoint`. Errors: Invalid when no protocol or
  /// metaData is known.
  arrow::Status WriteCheckpoint();

  /// Sets the modification time of commit `version`'s JSON file to `epoch_ms`.
  arrow::Status SetCommitFileTime(int64_t version, int64_t epoch_ms);

  /// add.path of every live file, sorted.
  std::vector<std::string> active_paths() const;
  /// Latest version written (-1 before the first commit).
  int64_t version() const { return version_; }
  /// The table root given to the constructor.
  const std::string& table_root() const { return table_root_; }

  /// A tracked live file or tombstone (exposed for tests that check what was recorded).
  struct FileEntry {
    std::string path;
    std::map<std::string, std::optional<std::string>> partition_values;
    int64_t size = 0;  ///< -1 for a tombstone recorded without extendedFileMetadata
    int64_t modification_time = 0;
    std::optional<int64_t> deletion_timestamp;  ///< set for tombstones
    std::optional<std::string> stats;
    std::map<std::string, std::string> tags;
    std::optional<std::string> dv_storage_type;
    std::string dv_path_or_inline;
    std::optional<int32_t> dv_offset;
    int32_t dv_size_in_bytes = 0;
    int64_t dv_cardinality = 0;
    std::optional<int64_t> base_row_id;
    std::optional<int64_t> default_row_commit_version;
    std::optional<std::string> clustering_provider;

    /// (path, dvUniqueId) key used for reconciliation.
    std::string Key() const;
  };

  /// Reconciled state of the table as tracked from the commits written.
  struct State {
    std::optional<int> min_reader;
    std::optional<int> min_writer;
    std::optional<std::vector<std::string>> reader_features;
    std::optional<std::vector<std::string>> writer_features;
    bool has_metadata = false;
    std::string table_id;
    std::optional<std::string> name;
    std::optional<std::string> description;
    std::map<std::string, std::string> format_options;
    std::string schema_string;
    std::vector<std::string> partition_columns;
    std::map<std::string, std::string> configuration;
    std::optional<int64_t> created_time;
    struct TxnEntry {
      int64_t version = 0;
      std::optional<int64_t> last_updated;
    };
    std::map<std::string, TxnEntry> txns;         ///< by appId
    std::map<std::string, std::string> domains;   ///< live domain -> configuration
    std::map<std::string, FileEntry> live;        ///< by FileEntry::Key()
    std::map<std::string, FileEntry> tombstones;  ///< by FileEntry::Key()
  };
  /// The tracked state.
  const State& state() const { return state_; }

 private:
  arrow::Status CreateImpl(const std::string& schema_string,
                           std::vector<std::string> partition_columns,
                           std::map<std::string, std::string> configuration, int min_reader,
                           int min_writer, std::vector<std::string> reader_features,
                           std::vector<std::string> writer_features,
                           std::optional<int64_t> commit_timestamp_ms);
  arrow::Result<FileEntry> WriteDataFile(const FixtureFile& file, int64_t commit_ts);
  arrow::Result<int64_t> WriteCommit(const std::string& body);
  std::string CommitInfoLine(const std::string& operation, const std::string& params_json,
                             int64_t ts, std::optional<int64_t> ict, bool blind_append) const;
  std::optional<int64_t> ResolveIct(std::optional<int64_t> explicit_ict, int64_t ts);
  void ApplyActionLine(const std::string& line);
  std::string LogDir() const;

  std::string table_root_;
  int64_t version_ = -1;
  int64_t file_counter_ = 0;
  std::optional<int64_t> last_ict_;
  State state_;
};

/// Generates a table log without data files: `num_commits` commits (version 0 holds protocol and
/// metaData of a table partitioned by `part`), `total_active_files` live adds at the end spread
/// over the commits, removes of earlier files (about a tenth of the live count) so replay has work,
/// one txn per commit, a classic checkpoint at every version that is a positive multiple of
/// `checkpoint_interval` (none when it is <= 0) and `_last_checkpoint` for the newest one.
/// Commit files get the commit timestamps as modification times. Errors: AlreadyExists when the
/// log directory has a version 0, Invalid for negative sizes or `num_commits < 1`.
arrow::Status GenerateLogOnlyTable(const std::string& table_root, int64_t num_commits,
                                   int64_t total_active_files, int64_t checkpoint_interval);

}  // namespace deltacpp::testing
