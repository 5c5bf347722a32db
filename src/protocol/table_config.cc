// TableConfig: the typed view of a table's `delta.*` properties.
#include "deltacpp/table_config.h"

#include <fmt/core.h>

#include <cctype>

#include "deltacpp/error.h"
#include "protocol/table_properties.h"
#include "util/uri.h"

namespace deltacpp {
namespace {

using internal::EqualsIgnoreCase;

// Reads each known property into its field, recording malformed values instead of failing.
class ConfigParser {
 public:
  ConfigParser(const std::map<std::string, std::string>& conf, TableConfig* out)
      : conf_(conf), out_(out) {}

  void Bool(const char* key, bool* field) {
    const std::string* v = Find(key);
    if (!v) return;
    if (EqualsIgnoreCase(*v, "true")) {
      *field = true;
    } else if (EqualsIgnoreCase(*v, "false")) {
      *field = false;
    } else {
      Invalid(key, *v, "the value must be true or false");
    }
  }

  template <typename Field>
  void Int(const char* key, int64_t min, Field* field) {
    const std::string* v = Find(key);
    if (!v) return;
    auto parsed = internal::ParseIntegerProperty(*v, key);
    if (!parsed.ok()) {
      Invalid(key, *v, "the value is not an integer");
    } else if (*parsed < min) {
      Invalid(key, *v, fmt::format("the value must be at least {}", min));
    } else {
      *field = *parsed;
    }
  }

  template <typename Field>
  void Interval(const char* key, Field* field) {
    const std::string* v = Find(key);
    if (!v) return;
    auto parsed = internal::ParseIntervalMs(*v, key);
    if (parsed.ok()) {
      *field = *parsed;
      return;
    }
    // Keep only the reason; the key and value are named by CheckValid.
    std::string why = parsed.status().message();
    const std::string lead = "invalid interval '" + *v + "': ";
    if (auto at = why.find(lead); at != std::string::npos) why = why.substr(at + lead.size());
    Invalid(key, *v, why);
  }

  // One of `choices` (case-insensitive); returns its index, or -1 when absent or malformed.
  int Choice(const char* key, std::initializer_list<const char*> choices) {
    const std::string* v = Find(key);
    if (!v) return -1;
    std::string_view trimmed = *v;
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) {
      trimmed.remove_prefix(1);
    }
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) {
      trimmed.remove_suffix(1);
    }
    int i = 0;
    std::string listed;
    for (const char* c : choices) {
      if (EqualsIgnoreCase(trimmed, c)) return i;
      listed += (i++ ? ", " : "") + std::string(c);
    }
    Invalid(key, *v, "the value must be one of " + listed);
    return -1;
  }

  void Text(const char* key, std::optional<std::string>* field) {
    if (const std::string* v = Find(key)) *field = *v;
  }

 private:
  const std::string* Find(const char* key) const {
    auto it = conf_.find(key);
    return it == conf_.end() ? nullptr : &it->second;
  }
  void Invalid(const char* key, const std::string& value, std::string reason) {
    out_->invalid.emplace(key, std::make_pair(value, std::move(reason)));
  }

  const std::map<std::string, std::string>& conf_;
  TableConfig* out_;
};

}  // namespace

TableConfig TableConfig::Parse(const std::map<std::string, std::string>& configuration) {
  TableConfig c;
  ConfigParser p(configuration, &c);
  p.Bool("delta.appendOnly", &c.append_only);
  bool cdc_legacy = false;
  p.Bool("delta.enableChangeDataCapture", &cdc_legacy);
  p.Bool("delta.enableChangeDataFeed", &c.change_data_feed);
  c.change_data_feed = c.change_data_feed || cdc_legacy;
  p.Bool("delta.enableDeletionVectors", &c.deletion_vectors);
  switch (p.Choice("delta.columnMapping.mode", {"none", "name", "id"})) {
    case 1:
      c.column_mapping_mode = ColumnMappingMode::kName;
      break;
    case 2:
      c.column_mapping_mode = ColumnMappingMode::kId;
      break;
    default:
      break;
  }
  p.Int("delta.columnMapping.maxColumnId", 0, &c.column_mapping_max_column_id);
  p.Bool("delta.enableRowTracking", &c.row_tracking);
  p.Bool("delta.rowTrackingSuspended", &c.row_tracking_suspended);
  p.Text("delta.rowTracking.materializedRowIdColumnName", &c.materialized_row_id_column);
  p.Text("delta.rowTracking.materializedRowCommitVersionColumnName",
         &c.materialized_row_commit_version_column);
  p.Bool("delta.enableInCommitTimestamps", &c.in_commit_timestamps);
  p.Int("delta.inCommitTimestampEnablementVersion", 0, &c.in_commit_timestamp_enablement_version);
  p.Int("delta.inCommitTimestampEnablementTimestamp", INT64_MIN,
        &c.in_commit_timestamp_enablement_timestamp);
  p.Bool("delta.enableTypeWidening", &c.type_widening);
  p.Int("delta.dataSkippingNumIndexedCols", -1, &c.data_skipping_num_indexed_cols);
  p.Text("delta.dataSkippingStatsColumns", &c.data_skipping_stats_columns);
  p.Int("delta.dataSkippingStringPrefixLength", 0, &c.data_skipping_string_prefix_length);
  p.Int("delta.checkpointInterval", 1, &c.checkpoint_interval);
  if (p.Choice("delta.checkpointPolicy", {"classic", "v2"}) == 1) {
    c.checkpoint_policy = CheckpointPolicy::kV2;
  }
  p.Bool("delta.checkpoint.writeStatsAsJson", &c.checkpoint_write_stats_as_json);
  p.Bool("delta.checkpoint.writeStatsAsStruct", &c.checkpoint_write_stats_as_struct);
  p.Interval("delta.logRetentionDuration", &c.log_retention_ms);
  p.Interval("delta.deletedFileRetentionDuration", &c.deleted_file_retention_ms);
  p.Interval("delta.checkpointRetentionDuration", &c.checkpoint_retention_ms);
  p.Interval("delta.setTransactionRetentionDuration", &c.set_transaction_retention_ms);
  p.Bool("delta.enableExpiredLogCleanup", &c.enable_expired_log_cleanup);
  c.serializable_isolation = p.Choice("delta.isolationLevel", {"Serializable"}) == 0;
  p.Bool("delta.randomizeFilePrefixes", &c.randomize_file_prefixes);
  p.Int("delta.randomPrefixLength", 1, &c.random_prefix_length);
  switch (int i = p.Choice("delta.parquet.compression.codec",
                           {"uncompressed", "none", "snappy", "gzip", "lz4", "lz4_raw", "zstd"})) {
    case -1:
      break;
    default: {
      static const char* kCodecs[] = {"uncompressed", "none", "snappy", "gzip",
                                      "lz4",          "lz4_raw", "zstd"};
      c.parquet_compression_codec = kCodecs[i];
    }
  }
  p.Int("delta.targetFileSize", 1, &c.target_file_size);
  return c;
}

arrow::Status TableConfig::CheckValid(std::string_view key, std::string_view context) const {
  auto it = invalid.find(std::string(key));
  if (it == invalid.end()) return arrow::Status::OK();
  return DeltaError(DeltaErrorCode::kInvalidArgument,
                    fmt::format("{}: table property {}='{}': {}", context, it->first,
                                it->second.first, it->second.second));
}

arrow::Status TableConfig::CheckAllValid(std::string_view context) const {
  if (invalid.empty()) return arrow::Status::OK();
  return CheckValid(invalid.begin()->first, context);
}

}  // namespace deltacpp
