// What the table's properties make a write do (file sizes, statistics, folders, codec,
// checkpoint interval), which user properties a new table may have, the commitInfo a WRITE
// records, and which concurrent appends a dynamic partition overwrite conflicts with.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/version.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Code;
using testing::CommitName;
using testing::Longs;
using testing::Rows;
using testing::Strings;
using testing::TempDir;

namespace fs = std::filesystem;

std::shared_ptr<arrow::Schema> IdName() {
  return arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8())});
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The actions of commit `version`, one JSON document per line.
std::vector<std::shared_ptr<rapidjson::Document>> CommitActions(const std::string& root,
                                                                int64_t version) {
  std::vector<std::shared_ptr<rapidjson::Document>> out;
  std::istringstream lines(ReadText(fs::path(root) / "_delta_log" / CommitName(version)));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    auto doc = std::make_shared<rapidjson::Document>();
    doc->Parse(line.c_str());
    EXPECT_FALSE(doc->HasParseError()) << line;
    out.push_back(doc);
  }
  return out;
}

const rapidjson::Value* FindAction(const std::vector<std::shared_ptr<rapidjson::Document>>& actions,
                                   const char* kind) {
  for (const auto& a : actions) {
    if (a->HasMember(kind)) return &(*a)[kind];
  }
  return nullptr;
}

std::vector<const rapidjson::Value*> AllActions(
    const std::vector<std::shared_ptr<rapidjson::Document>>& actions, const char* kind) {
  std::vector<const rapidjson::Value*> out;
  for (const auto& a : actions) {
    if (a->HasMember(kind)) out.push_back(&(*a)[kind]);
  }
  return out;
}

// A batch of `n` rows: ids from `first`, names `name-<id>` padded to make rows wide.
std::shared_ptr<arrow::RecordBatch> WideRows(int64_t first, int64_t n) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> names;
  for (int64_t i = first; i < first + n; ++i) {
    ids.push_back(i);
    names.push_back("name-" + std::to_string(i) + std::string(200, static_cast<char>('a' + i % 26)));
  }
  return testing::Batch(IdName(), {Longs(ids), Strings(names)});
}

// --- Properties of new tables ------------------------------------------------------------------

TEST(TableProperties, CreateRefusesValuesDeltaSparkRefuses) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"delta.isolationLevel", "WriteSerializable"},  // only Serializable may be stored
      {"delta.appendOnly", "yes"},
      {"delta.checkpointInterval", "0"},
      {"delta.targetFileSize", "big"},
      {"delta.logRetentionDuration", "forever"},
      {"delta.noSuchProperty", "1"},
      {"delta.columnMapping.maxColumnId", "5"},  // maintained by the table itself
  };
  for (const auto& [key, value] : bad) {
    TempDir dir;
    CreateTableOptions create;
    create.schema = IdName();
    create.properties = {{key, value}};
    auto r = CreateTable(dir.str(), create);
    ASSERT_FALSE(r.ok()) << key << "=" << value;
    EXPECT_EQ(Code(r.status()), "InvalidArgument") << r.status().ToString();
    EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().ToString();
    EXPECT_FALSE(fs::exists(dir.path() / "_delta_log" / CommitName(0))) << key;

    // A write that creates the table checks them the same way.
    WriteOptions write;
    write.properties = {{key, value}};
    auto w = WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), write);
    ASSERT_FALSE(w.ok()) << key << "=" << value;
    EXPECT_EQ(Code(w.status()), "InvalidArgument") << w.status().ToString();
    EXPECT_TRUE(testing::DataFiles(dir.str()).empty());
  }
}

TEST(TableProperties, CreateStoresCanonicalSpellings) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"DELTA.APPENDONLY", "TRUE"},
                       {"delta.isolationLevel", "serializable"},
                       {"owner", "Team A"}};
  ASSERT_TRUE(CreateTable(dir.str(), create).ok());
  auto props = testing::Latest(dir.str())->properties();
  EXPECT_EQ(props.at("delta.appendOnly"), "true");
  EXPECT_EQ(props.at("delta.isolationLevel"), "Serializable");
  EXPECT_EQ(props.at("owner"), "Team A");
  EXPECT_EQ(props.count("DELTA.APPENDONLY"), 0u);
}

// --- Properties that steer the data writer ------------------------------------------------------

TEST(WriterProperties, TargetFileSizeSplitsFiles) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"delta.targetFileSize", "4096"}};
  ASSERT_TRUE(CreateTable(dir.str(), create).ok());
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int b = 0; b < 20; ++b) batches.push_back(WideRows(b * 50, 50));
  auto r = WriteTable(dir.str(), testing::Reader(IdName(), batches), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->num_files, 3);
  EXPECT_EQ(testing::ReadRows(dir.str()).size(), 1000u);
  // A file is closed once it reaches the target: every one but the last is at least that big,
  // and none is far above it (one row group of at most the target's size goes past it).
  std::vector<int64_t> sizes;
  const auto actions = CommitActions(dir.str(), 1);
  for (const auto* add : AllActions(actions, "add")) {
    sizes.push_back((*add)["size"].GetInt64());
  }
  ASSERT_EQ(static_cast<int64_t>(sizes.size()), r->num_files);
  int below = 0;
  for (int64_t size : sizes) {
    if (size < 4096) ++below;
    EXPECT_LT(size, 4 * 4096) << "a file far above the 4 KiB target";
  }
  EXPECT_LE(below, 1) << "only the last file may stay below the target";

  // Without the property the same rows make one file.
  TempDir plain;
  auto p = WriteTable(plain.str(), testing::Reader(IdName(), batches), {});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->num_files, 1);
}

TEST(WriterProperties, StatsColumnsAndStringPrefixLength) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"delta.dataSkippingStatsColumns", "name"},
                       {"delta.dataSkippingStringPrefixLength", "4"}};
  ASSERT_TRUE(CreateTable(dir.str(), create).ok());
  ASSERT_TRUE(
      WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2}), Strings({"abcdefgh", "abcdzzzz"})}), {})
          .ok());
  const auto actions = CommitActions(dir.str(), 1);
  auto add = FindAction(actions, "add");
  ASSERT_NE(add, nullptr);
  rapidjson::Document stats;
  stats.Parse((*add)["stats"].GetString());
  ASSERT_FALSE(stats.HasParseError());
  EXPECT_EQ(stats["numRecords"].GetInt64(), 2);
  // Only `name` is indexed, and its bounds keep 4 code points.
  EXPECT_FALSE(stats["minValues"].HasMember("id"));
  EXPECT_FALSE(stats["nullCount"].HasMember("id"));
  EXPECT_STREQ(stats["minValues"]["name"].GetString(), "abcd");
  const std::string max = stats["maxValues"]["name"].GetString();
  EXPECT_EQ(max.substr(0, 4), "abcd");
  EXPECT_GE(max, std::string("abcdzzzz"));
  EXPECT_LE(max.size(), 12u);
}

TEST(WriterProperties, NumIndexedColsLimitsTheIndexedColumns) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"delta.dataSkippingNumIndexedCols", "1"}};
  ASSERT_TRUE(CreateTable(dir.str(), create).ok());
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({4, 2}), Strings({"b", "a"})}), {}).ok());
  const auto actions = CommitActions(dir.str(), 1);
  auto add = FindAction(actions, "add");
  ASSERT_NE(add, nullptr);
  rapidjson::Document stats;
  stats.Parse((*add)["stats"].GetString());
  ASSERT_FALSE(stats.HasParseError());
  EXPECT_EQ(stats["minValues"]["id"].GetInt64(), 2);
  EXPECT_EQ(stats["maxValues"]["id"].GetInt64(), 4);
  EXPECT_EQ(stats["nullCount"]["id"].GetInt64(), 0);
  EXPECT_FALSE(stats["minValues"].HasMember("name"));
  EXPECT_FALSE(stats["nullCount"].HasMember("name"));
}

TEST(TableProperties, PropertiesNeedingUnwrittenFeaturesAreUnsupported) {
  for (const char* key : {"delta.enableIcebergCompatV2", "delta.universalFormat.enabledFormats"}) {
    TempDir dir;
    CreateTableOptions create;
    create.schema = IdName();
    create.properties = {{key, "true"}};
    auto r = CreateTable(dir.str(), create);
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_EQ(Code(r.status()), "UnsupportedFeature") << r.status().ToString();
    EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().ToString();
    EXPECT_FALSE(fs::exists(dir.path() / "_delta_log" / CommitName(0)));
  }
}

TEST(WriterProperties, RandomizedFilePrefixes) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = IdName();
  create.partition_columns = {"name"};
  create.properties = {{"delta.randomizeFilePrefixes", "true"}, {"delta.randomPrefixLength", "3"}};
  ASSERT_TRUE(CreateTable(dir.str(), create).ok());
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), {}).ok());
  const std::regex layout(R"([0-9A-Za-z]{3}/part-[0-9]{5}-.*\.snappy\.parquet)");
  auto files = testing::DataFiles(dir.str());
  ASSERT_EQ(files.size(), 2u);
  for (const auto& f : files) EXPECT_TRUE(std::regex_match(f, layout)) << f;
  // Partition values still come from the log, not from folder names.
  EXPECT_EQ(testing::ReadRows(dir.str()), (std::multiset<std::string>{"1|a", "2|b"}));
}

TEST(WriterProperties, TableCodecIsTheDefaultAndTheWriteCanOverrideIt) {
  TempDir dir;
  CreateTableOptions create;
  create.schema = IdName();
  create.properties = {{"delta.parquet.compression.codec", "zstd"}};
  ASSERT_TRUE(CreateTable(dir.str(), create).ok());
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  WriteOptions gzip;
  gzip.compression = "gzip";
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({2}), Strings({"b"})}), gzip).ok());
  std::multiset<std::string> codecs;
  for (const auto& f : testing::DataFiles(dir.str())) {
    codecs.insert(fs::path(f).stem().extension().string());
  }
  EXPECT_EQ(codecs, (std::multiset<std::string>{".zstd", ".gz"}));
  EXPECT_EQ(testing::ReadRows(dir.str()), (std::multiset<std::string>{"1|a", "2|b"}));

  TempDir plain;
  ASSERT_TRUE(WriteTable(plain.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  auto files = testing::DataFiles(plain.str());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(fs::path(*files.begin()).stem().extension().string(), ".snappy");
}

TEST(WriterProperties, MalformedValueInAForeignTableIsAnErrorNotADefault) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  // Another writer stored a value deltacpp's own validation would refuse.
  auto actions = CommitActions(dir.str(), 0);
  const rapidjson::Value* metadata = FindAction(actions, "metaData");
  ASSERT_NE(metadata, nullptr);
  rapidjson::Document doc;
  doc.SetObject();
  rapidjson::Value copy(*metadata, doc.GetAllocator());
  copy["configuration"].AddMember("delta.targetFileSize", "lots", doc.GetAllocator());
  doc.AddMember("metaData", copy, doc.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  std::ofstream(fs::path(dir.str()) / "_delta_log" / CommitName(1)) << buffer.GetString() << "\n";

  const auto before = testing::LogListing(dir.str());
  const auto files_before = testing::DataFiles(dir.str());
  auto r = WriteTable(dir.str(), Rows(IdName(), {Longs({2}), Strings({"b"})}), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Code(r.status()), "InvalidArgument");
  EXPECT_NE(r.status().message().find("delta.targetFileSize"), std::string::npos);
  EXPECT_NE(r.status().message().find(dir.str()), std::string::npos);
  EXPECT_EQ(testing::LogListing(dir.str()), before);
  EXPECT_EQ(testing::DataFiles(dir.str()), files_before);
}

// --- Checkpoint interval ----------------------------------------------------------------------

TEST(WriterProperties, DefaultCheckpointIntervalIsTen) {
  TempDir dir;
  for (int64_t v = 0; v <= 10; ++v) {
    ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({v}), Strings({"x"})}), {}).ok());
    std::set<std::string> checkpoints;
    for (const auto& name : testing::LogListing(dir.str())) {
      if (name.find(".checkpoint") != std::string::npos) checkpoints.insert(name);
    }
    if (v < 10) {
      EXPECT_TRUE(checkpoints.empty()) << "after version " << v;
    } else {
      EXPECT_EQ(checkpoints,
                (std::set<std::string>{"00000000000000000010.checkpoint.parquet"}));
      EXPECT_TRUE(fs::exists(fs::path(dir.str()) / "_delta_log" / "_last_checkpoint"));
    }
  }
  EXPECT_EQ(testing::ReadRows(dir.str()).size(), 11u);
}

// --- commitInfo of WRITE ----------------------------------------------------------------------

TEST(WriteCommitInfo, RecordsOperationParametersAndMetrics) {
  TempDir dir;
  WriteOptions create;
  create.partition_by = {"name"};
  ASSERT_TRUE(
      WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2, 3}), Strings({"a", "b", "b"})}), create)
          .ok());
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  overwrite.replace_where = "name = 'b'";
  ASSERT_TRUE(
      WriteTable(dir.str(), Rows(IdName(), {Longs({7, 8}), Strings({"b", "b"})}), overwrite).ok());

  for (int64_t version : {0, 1}) {
    auto actions = CommitActions(dir.str(), version);
    const rapidjson::Value* info = FindAction(actions, "commitInfo");
    ASSERT_NE(info, nullptr) << version;
    EXPECT_STREQ((*info)["operation"].GetString(), "WRITE");
    EXPECT_TRUE((*info)["timestamp"].IsInt64());
    EXPECT_EQ(std::string((*info)["engineInfo"].GetString()),
              std::string("deltacpp/") + kVersion);
    EXPECT_TRUE((*info)["txnId"].IsString());
    EXPECT_EQ(std::string((*info)["txnId"].GetString()).size(), 36u);
    EXPECT_STREQ((*info)["isolationLevel"].GetString(), "Serializable");
    const auto& params = (*info)["operationParameters"];
    EXPECT_STREQ(params["partitionBy"].GetString(), "[\"name\"]");
    const auto& metrics = (*info)["operationMetrics"];
    // Metrics agree with the actions of the same commit.
    int64_t bytes = 0;
    const auto adds = AllActions(actions, "add");
    for (const auto* a : adds) bytes += (*a)["size"].GetInt64();
    EXPECT_EQ(std::stoll(metrics["numFiles"].GetString()), static_cast<int64_t>(adds.size()));
    EXPECT_EQ(std::stoll(metrics["numOutputBytes"].GetString()), bytes);
    if (version == 0) {
      EXPECT_STREQ(params["mode"].GetString(), "Append");
      EXPECT_FALSE(info->HasMember("readVersion"));
      EXPECT_TRUE((*info)["isBlindAppend"].GetBool());
      EXPECT_EQ(std::stoll(metrics["numOutputRows"].GetString()), 3);
      EXPECT_EQ(adds.size(), 2u);  // one file per partition
    } else {
      EXPECT_STREQ(params["mode"].GetString(), "Overwrite");
      EXPECT_STREQ(params["predicate"].GetString(), "[\"name = 'b'\"]");
      EXPECT_EQ((*info)["readVersion"].GetInt64(), 0);
      EXPECT_FALSE((*info)["isBlindAppend"].GetBool());
      EXPECT_EQ(std::stoll(metrics["numOutputRows"].GetString()), 2);
      EXPECT_EQ(std::stoll(metrics["numRemovedFiles"].GetString()), 1);
      EXPECT_EQ(AllActions(actions, "remove").size(), 1u);
    }
  }
}

// --- Dynamic partition overwrite against concurrent appends ------------------------------------

// Starts a dynamic partition overwrite of partition `b`; while its input streams, another writer
// appends `concurrent_name`. Returns the overwrite's outcome.
arrow::Result<WriteResult> OverwriteBWhileAppending(const std::string& root,
                                                    const std::string& concurrent_name) {
  auto batch = testing::Batch(IdName(), {Longs({70}), Strings({"b"})});
  auto reader = std::make_shared<testing::ScriptedReader>(IdName(),
                                                          std::vector{batch, batch});
  reader->RunBefore(1, [&] {
    auto r = WriteTable(root, Rows(IdName(), {Longs({99}), Strings({concurrent_name})}), {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  });
  WriteOptions dyn;
  dyn.mode = WriteMode::kOverwrite;
  dyn.dynamic_partition_overwrite = true;
  return WriteTable(root, reader, dyn);
}

TEST(DynamicPartitionOverwrite, AppendToAnotherPartitionDoesNotConflict) {
  TempDir dir;
  WriteOptions create;
  create.partition_by = {"name"};
  ASSERT_TRUE(
      WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), create).ok());
  auto r = OverwriteBWhileAppending(dir.str(), "c");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(testing::ReadRows(dir.str()),
            (std::multiset<std::string>{"1|a", "70|b", "70|b", "99|c"}));
}

TEST(DynamicPartitionOverwrite, AppendToAReplacedPartitionConflicts) {
  TempDir dir;
  WriteOptions create;
  create.partition_by = {"name"};
  ASSERT_TRUE(
      WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), create).ok());
  auto r = OverwriteBWhileAppending(dir.str(), "b");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Code(r.status()), "ConcurrentAppend") << r.status().ToString();
  // The append landed; the overwrite left nothing behind.
  EXPECT_EQ(testing::LatestVersion(dir.str()), 1);
  EXPECT_EQ(testing::ReadRows(dir.str()), (std::multiset<std::string>{"1|a", "2|b", "99|b"}));
  EXPECT_EQ(testing::DataFiles(dir.str()).size(), 3u);
}

}  // namespace
}  // namespace deltacpp
