#include "protocol/action_json_writer.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "log/commit_parser.h"
#include "log/file_action_schema.h"

namespace deltacpp::internal {
namespace {

ParsedActions Parse(const std::vector<std::string>& lines) {
  auto parsed = ParseActionFile(JoinActionLines(lines), "test.json");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? std::move(*parsed) : ParsedActions{};
}

rapidjson::Document Json(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  EXPECT_FALSE(d.HasParseError()) << line;
  return d;
}

std::map<std::string, std::optional<std::string>> MapAt(const arrow::Array& column, int64_t row) {
  const auto& map = static_cast<const arrow::MapArray&>(column);
  std::map<std::string, std::optional<std::string>> out;
  if (!map.IsValid(row)) return out;
  const auto& keys = static_cast<const arrow::StringArray&>(*map.keys());
  const auto& items = static_cast<const arrow::StringArray&>(*map.items());
  for (int64_t j = map.value_offset(row); j < map.value_offset(row + 1); ++j) {
    std::optional<std::string> v;
    if (items.IsValid(j)) v = std::string(items.GetView(j));
    out.emplace(std::string(keys.GetView(j)), v);
  }
  return out;
}

DeletionVectorDescriptor SampleDv() {
  DeletionVectorDescriptor dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = "ab^-aqEH.-t@S}K{vb[*k^";
  dv.offset = 4;
  dv.size_in_bytes = 40;
  dv.cardinality = 6;
  return dv;
}

TEST(ActionJsonWriter, EveryLineIsOneCompactJsonObject) {
  AddFile add;
  add.path = "part=a\nb/file \"quoted\" \xC3\xA9.parquet";
  add.stats = "{\"numRecords\":1,\n\"minValues\":{}}";
  std::string line = AddFileToJson(add).ValueOrDie();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find(": "), std::string::npos);
  auto parsed = Parse({line});
  ASSERT_TRUE(parsed.file_actions);
  const auto& paths = static_cast<const arrow::StringArray&>(*parsed.file_actions->column(kPathCol));
  EXPECT_EQ(paths.GetView(0), add.path);
  const auto& stats = static_cast<const arrow::StringArray&>(*parsed.file_actions->column(kStatsCol));
  EXPECT_EQ(stats.GetView(0), *add.stats);
}

TEST(ActionJsonWriter, CommitInfoRoundTripsWithItsFields) {
  CommitInfoFields info;
  info.in_commit_timestamp = 1700000000123;
  info.timestamp = 1700000000100;
  info.operation = "WRITE";
  info.operation_parameters = {{"mode", "Append"}, {"partitionBy", "[\"p\"]"}};
  info.read_version = 4;
  info.isolation_level = "Serializable";
  info.is_blind_append = true;
  info.operation_metrics = {{"numFiles", "2"}};
  info.user_metadata = "note";
  info.engine_info = "deltacpp/test";
  info.txn_id = "f8d1c3a0-0000-4000-8000-000000000000";
  std::string line = CommitInfoToJson(info).ValueOrDie();
  // The in-commit timestamp comes first.
  EXPECT_EQ(line.rfind(R"({"commitInfo":{"inCommitTimestamp":1700000000123,)", 0), 0u) << line;

  auto parsed = Parse({line});
  ASSERT_TRUE(parsed.commit_info);
  EXPECT_EQ(parsed.commit_info->in_commit_timestamp, 1700000000123);
  EXPECT_EQ(parsed.commit_info->timestamp, 1700000000100);
  EXPECT_EQ(parsed.commit_info->operation, "WRITE");
  auto d = Json(parsed.commit_info->raw_json);
  EXPECT_STREQ(d["operationParameters"]["mode"].GetString(), "Append");
  EXPECT_STREQ(d["operationParameters"]["partitionBy"].GetString(), "[\"p\"]");
  EXPECT_EQ(d["readVersion"].GetInt64(), 4);
  EXPECT_STREQ(d["isolationLevel"].GetString(), "Serializable");
  EXPECT_TRUE(d["isBlindAppend"].GetBool());
  EXPECT_STREQ(d["operationMetrics"]["numFiles"].GetString(), "2");
  EXPECT_STREQ(d["userMetadata"].GetString(), "note");
  EXPECT_STREQ(d["engineInfo"].GetString(), "deltacpp/test");
  EXPECT_STREQ(d["txnId"].GetString(), "f8d1c3a0-0000-4000-8000-000000000000");
}

TEST(ActionJsonWriter, CommitInfoLeavesOutUnsetFields) {
  CommitInfoFields info;
  info.timestamp = 5;
  auto d = Json(CommitInfoToJson(info).ValueOrDie());
  const auto& ci = d["commitInfo"];
  EXPECT_STREQ(ci["operation"].GetString(), "UNKNOWN");
  EXPECT_TRUE(ci["operationParameters"].IsObject());
  for (const char* key : {"inCommitTimestamp", "readVersion", "isolationLevel", "isBlindAppend",
                          "operationMetrics", "userMetadata", "engineInfo", "txnId", "tags"}) {
    EXPECT_FALSE(ci.HasMember(key)) << key;
  }
}

TEST(ActionJsonWriter, ProtocolListsFeaturesOnlyForTableFeatureVersions) {
  Protocol legacy;
  legacy.min_reader_version = 1;
  legacy.min_writer_version = 2;
  legacy.writer_features = std::vector<std::string>{"ignored"};
  EXPECT_EQ(ProtocolToJson(legacy).ValueOrDie(),
            R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})");

  Protocol mixed;
  mixed.min_reader_version = 2;
  mixed.min_writer_version = 7;
  mixed.writer_features = std::vector<std::string>{"columnMapping", "appendOnly"};
  EXPECT_EQ(ProtocolToJson(mixed).ValueOrDie(),
            R"({"protocol":{"minReaderVersion":2,"minWriterVersion":7,)"
            R"("writerFeatures":["columnMapping","appendOnly"]}})");

  Protocol full;
  full.min_reader_version = 3;
  full.min_writer_version = 7;
  full.reader_features = std::vector<std::string>{"deletionVectors"};
  full.writer_features = std::vector<std::string>{"deletionVectors", "domainMetadata"};
  auto parsed = Parse({ProtocolToJson(full).ValueOrDie()});
  ASSERT_TRUE(parsed.protocol);
  EXPECT_EQ(parsed.protocol->min_reader_version, 3);
  EXPECT_EQ(parsed.protocol->min_writer_version, 7);
  EXPECT_EQ(parsed.protocol->reader_features, full.reader_features);
  EXPECT_EQ(parsed.protocol->writer_features, full.writer_features);

  Protocol empty_lists;
  empty_lists.min_reader_version = 3;
  empty_lists.min_writer_version = 7;
  EXPECT_EQ(ProtocolToJson(empty_lists).ValueOrDie(),
            R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],)"
            R"("writerFeatures":[]}})");
}

TEST(ActionJsonWriter, MetadataRoundTrips) {
  Metadata m;
  m.id = "id-1";
  m.name = "events";
  m.description = "all \"events\"";
  m.schema_string = R"({"type":"struct","fields":[{"name":"p","type":"string","nullable":true,"metadata":{}}]})";
  m.partition_columns = {"p"};
  m.configuration = {{"delta.appendOnly", "true"}, {"delta.checkpointInterval", "5"}};
  m.created_time = 1700000000000;
  std::string line = MetadataToJson(m).ValueOrDie();
  EXPECT_NE(line.find(R"("format":{"provider":"parquet","options":{}})"), std::string::npos);
  auto parsed = Parse({line});
  ASSERT_TRUE(parsed.metadata);
  EXPECT_EQ(parsed.metadata->id, m.id);
  EXPECT_EQ(parsed.metadata->name, m.name);
  EXPECT_EQ(parsed.metadata->description, m.description);
  EXPECT_EQ(parsed.metadata->format_provider, "parquet");
  EXPECT_TRUE(parsed.metadata->format_options.empty());
  EXPECT_EQ(parsed.metadata->schema_string, m.schema_string);
  EXPECT_EQ(parsed.metadata->partition_columns, m.partition_columns);
  EXPECT_EQ(parsed.metadata->configuration, m.configuration);
  EXPECT_EQ(parsed.metadata->created_time, m.created_time);

  Metadata bare;
  bare.id = "id-2";
  bare.schema_string = R"({"type":"struct","fields":[]})";
  auto d = Json(MetadataToJson(bare).ValueOrDie());
  const auto& md = d["metaData"];
  EXPECT_FALSE(md.HasMember("name"));
  EXPECT_FALSE(md.HasMember("description"));
  EXPECT_FALSE(md.HasMember("createdTime"));
  EXPECT_TRUE(md["partitionColumns"].IsArray());
  EXPECT_TRUE(md["configuration"].IsObject());
}

TEST(ActionJsonWriter, AddRoundTripsEveryField) {
  AddFile add;
  add.path = "p=a/part-0.parquet";
  add.partition_values = {{"p", "a"}, {"q", std::nullopt}};
  add.size = 1234;
  add.modification_time = 1700000000000;
  add.data_change = false;
  add.stats = R"({"numRecords":3})";
  add.tags = {{"INSERTION_TIME", "1"}};
  add.deletion_vector = SampleDv();
  add.base_row_id = 10;
  add.default_row_commit_version = 2;
  add.clustering_provider = "liquid";
  std::string line = AddFileToJson(add).ValueOrDie();
  EXPECT_NE(line.find(R"("partitionValues":{"p":"a","q":null})"), std::string::npos) << line;

  auto parsed = Parse({line});
  ASSERT_EQ(parsed.num_adds, 1);
  const auto& b = *parsed.file_actions;
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*b.column(kPathCol)).GetView(0), add.path);
  EXPECT_EQ(MapAt(*b.column(kPartitionValuesCol), 0), add.partition_values);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kSizeCol)).Value(0), 1234);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kModificationTimeCol)).Value(0),
            1700000000000);
  EXPECT_FALSE(static_cast<const arrow::BooleanArray&>(*b.column(kDataChangeCol)).Value(0));
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*b.column(kStatsCol)).GetView(0), *add.stats);
  auto tags = MapAt(*b.column(kTagsCol), 0);
  EXPECT_EQ(tags.at("INSERTION_TIME"), "1");
  const auto& dv = static_cast<const arrow::StructArray&>(*b.column(kDeletionVectorCol));
  ASSERT_TRUE(dv.IsValid(0));
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*dv.field(kDvStorageType)).GetView(0), "u");
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*dv.field(kDvPathOrInlineDv)).GetView(0),
            SampleDv().path_or_inline_dv);
  EXPECT_EQ(static_cast<const arrow::Int32Array&>(*dv.field(kDvOffset)).Value(0), 4);
  EXPECT_EQ(static_cast<const arrow::Int32Array&>(*dv.field(kDvSizeInBytes)).Value(0), 40);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*dv.field(kDvCardinality)).Value(0), 6);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kBaseRowIdCol)).Value(0), 10);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kDefaultRowCommitVersionCol)).Value(0),
            2);
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*b.column(kClusteringProviderCol)).GetView(0),
            "liquid");
}

TEST(ActionJsonWriter, AddOmitsAbsentFields) {
  AddFile add;
  add.path = "f.parquet";
  add.size = 1;
  add.modification_time = 2;
  EXPECT_EQ(AddFileToJson(add).ValueOrDie(),
            R"({"add":{"path":"f.parquet","partitionValues":{},"size":1,"modificationTime":2,)"
            R"("dataChange":true}})");
}

TEST(ActionJsonWriter, RemoveRoundTripsEveryField) {
  RemoveFile r;
  r.path = "p=a/part-0.parquet";
  r.deletion_timestamp = 1700000001000;
  r.data_change = true;
  r.extended_file_metadata = true;
  r.partition_values = {{"p", "a"}};
  r.size = 99;
  r.stats = R"({"numRecords":3})";
  r.tags = {{"k", "v"}};
  r.deletion_vector = SampleDv();
  r.base_row_id = 7;
  r.default_row_commit_version = 1;
  std::string line = RemoveFileToJson(r).ValueOrDie();
  auto d = Json(line);
  EXPECT_TRUE(d["remove"]["extendedFileMetadata"].GetBool());
  EXPECT_EQ(d["remove"]["deletionTimestamp"].GetInt64(), 1700000001000);

  auto parsed = Parse({line});
  ASSERT_EQ(parsed.num_removes, 1);
  const auto& b = *parsed.file_actions;
  EXPECT_FALSE(static_cast<const arrow::BooleanArray&>(*b.column(kNumFileActionColumns)).Value(0));
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*b.column(kPathCol)).GetView(0), r.path);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kNumFileActionColumns + 1)).Value(0),
            1700000001000);
  EXPECT_EQ(MapAt(*b.column(kPartitionValuesCol), 0), r.partition_values);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kSizeCol)).Value(0), 99);
  EXPECT_TRUE(static_cast<const arrow::BooleanArray&>(*b.column(kDataChangeCol)).Value(0));
  const auto& dv = static_cast<const arrow::StructArray&>(*b.column(kDeletionVectorCol));
  EXPECT_TRUE(dv.IsValid(0));
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kBaseRowIdCol)).Value(0), 7);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*b.column(kDefaultRowCommitVersionCol)).Value(0),
            1);
}

TEST(ActionJsonWriter, MinimalRemoveHasNoOptionalFields) {
  RemoveFile r;
  r.path = "f.parquet";
  r.extended_file_metadata = false;
  r.data_change = false;
  EXPECT_EQ(RemoveFileToJson(r).ValueOrDie(),
            R"({"remove":{"path":"f.parquet","dataChange":false,"extendedFileMetadata":false}})");
}

TEST(ActionJsonWriter, TxnDomainAndCdcRoundTrip) {
  Txn t{"stream-1", 42, 1700000000000};
  DomainMetadata dm{"app.settings", R"({"a":1})", false};
  DomainMetadata tomb{"app.old", "{}", true};
  CdcFile cdc;
  cdc.path = "_change_data/cdc-0.parquet";
  cdc.partition_values = {{"p", "a"}};
  cdc.size = 50;
  cdc.tags = {{"k", "v"}};
  auto parsed =
      Parse({TxnToJson(t).ValueOrDie(), DomainMetadataToJson(dm).ValueOrDie(),
             DomainMetadataToJson(tomb).ValueOrDie(), CdcFileToJson(cdc).ValueOrDie()});
  ASSERT_EQ(parsed.txns.size(), 1u);
  EXPECT_EQ(parsed.txns[0].app_id, "stream-1");
  EXPECT_EQ(parsed.txns[0].version, 42);
  EXPECT_EQ(parsed.txns[0].last_updated, 1700000000000);
  ASSERT_EQ(parsed.domains.size(), 2u);
  EXPECT_EQ(parsed.domains[0].domain, "app.settings");
  EXPECT_EQ(parsed.domains[0].configuration, R"({"a":1})");
  EXPECT_FALSE(parsed.domains[0].removed);
  EXPECT_TRUE(parsed.domains[1].removed);
  ASSERT_EQ(parsed.cdc_files.size(), 1u);
  EXPECT_EQ(parsed.cdc_files[0].path, cdc.path);
  EXPECT_EQ(parsed.cdc_files[0].partition_values, cdc.partition_values);
  EXPECT_EQ(parsed.cdc_files[0].size, 50);
  EXPECT_EQ(parsed.cdc_files[0].tags, cdc.tags);
  EXPECT_FALSE(Json(CdcFileToJson(cdc).ValueOrDie())["cdc"]["dataChange"].GetBool());

  Txn no_time{"app", 1, std::nullopt};
  EXPECT_EQ(TxnToJson(no_time).ValueOrDie(), R"({"txn":{"appId":"app","version":1}})");
}

TEST(ActionJsonWriter, JoinEndsEveryLineWithNewline) {
  EXPECT_EQ(JoinActionLines({"{}", "{\"a\":1}"}), "{}\n{\"a\":1}\n");
  EXPECT_EQ(JoinActionLines({}), "");
}

}  // namespace
}  // namespace deltacpp::internal
