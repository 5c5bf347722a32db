// TableConfig: delta-spark's defaults, typed parsing of each kind of property, and malformed
// values recorded (never silently replaced by a default).
#include <gtest/gtest.h>

#include "deltacpp/error.h"
#include "deltacpp/table_config.h"

namespace deltacpp {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

TEST(TableConfig, DefaultsAreDeltaSparks) {
  auto c = TableConfig::Parse({});
  EXPECT_FALSE(c.append_only);
  EXPECT_FALSE(c.change_data_feed);
  EXPECT_FALSE(c.deletion_vectors);
  EXPECT_EQ(c.column_mapping_mode, ColumnMappingMode::kNone);
  EXPECT_FALSE(c.in_commit_timestamps);
  EXPECT_FALSE(c.row_tracking);
  EXPECT_EQ(c.checkpoint_interval, 10);
  EXPECT_EQ(c.checkpoint_policy, CheckpointPolicy::kClassic);
  EXPECT_TRUE(c.checkpoint_write_stats_as_json);
  EXPECT_TRUE(c.checkpoint_write_stats_as_struct);
  EXPECT_EQ(c.log_retention_ms, 30 * kDayMs);
  EXPECT_EQ(c.deleted_file_retention_ms, 7 * kDayMs);
  EXPECT_EQ(c.checkpoint_retention_ms, 2 * kDayMs);
  EXPECT_FALSE(c.set_transaction_retention_ms.has_value());
  EXPECT_TRUE(c.enable_expired_log_cleanup);
  EXPECT_EQ(c.data_skipping_num_indexed_cols, 32);
  EXPECT_EQ(c.data_skipping_string_prefix_length, 32);
  EXPECT_FALSE(c.data_skipping_stats_columns.has_value());
  EXPECT_FALSE(c.serializable_isolation);
  EXPECT_FALSE(c.randomize_file_prefixes);
  EXPECT_EQ(c.random_prefix_length, 2);
  EXPECT_FALSE(c.target_file_size.has_value());
  EXPECT_TRUE(c.invalid.empty());
  EXPECT_TRUE(c.CheckAllValid("table t").ok());
}

TEST(TableConfig, ParsesEachKindOfProperty) {
  auto c = TableConfig::Parse({
      {"delta.appendOnly", "TRUE"},
      {"delta.enableDeletionVectors", "true"},
      {"delta.columnMapping.mode", "Name"},
      {"delta.columnMapping.maxColumnId", "7"},
      {"delta.enableInCommitTimestamps", "true"},
      {"delta.inCommitTimestampEnablementVersion", "12"},
      {"delta.inCommitTimestampEnablementTimestamp", "1700000000000"},
      {"delta.checkpointInterval", "25"},
      {"delta.checkpointPolicy", "v2"},
      {"delta.checkpoint.writeStatsAsJson", "false"},
      {"delta.logRetentionDuration", "interval 2 days"},
      {"delta.deletedFileRetentionDuration", "interval 1 hour 30 minutes"},
      {"delta.setTransactionRetentionDuration", "interval 3 weeks"},
      {"delta.enableExpiredLogCleanup", "false"},
      {"delta.dataSkippingNumIndexedCols", "-1"},
      {"delta.dataSkippingStatsColumns", "a,b.c"},
      {"delta.isolationLevel", "serializable"},
      {"delta.targetFileSize", "1048576"},
      {"delta.parquet.compression.codec", "ZSTD"},
      {"some.other.key", "kept out of the typed fields"},
  });
  EXPECT_TRUE(c.invalid.empty());
  EXPECT_TRUE(c.append_only);
  EXPECT_TRUE(c.deletion_vectors);
  EXPECT_EQ(c.column_mapping_mode, ColumnMappingMode::kName);
  EXPECT_EQ(c.column_mapping_max_column_id, std::optional<int64_t>(7));
  EXPECT_TRUE(c.in_commit_timestamps);
  EXPECT_EQ(c.in_commit_timestamp_enablement_version, std::optional<int64_t>(12));
  EXPECT_EQ(c.in_commit_timestamp_enablement_timestamp, std::optional<int64_t>(1700000000000));
  EXPECT_EQ(c.checkpoint_interval, 25);
  EXPECT_EQ(c.checkpoint_policy, CheckpointPolicy::kV2);
  EXPECT_FALSE(c.checkpoint_write_stats_as_json);
  EXPECT_TRUE(c.checkpoint_write_stats_as_struct);
  EXPECT_EQ(c.log_retention_ms, 2 * kDayMs);
  EXPECT_EQ(c.deleted_file_retention_ms, 90LL * 60 * 1000);
  EXPECT_EQ(c.set_transaction_retention_ms, std::optional<int64_t>(21 * kDayMs));
  EXPECT_FALSE(c.enable_expired_log_cleanup);
  EXPECT_EQ(c.data_skipping_num_indexed_cols, -1);
  EXPECT_EQ(c.data_skipping_stats_columns, std::optional<std::string>("a,b.c"));
  EXPECT_TRUE(c.serializable_isolation);
  EXPECT_EQ(c.target_file_size, std::optional<int64_t>(1048576));
  EXPECT_EQ(c.parquet_compression_codec, std::optional<std::string>("zstd"));
}

TEST(TableConfig, LegacyChangeDataCaptureKeyEnablesTheFeed) {
  EXPECT_TRUE(TableConfig::Parse({{"delta.enableChangeDataCapture", "true"}}).change_data_feed);
  EXPECT_TRUE(TableConfig::Parse({{"delta.enableChangeDataFeed", "true"}}).change_data_feed);
  EXPECT_FALSE(TableConfig::Parse({{"delta.enableChangeDataFeed", "false"}}).change_data_feed);
}

TEST(TableConfig, MalformedValuesAreRecordedWithTheirReason) {
  auto c = TableConfig::Parse({
      {"delta.appendOnly", "yes"},
      {"delta.checkpointInterval", "0"},
      {"delta.targetFileSize", "12MB"},
      {"delta.logRetentionDuration", "interval 1 month"},
      {"delta.columnMapping.mode", "position"},
  });
  ASSERT_EQ(c.invalid.size(), 5u);
  // The effective values stay the defaults, but nothing may use them silently.
  EXPECT_FALSE(c.append_only);
  EXPECT_EQ(c.checkpoint_interval, 10);
  EXPECT_EQ(c.column_mapping_mode, ColumnMappingMode::kNone);
  EXPECT_EQ(c.invalid.at("delta.checkpointInterval").second, "the value must be at least 1");
  EXPECT_EQ(c.invalid.at("delta.targetFileSize").second, "the value is not an integer");
  EXPECT_NE(c.invalid.at("delta.logRetentionDuration").second.find("months and years"),
            std::string::npos);
  EXPECT_NE(c.invalid.at("delta.columnMapping.mode").second.find("none, name, id"),
            std::string::npos);

  auto st = c.CheckValid("delta.appendOnly", "table /t version 3");
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument));
  EXPECT_EQ(st.message(),
            "table /t version 3: table property delta.appendOnly='yes': the value must be true or "
            "false");
  EXPECT_TRUE(c.CheckValid("delta.enableDeletionVectors", "table /t").ok());
  EXPECT_FALSE(c.CheckAllValid("table /t").ok());
}

TEST(TableConfig, KeysAreMatchedExactly) {
  // The log stores canonical names; a differently spelled key is some other property.
  auto c = TableConfig::Parse({{"delta.appendonly", "true"}});
  EXPECT_FALSE(c.append_only);
  EXPECT_TRUE(c.invalid.empty());
}

}  // namespace
}  // namespace deltacpp
