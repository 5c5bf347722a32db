#include "log/checkpoint_writer.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "expr/file_stats.h"
#include "log/log_segment.h"
#include "log/tombstones.h"
#include "storage/fault_injecting_log_store.h"
#include "log_test_util.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

namespace fs = std::filesystem;
using internal::CheckpointOptions;
using internal::WriteCheckpoint;
using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::Load;
using testing::NowMs;
using testing::TempDir;

constexpr int64_t kDayMs = 86'400'000;

std::string LogPath(const std::string& root, const std::string& name) {
  return root + "/_delta_log/" + name;
}

std::string ClassicCheckpointPath(const std::string& root, int64_t v) {
  return LogPath(root, fmt::format("{:020d}.checkpoint.parquet", v));
}

// Deletes the commits 0..v, so only a checkpoint can reconstruct v.
void DeleteCommitsUpTo(const std::string& root, int64_t v) {
  for (int64_t i = 0; i <= v; ++i) fs::remove(testing::CommitPath(root, i));
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<arrow::Table> ReadParquet(const std::string& path, int* row_groups = nullptr,
                                          std::vector<int64_t>* row_group_rows = nullptr) {
  auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
  auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  if (row_groups) *row_groups = reader->num_row_groups();
  if (row_group_rows) {
    for (int i = 0; i < reader->num_row_groups(); ++i) {
      row_group_rows->push_back(reader->parquet_reader()->metadata()->RowGroup(i)->num_rows());
    }
  }
  return reader->ReadTable().ValueOrDie()->CombineChunks().ValueOrDie();
}

// A cell as text; maps as their entries only (the entry field names a reader reports vary).
std::string ValueText(const arrow::Array& column, int64_t i) {
  if (column.IsNull(i)) return "null";
  if (column.type_id() != arrow::Type::MAP) return column.GetScalar(i).ValueOrDie()->ToString();
  const auto& map = static_cast<const arrow::MapArray&>(column);
  std::string out = "{";
  for (int64_t j = map.value_offset(i); j < map.value_offset(i + 1); ++j) {
    out += ValueText(*map.keys(), j) + ":" + ValueText(*map.items(), j) + ",";
  }
  return out + "}";
}

// Every live file as path -> its columns rendered as text (dataChange left out: checkpoints
// always store false).
std::map<std::string, std::string> FileRows(const Snapshot& s) {
  std::map<std::string, std::string> out;
  const auto& files = *s.files();
  const auto& paths = static_cast<const arrow::StringArray&>(*files.GetColumnByName("path"));
  for (int64_t i = 0; i < files.num_rows(); ++i) {
    std::string row;
    for (int c = 0; c < files.num_columns(); ++c) {
      if (files.schema()->field(c)->name() == "dataChange") continue;
      row += files.schema()->field(c)->name() + "=" + ValueText(*files.column(c), i) + ";";
    }
    out.emplace(std::string(paths.GetView(i)), row);
  }
  return out;
}

std::set<std::string> LivePaths(const Snapshot& s) {
  std::set<std::string> out;
  for (const auto& [path, row] : FileRows(s)) out.insert(path);
  return out;
}

void ExpectSameState(const Snapshot& expected, const Snapshot& actual) {
  EXPECT_EQ(FileRows(expected), FileRows(actual));
  EXPECT_EQ(expected.protocol().min_reader_version, actual.protocol().min_reader_version);
  EXPECT_EQ(expected.protocol().min_writer_version, actual.protocol().min_writer_version);
  EXPECT_EQ(expected.protocol().reader_features, actual.protocol().reader_features);
  EXPECT_EQ(expected.protocol().writer_features, actual.protocol().writer_features);
  const auto& m1 = expected.metadata();
  const auto& m2 = actual.metadata();
  EXPECT_EQ(m1.id, m2.id);
  EXPECT_EQ(m1.name, m2.name);
  EXPECT_EQ(m1.description, m2.description);
  EXPECT_EQ(m1.format_provider, m2.format_provider);
  EXPECT_EQ(m1.format_options, m2.format_options);
  EXPECT_EQ(m1.schema_string, m2.schema_string);
  EXPECT_EQ(m1.partition_columns, m2.partition_columns);
  EXPECT_EQ(m1.configuration, m2.configuration);
  EXPECT_EQ(m1.created_time, m2.created_time);
  ASSERT_EQ(expected.txns().size(), actual.txns().size());
  for (const auto& [app, txn] : expected.txns()) {
    auto it = actual.txns().find(app);
    ASSERT_NE(it, actual.txns().end()) << app;
    EXPECT_EQ(it->second.version, txn.version);
    EXPECT_EQ(it->second.last_updated, txn.last_updated);
  }
  ASSERT_EQ(expected.domain_metadata().size(), actual.domain_metadata().size());
  for (const auto& [name, d] : expected.domain_metadata()) {
    auto it = actual.domain_metadata().find(name);
    ASSERT_NE(it, actual.domain_metadata().end()) << name;
    EXPECT_EQ(it->second.configuration, d.configuration);
    EXPECT_FALSE(it->second.removed);
  }
}

std::shared_ptr<arrow::Schema> DataSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                        arrow::field("p", arrow::utf8())});
}

// Rows for one data file (partition column `p` excluded).
std::shared_ptr<arrow::Table> Rows(int64_t first, int64_t count) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    if (i % 3 == 0) {
      EXPECT_TRUE(names.AppendNull().ok());
    } else {
      EXPECT_TRUE(names.Append("n" + std::to_string(i)).ok());
    }
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  return arrow::Table::Make(schema, {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie()});
}

// A partitioned table with files, removes, txns and domains, at version 6.
void BuildRichTable(FixtureTableWriter& w, int64_t remove_time_ms) {
  ASSERT_TRUE(w.Create(DataSchema(), {"p"}, {{"delta.appendOnly", "false"}}, 1, 7, {},
                       {"domainMetadata", "appendOnly"})
                  .ok());
  ASSERT_TRUE(w.Append({FixtureFile(Rows(0, 10), {{"p", "a"}}),
                        FixtureFile(Rows(10, 5), {{"p", "b"}}).WithTags({{"k", "v"}})})
                  .ok());                                                   // 1
  ASSERT_TRUE(w.Append({FixtureFile(Rows(20, 3), {{"p", std::nullopt}})}).ok());  // 2
  ASSERT_TRUE(w.CommitRaw({R"({"txn":{"appId":"app-1","version":3,"lastUpdated":1000}})",
                           R"({"txn":{"appId":"app-2","version":9}})",
                           R"({"domainMetadata":{"domain":"user.x","configuration":"{\"a\":1}","removed":false}})",
                           R"({"domainMetadata":{"domain":"user.gone","configuration":"{}","removed":false}})"})
                  .ok());  // 3
  ASSERT_TRUE(w.CommitRaw({R"({"domainMetadata":{"domain":"user.gone","configuration":"{}","removed":true}})",
                           R"({"txn":{"appId":"app-1","version":4,"lastUpdated":2000}})"})
                  .ok());  // 4
  auto paths = w.active_paths();
  ASSERT_EQ(paths.size(), 3u);
  ASSERT_TRUE(w.Remove({paths[0]}, {FixtureFile(Rows(30, 4), {{"p", "c"}})}, "DELETE",
                       remove_time_ms)
                  .ok());  // 5
  ASSERT_TRUE(w.Append({FixtureFile(Rows(40, 2), {{"p", "a"}}).WithStats(false)}).ok());  // 6
}

TEST(CheckpointWriter, CheckpointAloneReconstructsTheSnapshot) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  BuildRichTable(w, NowMs());
  auto before = Load(root);
  ASSERT_TRUE(before);
  ASSERT_EQ(before->version(), 6);
  ASSERT_EQ(before->num_files(), 4);
  ASSERT_EQ(before->domain_metadata().size(), 1u);

  auto written = WriteCheckpoint(*before, CheckpointOptions{});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_TRUE(written->written);
  EXPECT_FALSE(written->v2);
  EXPECT_EQ(written->path, ClassicCheckpointPath(root, 6));
  EXPECT_EQ(written->num_adds, 4);
  EXPECT_EQ(written->num_removes, 1);
  // protocol + metaData + 2 txns + 1 domain + 4 adds + 1 remove
  EXPECT_EQ(written->num_rows, 10);

  DeleteCommitsUpTo(root, 6);
  auto after = Load(root, 6);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->state().checkpoint_version, std::optional<int64_t>(6));
  ExpectSameState(*before, *after);

  // Later commits replay on top of the new checkpoint.
  ASSERT_TRUE(w.Append({FixtureFile(Rows(50, 1), {{"p", "b"}})}).ok());  // 7
  auto later = Load(root);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->version(), 7);
  EXPECT_EQ(later->num_files(), 5);
}

TEST(CheckpointWriter, ParquetSchemaMatchesDeltaSpark) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  BuildRichTable(w, NowMs());
  auto snap = Load(root);
  ASSERT_TRUE(snap);
  ASSERT_TRUE(WriteCheckpoint(*snap).ok());
  auto table = ReadParquet(ClassicCheckpointPath(root, 6));
  const auto& schema = *table->schema();

  std::vector<std::string> top;
  for (const auto& f : schema.fields()) top.push_back(f->name());
  EXPECT_EQ(top, (std::vector<std::string>{"txn", "add", "remove", "metaData", "protocol",
                                           "domainMetadata"}));
  auto names = [](const std::shared_ptr<arrow::DataType>& t) {
    std::vector<std::string> out;
    for (const auto& f : t->fields()) out.push_back(f->name());
    return out;
  };
  EXPECT_EQ(names(schema.GetFieldByName("txn")->type()),
            (std::vector<std::string>{"appId", "version", "lastUpdated"}));
  const auto add = schema.GetFieldByName("add")->type();
  EXPECT_EQ(names(add), (std::vector<std::string>{
                            "path", "partitionValues", "size", "modificationTime", "dataChange",
                            "stats", "tags", "deletionVector", "baseRowId",
                            "defaultRowCommitVersion", "clusteringProvider",
                            "partitionValues_parsed", "stats_parsed"}));
  const auto remove = schema.GetFieldByName("remove")->type();
  EXPECT_EQ(names(remove), (std::vector<std::string>{
                               "path", "deletionTimestamp", "dataChange", "extendedFileMetadata",
                               "partitionValues", "size", "deletionVector", "baseRowId",
                               "defaultRowCommitVersion"}));
  EXPECT_EQ(names(schema.GetFieldByName("metaData")->type()),
            (std::vector<std::string>{"id", "name", "description", "format", "schemaString",
                                      "partitionColumns", "configuration", "createdTime"}));
  const auto protocol = schema.GetFieldByName("protocol")->type();
  EXPECT_EQ(names(protocol), (std::vector<std::string>{"minReaderVersion", "minWriterVersion",
                                                       "readerFeatures", "writerFeatures"}));
  EXPECT_EQ(names(schema.GetFieldByName("domainMetadata")->type()),
            (std::vector<std::string>{"domain", "configuration", "removed"}));

  // Leaf types.
  auto child = [](const std::shared_ptr<arrow::DataType>& t, const std::string& n) {
    return static_cast<const arrow::StructType&>(*t).GetFieldByName(n)->type();
  };
  EXPECT_EQ(child(protocol, "minReaderVersion")->id(), arrow::Type::INT32);
  EXPECT_EQ(child(protocol, "readerFeatures")->id(), arrow::Type::LIST);
  EXPECT_EQ(child(add, "size")->id(), arrow::Type::INT64);
  EXPECT_EQ(child(add, "partitionValues")->id(), arrow::Type::MAP);
  EXPECT_EQ(child(add, "stats")->id(), arrow::Type::STRING);
  EXPECT_EQ(names(child(add, "deletionVector")),
            (std::vector<std::string>{"storageType", "pathOrInlineDv", "offset", "sizeInBytes",
                                      "cardinality"}));
  EXPECT_EQ(child(child(add, "deletionVector"), "offset")->id(), arrow::Type::INT32);
  EXPECT_EQ(child(remove, "deletionTimestamp")->id(), arrow::Type::INT64);
  EXPECT_EQ(child(child(schema.GetFieldByName("metaData")->type(), "format"), "options")->id(),
            arrow::Type::MAP);
  // Typed partition values and stats.
  const auto pv = child(add, "partitionValues_parsed");
  EXPECT_EQ(names(pv), (std::vector<std::string>{"p"}));
  EXPECT_EQ(child(pv, "p")->id(), arrow::Type::STRING);
  const auto stats = child(add, "stats_parsed");
  EXPECT_EQ(names(stats), (std::vector<std::string>{"numRecords", "minValues", "maxValues",
                                                    "nullCount", "tightBounds"}));
  EXPECT_EQ(names(child(stats, "minValues")), (std::vector<std::string>{"id", "name"}));
  EXPECT_EQ(child(child(stats, "minValues"), "id")->id(), arrow::Type::INT64);
  EXPECT_EQ(child(child(stats, "maxValues"), "name")->id(), arrow::Type::STRING);
  EXPECT_EQ(child(child(stats, "nullCount"), "name")->id(), arrow::Type::INT64);

  // One action per row; dataChange false; feature lists null below (3,7).
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    int non_null = 0;
    for (int c = 0; c < batch->num_columns(); ++c) non_null += batch->column(c)->IsValid(i);
    EXPECT_EQ(non_null, 1) << "row " << i;
  }
  const auto& adds = static_cast<const arrow::StructArray&>(*batch->GetColumnByName("add"));
  const auto& protocols =
      static_cast<const arrow::StructArray&>(*batch->GetColumnByName("protocol"));
  const auto& removes = static_cast<const arrow::StructArray&>(*batch->GetColumnByName("remove"));
  int64_t add_rows = 0;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    if (adds.IsValid(i)) {
      ++add_rows;
      EXPECT_FALSE(static_cast<const arrow::BooleanArray&>(*adds.GetFieldByName("dataChange")).Value(i));
    }
    if (removes.IsValid(i)) {
      EXPECT_FALSE(
          static_cast<const arrow::BooleanArray&>(*removes.GetFieldByName("dataChange")).Value(i));
      EXPECT_TRUE(static_cast<const arrow::BooleanArray&>(
                      *removes.GetFieldByName("extendedFileMetadata"))
                      .Value(i));
    }
    if (protocols.IsValid(i)) {
      EXPECT_EQ(static_cast<const arrow::Int32Array&>(*protocols.GetFieldByName("minWriterVersion"))
                    .Value(i),
                7);
      EXPECT_TRUE(protocols.GetFieldByName("readerFeatures")->IsNull(i));
      EXPECT_TRUE(protocols.GetFieldByName("writerFeatures")->IsValid(i));
    }
  }
  EXPECT_EQ(add_rows, 4);

  // stats_parsed holds the same values as the JSON stats.
  const auto& parsed = static_cast<const arrow::StructArray&>(*adds.GetFieldByName("stats_parsed"));
  const auto& json = static_cast<const arrow::StringArray&>(*adds.GetFieldByName("stats"));
  const auto& mins = static_cast<const arrow::StructArray&>(*parsed.GetFieldByName("minValues"));
  const auto& maxs = static_cast<const arrow::StructArray&>(*parsed.GetFieldByName("maxValues"));
  const auto& num_records = static_cast<const arrow::Int64Array&>(*parsed.GetFieldByName("numRecords"));
  const auto& pvs = static_cast<const arrow::StructArray&>(*adds.GetFieldByName("partitionValues_parsed"));
  const auto& paths = static_cast<const arrow::StringArray&>(*adds.GetFieldByName("path"));
  auto data_schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  int with_stats = 0;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    if (!adds.IsValid(i)) continue;
    const std::string path(paths.GetView(i));
    // partitionValues_parsed follows the partition directory.
    const auto& p = static_cast<const arrow::StringArray&>(*pvs.GetFieldByName("p"));
    if (path.find("p=__HIVE_DEFAULT_PARTITION__") != std::string::npos) {
      EXPECT_TRUE(p.IsNull(i)) << path;
    } else {
      ASSERT_TRUE(p.IsValid(i)) << path;
      EXPECT_NE(path.find("p=" + std::string(p.GetView(i)) + "/"), std::string::npos) << path;
    }
    if (json.IsNull(i)) {
      EXPECT_TRUE(parsed.IsNull(i));
      continue;
    }
    ++with_stats;
    auto expected = internal::ParseStatsJson(json.GetView(i), *data_schema).ValueOrDie();
    EXPECT_EQ(num_records.Value(i), *expected.num_records);
    EXPECT_EQ(static_cast<const arrow::Int64Array&>(*mins.GetFieldByName("id")).Value(i),
              static_cast<const arrow::Int64Scalar&>(*expected.columns["id"].min).value);
    EXPECT_EQ(static_cast<const arrow::Int64Array&>(*maxs.GetFieldByName("id")).Value(i),
              static_cast<const arrow::Int64Scalar&>(*expected.columns["id"].max).value);
  }
  EXPECT_EQ(with_stats, 3);
}

TEST(CheckpointWriter, TypedStatsAloneCarryTheStatistics) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  ASSERT_TRUE(w.Create(DataSchema(), {"p"}, {{"delta.checkpoint.writeStatsAsJson", "false"}}).ok());
  ASSERT_TRUE(w.Append({FixtureFile(Rows(0, 10), {{"p", "a"}}), FixtureFile(Rows(100, 7), {{"p", "b"}})}).ok());
  auto before = Load(root);
  ASSERT_TRUE(before);
  ASSERT_TRUE(WriteCheckpoint(*before).ok());
  auto table = ReadParquet(ClassicCheckpointPath(root, 1));
  const auto add = table->schema()->GetFieldByName("add")->type();
  const auto& add_struct = static_cast<const arrow::StructType&>(*add);
  EXPECT_EQ(add_struct.GetFieldByName("stats"), nullptr);
  EXPECT_NE(add_struct.GetFieldByName("stats_parsed"), nullptr);

  DeleteCommitsUpTo(root, 1);
  auto after = Load(root);
  ASSERT_TRUE(after);
  auto data_schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  auto stats_by_path = [&](const Snapshot& s) {
    std::map<std::string, internal::FileStats> out;
    const auto& paths = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("path"));
    const auto& stats = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("stats"));
    for (int64_t i = 0; i < paths.length(); ++i) {
      EXPECT_TRUE(stats.IsValid(i));
      if (stats.IsValid(i)) {
        out[std::string(paths.GetView(i))] =
            internal::ParseStatsJson(stats.GetView(i), *data_schema).ValueOrDie();
      }
    }
    return out;
  };
  auto expected = stats_by_path(*before);
  auto actual = stats_by_path(*after);
  ASSERT_EQ(expected.size(), actual.size());
  for (auto& [path, e] : expected) {
    auto& a = actual[path];
    EXPECT_EQ(e.num_records, a.num_records) << path;
    for (const auto& [col, cs] : e.columns) {
      ASSERT_TRUE(a.columns.count(col)) << path << " " << col;
      const auto& ac = a.columns[col];
      EXPECT_EQ(cs.null_count, ac.null_count) << col;
      ASSERT_EQ(cs.min != nullptr, ac.min != nullptr) << col;
      if (cs.min) {
        EXPECT_TRUE(cs.min->Equals(*ac.min)) << col;
      }
      ASSERT_EQ(cs.max != nullptr, ac.max != nullptr) << col;
      if (cs.max) {
        EXPECT_TRUE(cs.max->Equals(*ac.max)) << col;
      }
    }
  }
}

TEST(CheckpointWriter, TypedStatsUsePhysicalNamesAndColumnTypes) {
  TempDir dir;
  const std::string root = dir.str();
  auto field = [](const std::string& name, const std::string& type, int id,
                  const std::string& physical) {
    return fmt::format(
        R"({{"name":"{}","type":{},"nullable":true,"metadata":{{"delta.columnMapping.id":{},"delta.columnMapping.physicalName":"{}"}}}})",
        name, type, id, physical);
  };
  const std::string nested = R"({"type":"struct","fields":[)" +
                             field("ts", "\"timestamp\"", 3, "col-ts") + "," +
                             field("day", "\"date\"", 4, "col-day") + "," +
                             field("amount", "\"decimal(10,2)\"", 5, "col-amount") + "]}";
  const std::string fields = field("id", "\"long\"", 1, "col-id") + "," +
                             field("s", nested, 2, "col-s") + "," +
                             field("part", "\"integer\"", 6, "col-part");
  const std::string stats =
      R"({\"numRecords\":2,\"minValues\":{\"col-id\":1,\"col-s\":{\"col-ts\":\"2024-01-01T00:00:00.000Z\",\"col-day\":\"2024-01-02\",\"col-amount\":1.25}},)"
      R"(\"maxValues\":{\"col-id\":9,\"col-s\":{\"col-ts\":\"2024-03-01T10:00:00.500Z\",\"col-day\":\"2024-02-02\",\"col-amount\":99.5}},)"
      R"(\"nullCount\":{\"col-id\":0,\"col-s\":{\"col-ts\":0,\"col-day\":1,\"col-amount\":0}},\"tightBounds\":true})";
  testing::WriteCommit(
      root, 0,
      {testing::ProtocolLine(2, 5),
       testing::MetadataLine(fields, R"(["part"])", R"({"delta.columnMapping.mode":"name","delta.columnMapping.maxColumnId":"6"})"),
       R"({"add":{"path":"col-part=7/f1.parquet","partitionValues":{"col-part":"7"},"size":10,"modificationTime":1,"dataChange":true,"stats":")" +
           stats + R"("}})",
       R"({"add":{"path":"col-part=__HIVE_DEFAULT_PARTITION__/f2.parquet","partitionValues":{"col-part":null},"size":10,"modificationTime":1,"dataChange":true}})"});
  auto before = Load(root);
  ASSERT_TRUE(before);
  ASSERT_TRUE(WriteCheckpoint(*before).ok());
  auto table = ReadParquet(ClassicCheckpointPath(root, 0));
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  const auto& adds = static_cast<const arrow::StructArray&>(*batch->GetColumnByName("add"));
  const auto& pv = static_cast<const arrow::StructArray&>(*adds.GetFieldByName("partitionValues_parsed"));
  ASSERT_NE(pv.GetFieldByName("col-part"), nullptr) << pv.type()->ToString();
  EXPECT_EQ(pv.GetFieldByName("col-part")->type_id(), arrow::Type::INT32);
  const auto& parsed = static_cast<const arrow::StructArray&>(*adds.GetFieldByName("stats_parsed"));
  const auto& mins = static_cast<const arrow::StructArray&>(*parsed.GetFieldByName("minValues"));
  const auto& maxs = static_cast<const arrow::StructArray&>(*parsed.GetFieldByName("maxValues"));
  const auto& nulls = static_cast<const arrow::StructArray&>(*parsed.GetFieldByName("nullCount"));
  ASSERT_NE(mins.GetFieldByName("col-id"), nullptr) << mins.type()->ToString();
  EXPECT_EQ(mins.GetFieldByName("col-part"), nullptr);  // partition columns have no stats
  const auto& min_s = static_cast<const arrow::StructArray&>(*mins.GetFieldByName("col-s"));
  const auto& max_s = static_cast<const arrow::StructArray&>(*maxs.GetFieldByName("col-s"));
  const auto& null_s = static_cast<const arrow::StructArray&>(*nulls.GetFieldByName("col-s"));
  EXPECT_EQ(min_s.GetFieldByName("col-ts")->type()->ToString(), "timestamp[us, tz=UTC]");
  EXPECT_EQ(min_s.GetFieldByName("col-day")->type_id(), arrow::Type::DATE32);
  EXPECT_EQ(min_s.GetFieldByName("col-amount")->type()->ToString(), "decimal128(10, 2)");
  EXPECT_EQ(null_s.GetFieldByName("col-day")->type_id(), arrow::Type::INT64);
  const auto& paths = static_cast<const arrow::StringArray&>(*adds.GetFieldByName("path"));
  int seen = 0;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    if (!adds.IsValid(i)) continue;
    ++seen;
    const auto& part = static_cast<const arrow::Int32Array&>(*pv.GetFieldByName("col-part"));
    if (paths.GetView(i) == "col-part=7/f1.parquet") {
      EXPECT_EQ(part.Value(i), 7);
      EXPECT_EQ(static_cast<const arrow::Int64Array&>(*mins.GetFieldByName("col-id")).Value(i), 1);
      EXPECT_EQ(static_cast<const arrow::Int64Array&>(*maxs.GetFieldByName("col-id")).Value(i), 9);
      EXPECT_EQ(static_cast<const arrow::TimestampArray&>(*max_s.GetFieldByName("col-ts")).Value(i),
                1709287200500000);
      EXPECT_EQ(static_cast<const arrow::Date32Array&>(*min_s.GetFieldByName("col-day")).Value(i),
                19724);
      EXPECT_EQ(static_cast<const arrow::Decimal128Array&>(*max_s.GetFieldByName("col-amount"))
                    .FormatValue(i),
                "99.50");
      EXPECT_EQ(static_cast<const arrow::Int64Array&>(*null_s.GetFieldByName("col-day")).Value(i), 1);
      EXPECT_TRUE(static_cast<const arrow::BooleanArray&>(*parsed.GetFieldByName("tightBounds")).Value(i));
    } else {
      EXPECT_TRUE(part.IsNull(i));
      EXPECT_TRUE(parsed.IsNull(i));
    }
  }
  EXPECT_EQ(seen, 2);
  DeleteCommitsUpTo(root, 0);
  auto after = Load(root);
  ASSERT_TRUE(after);
  ExpectSameState(*before, *after);
}

TEST(CheckpointWriter, ExpiredTombstonesAreDroppedAndReAddedFilesAreLive) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  const int64_t now = NowMs();
  FixtureTableWriter w(root);
  ASSERT_TRUE(w.Create(DataSchema(), {"p"}, {{"delta.deletedFileRetentionDuration", "interval 2 days"}}).ok());
  ASSERT_TRUE(w.Append({FixtureFile(Rows(0, 2), {{"p", "a"}}), FixtureFile(Rows(2, 2), {{"p", "a"}}),
                        FixtureFile(Rows(4, 2), {{"p", "b"}}), FixtureFile(Rows(6, 2), {{"p", "b"}})})
                  .ok());  // 1
  auto paths = w.active_paths();
  ASSERT_EQ(paths.size(), 4u);
  ASSERT_TRUE(w.Remove({paths[0]}, {}, "DELETE", now - 3 * kDayMs).ok());  // 2: expired
  ASSERT_TRUE(w.Remove({paths[1]}, {}, "DELETE", now - 1 * kDayMs).ok());  // 3: kept
  ASSERT_TRUE(w.Remove({paths[2]}, {}, "DELETE", now - 1 * kDayMs).ok());  // 4: re-added below
  ASSERT_TRUE(w.CommitRaw({fmt::format(
                              R"({{"add":{{"path":"{}","partitionValues":{{"p":"b"}},"size":10,"modificationTime":1,"dataChange":true}}}})",
                              paths[2])})
                  .ok());  // 5
  auto snap = Load(root);
  ASSERT_TRUE(snap);
  CheckpointOptions options;
  options.now_ms = now;
  auto written = WriteCheckpoint(*snap, options);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(written->num_removes, 1);

  auto table = ReadParquet(written->path);
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  const auto& removes = static_cast<const arrow::StructArray&>(*batch->GetColumnByName("remove"));
  const auto& remove_paths = static_cast<const arrow::StringArray&>(*removes.GetFieldByName("path"));
  const auto& ts = static_cast<const arrow::Int64Array&>(*removes.GetFieldByName("deletionTimestamp"));
  std::set<std::string> tombstones;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    if (!removes.IsValid(i)) continue;
    tombstones.insert(std::string(remove_paths.GetView(i)));
    EXPECT_EQ(ts.Value(i), now - kDayMs);
  }
  EXPECT_EQ(tombstones, (std::set<std::string>{paths[1]}));

  DeleteCommitsUpTo(root, 5);
  auto after = Load(root);
  ASSERT_TRUE(after);
  EXPECT_EQ(LivePaths(*after), (std::set<std::string>{paths[2], paths[3]}));
}

TEST(Tombstones, CarriedForwardFromACheckpointAndKeyedByDeletionVector) {
  TempDir dir;
  const std::string root = dir.str();
  using testing::WriteCommit;
  const std::string dv1 =
      R"(,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2})";
  const std::string dv2 =
      R"(,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":50,"sizeInBytes":36,"cardinality":3})";
  WriteCommit(root, 0, {testing::ProtocolLine(), testing::MetadataLine(), testing::AddLine("a.parquet"),
                        testing::AddLine("b.parquet"), testing::AddLine("c.parquet", 100, dv1)});
  WriteCommit(root, 1, {testing::RemoveLine("a.parquet", R"(,"size":100)")});
  // A DV update: (c, dv1) becomes a tombstone while (c, dv2) is live.
  WriteCommit(root, 2, {testing::RemoveLine("c.parquet", dv1), testing::AddLine("c.parquet", 100, dv2)});
  auto v2 = Load(root);
  ASSERT_TRUE(v2);
  CheckpointOptions options;
  options.now_ms = 1000;  // every deletionTimestamp (5) is within the retention
  ASSERT_TRUE(WriteCheckpoint(*v2, options).ok());
  // After the checkpoint: b removed; a re-added (no longer a tombstone).
  WriteCommit(root, 3, {testing::RemoveLine("b.parquet"), testing::AddLine("a.parquet", 7)});

  auto store = MakeLocalLogStore();
  auto segment = internal::BuildLogSegment(*store, root, 3);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  ASSERT_EQ(segment->checkpoint_version, std::optional<int64_t>(2));
  auto tombstones = internal::LoadTombstones(*store, *segment, 0);
  ASSERT_TRUE(tombstones.ok()) << tombstones.status().ToString();
  std::multiset<std::string> found;
  const auto& paths = static_cast<const arrow::StringArray&>(*(*tombstones)->GetColumnByName("path"));
  const auto& dvs = static_cast<const arrow::StructArray&>(*(*tombstones)->GetColumnByName("deletionVector"));
  for (int64_t i = 0; i < paths.length(); ++i) {
    std::string key(paths.GetView(i));
    if (dvs.IsValid(i)) {
      key += "@" + std::to_string(static_cast<const arrow::Int32Array&>(*dvs.field(2)).Value(i));
    }
    found.insert(key);
  }
  EXPECT_EQ(found, (std::multiset<std::string>{"b.parquet", "c.parquet@1"}));
  // Everything removed at time 5 is expired for a cutoff at 5.
  auto none = internal::LoadTombstones(*store, *segment, 5);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->num_rows(), 0);

  auto v3 = Load(root);
  ASSERT_TRUE(v3);
  EXPECT_EQ(LivePaths(*v3), (std::set<std::string>{"a.parquet", "c.parquet"}));
}

TEST(CheckpointWriter, SecondCheckpointOfTheSameVersionIsANoOp) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  BuildRichTable(w, NowMs());
  auto snap = Load(root);
  ASSERT_TRUE(snap);
  auto first = WriteCheckpoint(*snap, CheckpointOptions{});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->written);
  const std::string content = ReadText(first->path);
  const auto mtime = fs::last_write_time(first->path);
  const std::string hint = ReadText(LogPath(root, "_last_checkpoint"));

  auto second = WriteCheckpoint(*snap, CheckpointOptions{});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->written);
  EXPECT_TRUE(WriteCheckpoint(*snap).ok());
  EXPECT_EQ(ReadText(first->path), content);
  EXPECT_EQ(fs::last_write_time(first->path), mtime);
  EXPECT_EQ(ReadText(LogPath(root, "_last_checkpoint")), hint);
  int checkpoints = 0;
  for (const auto& e : fs::directory_iterator(root + "/_delta_log")) {
    checkpoints += e.path().filename().string().find(".checkpoint.") != std::string::npos;
  }
  EXPECT_EQ(checkpoints, 1);
}

TEST(CheckpointWriter, LastCheckpointDescribesTheFileAndOnlyMovesForward) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  BuildRichTable(w, NowMs());
  auto v6 = Load(root);
  ASSERT_TRUE(v6);
  auto written = WriteCheckpoint(*v6, CheckpointOptions{});
  ASSERT_TRUE(written.ok());

  auto hint = [&] {
    simdjson::dom::parser parser;
    simdjson::padded_string text(ReadText(LogPath(root, "_last_checkpoint")));
    simdjson::dom::object object;
    std::map<std::string, int64_t> out;
    EXPECT_EQ(parser.parse(text).get(object), simdjson::SUCCESS);
    for (auto [k, v] : object) out[std::string(k)] = v.get_int64().value();
    return out;
  };
  auto h = hint();
  EXPECT_EQ(h.size(), 4u);
  EXPECT_EQ(h["version"], 6);
  EXPECT_EQ(h["size"], written->num_rows);
  EXPECT_EQ(h["sizeInBytes"], static_cast<int64_t>(fs::file_size(written->path)));
  EXPECT_EQ(h["sizeInBytes"], written->size_in_bytes);
  EXPECT_EQ(h["numOfAddFiles"], 4);

  // A checkpoint of an older version does not pull the hint back.
  auto v2 = Load(root, 2);
  ASSERT_TRUE(v2);
  auto older = WriteCheckpoint(*v2, CheckpointOptions{});
  ASSERT_TRUE(older.ok());
  EXPECT_TRUE(older->written);
  EXPECT_TRUE(fs::exists(ClassicCheckpointPath(root, 2)));
  EXPECT_EQ(hint()["version"], 6);
  // Time travel to 2 now starts from that checkpoint.
  auto again = Load(root, 2);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->state().checkpoint_version, std::optional<int64_t>(2));
  ExpectSameState(*v2, *again);
}

TEST(CheckpointWriter, V2PolicyWritesAUuidCheckpointOnly) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  ASSERT_TRUE(w.Create(DataSchema(), {"p"}, {{"delta.checkpointPolicy", "v2"}}, 3, 7,
                       {"v2Checkpoint"}, {"v2Checkpoint"})
                  .ok());
  ASSERT_TRUE(w.Append({FixtureFile(Rows(0, 5), {{"p", "a"}})}).ok());
  ASSERT_TRUE(w.Append({FixtureFile(Rows(5, 5), {{"p", "b"}})}).ok());
  auto before = Load(root);
  ASSERT_TRUE(before);
  auto written = WriteCheckpoint(*before, CheckpointOptions{});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_TRUE(written->written);
  EXPECT_TRUE(written->v2);
  const std::string name = fs::path(written->path).filename().string();
  EXPECT_TRUE(std::regex_match(
      name, std::regex(R"(0{19}2\.checkpoint\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.parquet)")))
      << name;
  EXPECT_FALSE(fs::exists(ClassicCheckpointPath(root, 2)));

  auto table = ReadParquet(written->path);
  ASSERT_NE(table->schema()->GetFieldByName("checkpointMetadata"), nullptr);
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  const auto& cm = static_cast<const arrow::StructArray&>(*batch->GetColumnByName("checkpointMetadata"));
  int cm_rows = 0;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    if (!cm.IsValid(i)) continue;
    ++cm_rows;
    EXPECT_EQ(static_cast<const arrow::Int64Array&>(*cm.GetFieldByName("version")).Value(i), 2);
  }
  EXPECT_EQ(cm_rows, 1);
  const auto& protocols = static_cast<const arrow::StructArray&>(*batch->GetColumnByName("protocol"));
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    if (!protocols.IsValid(i)) continue;
    EXPECT_TRUE(protocols.GetFieldByName("readerFeatures")->IsValid(i));
    EXPECT_TRUE(protocols.GetFieldByName("writerFeatures")->IsValid(i));
  }

  // No second UUID checkpoint for the same version.
  auto again = WriteCheckpoint(*before, CheckpointOptions{});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->written);

  DeleteCommitsUpTo(root, 2);
  auto after = Load(root);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->state().checkpoint_version, std::optional<int64_t>(2));
  ExpectSameState(*before, *after);
}

TEST(CheckpointWriter, V2PolicyWithoutTheFeatureStaysClassic) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  ASSERT_TRUE(w.Create(DataSchema(), {"p"}, {{"delta.checkpointPolicy", "v2"}}).ok());
  ASSERT_TRUE(w.Append({FixtureFile(Rows(0, 5), {{"p", "a"}})}).ok());
  auto snap = Load(root);
  ASSERT_TRUE(snap);
  auto written = WriteCheckpoint(*snap, CheckpointOptions{});
  ASSERT_TRUE(written.ok());
  EXPECT_FALSE(written->v2);
  EXPECT_EQ(written->path, ClassicCheckpointPath(root, 1));
  EXPECT_EQ(ReadParquet(written->path)->schema()->GetFieldByName("checkpointMetadata"), nullptr);
}

TEST(CheckpointWriter, LargeTableIsWrittenInBoundedRowGroups) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  ASSERT_TRUE(testing::GenerateLogOnlyTable(root, 30, 20'000, 0).ok());
  auto before = Load(root);
  ASSERT_TRUE(before);
  ASSERT_EQ(before->num_files(), 20'000);
  CheckpointOptions options;
  options.max_rows_per_row_group = 4096;
  options.now_ms = 0;  // keep every tombstone
  auto written = WriteCheckpoint(*before, options);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(written->num_adds, 20'000);
  EXPECT_GT(written->num_removes, 0);

  int row_groups = 0;
  std::vector<int64_t> rows;
  auto table = ReadParquet(written->path, &row_groups, &rows);
  EXPECT_GE(row_groups, 5);
  int64_t total = 0;
  for (int64_t r : rows) {
    EXPECT_LE(r, 4096);
    total += r;
  }
  EXPECT_EQ(total, written->num_rows);
  EXPECT_EQ(table->num_rows(), written->num_rows);

  DeleteCommitsUpTo(root, before->version());
  auto after = Load(root);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->state().checkpoint_version, std::optional<int64_t>(before->version()));
  ExpectSameState(*before, *after);
}

// ---------------------------------------------------------------------------------------------
// Streaming: the checkpoint goes into the store's stream as it is encoded.

// What reached the store's stream of a streamed put.
struct StreamRecord {
  int puts = 0;
  int64_t writes = 0;
  int64_t bytes = 0;
  int64_t largest_write = 0;
  // Growth of Arrow's default pool (where the encoder's buffers, and formerly the whole encoded
  // file, live) over its size when the put started, sampled at every write.
  int64_t peak_pool_growth = 0;
};

// Forwards every write to the store's stream and records it.
class RecordingStream final : public arrow::io::OutputStream {
 public:
  RecordingStream(std::shared_ptr<arrow::io::OutputStream> inner, StreamRecord* record)
      : inner_(std::move(inner)), record_(record),
        pool_at_start_(arrow::default_memory_pool()->bytes_allocated()) {}

  arrow::Status Write(const void* data, int64_t nbytes) override {
    ++record_->writes;
    record_->bytes += nbytes;
    record_->largest_write = std::max(record_->largest_write, nbytes);
    record_->peak_pool_growth =
        std::max(record_->peak_pool_growth,
                 arrow::default_memory_pool()->bytes_allocated() - pool_at_start_);
    return inner_->Write(data, nbytes);
  }
  arrow::Status Flush() override { return inner_->Flush(); }
  arrow::Status Close() override { return inner_->Close(); }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }

 private:
  std::shared_ptr<arrow::io::OutputStream> inner_;
  StreamRecord* record_;
  int64_t pool_at_start_;
};

// The local store, recording streamed puts; `before_streamed_put` runs first (to let another
// writer win the race). Buffered puts are counted.
class RecordingStore final : public LogStore {
 public:
  arrow::Result<std::vector<FileEntry>> List(const std::string& dir,
                                             std::string_view start) override {
    return inner_->List(dir, start);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(const std::string& path) override {
    return inner_->Read(path);
  }
  arrow::Status PutIfAbsent(const std::string& path, std::string_view data) override {
    ++buffered_puts;
    return inner_->PutIfAbsent(path, data);
  }
  arrow::Status PutIfAbsentStreaming(const std::string& path,
                                     const ContentWriter& write) override {
    ++record.puts;
    if (before_streamed_put) before_streamed_put(path);
    return inner_->PutIfAbsentStreaming(
        path, [&](const std::shared_ptr<arrow::io::OutputStream>& out) {
          return write(std::make_shared<RecordingStream>(out, &record));
        });
  }
  arrow::Status PutReplace(const std::string& path, std::string_view data) override {
    return inner_->PutReplace(path, data);
  }
  arrow::Status Delete(const std::string& path) override { return inner_->Delete(path); }
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override {
    return inner_->filesystem();
  }

  StreamRecord record;
  int buffered_puts = 0;
  std::function<void(const std::string&)> before_streamed_put;

 private:
  std::shared_ptr<LogStore> inner_ = MakeLocalLogStore();
};

std::shared_ptr<Snapshot> LoadThrough(const std::string& root, std::shared_ptr<LogStore> store) {
  auto table = DeltaTable::Open(root, std::move(store));
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto snap = (*table)->Latest();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? *snap : nullptr;
}

// Names in the log directory that are neither commits nor `.crc` files.
std::set<std::string> NonCommitLogNames(const std::string& root) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(root + "/_delta_log")) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".json") && !name.ends_with(".crc")) out.insert(name);
  }
  return out;
}

// A log-only table of `files` live adds checkpointed through a RecordingStore in row groups of
// `row_group_rows`; the result, what the store saw and the snapshot that was checkpointed.
struct StreamedCheckpoint {
  std::string root;
  std::shared_ptr<Snapshot> snapshot;
  internal::CheckpointWriteResult written;
  StreamRecord record;
  int buffered_puts = 0;
};

void WriteStreamedCheckpoint(const TempDir& dir, int64_t files, int64_t row_group_rows,
                             StreamedCheckpoint* out) {
  out->root = dir.str() + "/t" + std::to_string(files);
  ASSERT_TRUE(testing::GenerateLogOnlyTable(out->root, 20, files, 0).ok());
  auto store = std::make_shared<RecordingStore>();
  out->snapshot = LoadThrough(out->root, store);
  ASSERT_TRUE(out->snapshot);
  ASSERT_EQ(out->snapshot->num_files(), files);
  CheckpointOptions options;
  options.max_rows_per_row_group = row_group_rows;
  options.now_ms = 0;  // keep every tombstone
  auto written = WriteCheckpoint(*out->snapshot, options);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_TRUE(written->written);
  out->written = *written;
  out->record = store->record;
  out->buffered_puts = store->buffered_puts;
}

TEST(CheckpointWriter, ManyFilesAreStreamedIntoTheStoreAndReadBackIdentically) {
  constexpr int64_t kRowGroup = 1024;
  TempDir dir;
  StreamedCheckpoint small, big;
  ASSERT_NO_FATAL_FAILURE(WriteStreamedCheckpoint(dir, 10'000, kRowGroup, &small));
  ASSERT_NO_FATAL_FAILURE(WriteStreamedCheckpoint(dir, 50'000, kRowGroup, &big));
  const auto& written = big.written;
  EXPECT_EQ(written.num_adds, 50'000);
  EXPECT_GT(written.num_removes, 0);

  // One streamed put, no buffered one; what went through the stream is the file on disk.
  const StreamRecord& r = big.record;
  EXPECT_EQ(r.puts, 1);
  EXPECT_EQ(big.buffered_puts, 0);
  EXPECT_EQ(r.bytes, written.size_in_bytes);
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(written.path)), written.size_in_bytes);
  // The file reached the store piece by piece, never as one encoded blob.
  EXPECT_GT(r.writes, 50'000 / kRowGroup);
  EXPECT_LT(r.largest_write, written.size_in_bytes / 4);
  // Memory: five times the files make a file about five times larger, but the encoding's peak
  // (Arrow's pool, where the whole encoded file used to be collected) stays put and stays below
  // the size of the file.
  ASSERT_GT(written.size_in_bytes, 4 * small.written.size_in_bytes);
  EXPECT_LT(r.peak_pool_growth - small.record.peak_pool_growth,
            (written.size_in_bytes - small.written.size_in_bytes) / 4)
      << "peak pool growth " << small.record.peak_pool_growth << " -> " << r.peak_pool_growth
      << " bytes for checkpoints of " << small.written.size_in_bytes << " -> "
      << written.size_in_bytes << " bytes";
  EXPECT_LT(r.peak_pool_growth, written.size_in_bytes);

  int row_groups = 0;
  std::vector<int64_t> rows;
  auto table = ReadParquet(written.path, &row_groups, &rows);
  EXPECT_GE(row_groups, 50'000 / kRowGroup);
  for (int64_t n : rows) EXPECT_LE(n, kRowGroup);
  EXPECT_EQ(table->num_rows(), written.num_rows);

  const auto& before = *big.snapshot;
  DeleteCommitsUpTo(big.root, before.version());
  auto after = Load(big.root);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->state().checkpoint_version, std::optional<int64_t>(before.version()));
  ExpectSameState(before, *after);
  EXPECT_EQ(NonCommitLogNames(big.root),
            (std::set<std::string>{fs::path(written.path).filename().string(),
                                   "_last_checkpoint"}));
}

TEST(CheckpointWriter, FailedPutLeavesNoCheckpointAndTheNextOneWorks) {
  using internal::FaultInjectingLogStore;
  using When = FaultInjectingLogStore::When;
  for (When when : {When::kBefore, When::kDuring, When::kAfter}) {
    const char* moment = when == When::kBefore ? "before" : when == When::kDuring ? "during"
                                                                                  : "after";
    SCOPED_TRACE(moment);
    TempDir dir;
    const std::string root = dir.str() + "/t";
    FixtureTableWriter w(root);
    BuildRichTable(w, NowMs());
    auto faulty = std::make_shared<FaultInjectingLogStore>(MakeLocalLogStore());
    auto snap = LoadThrough(root, faulty);
    ASSERT_TRUE(snap);
    // The checkpoint is the only put-if-absent of WriteCheckpoint.
    faulty->FailOn(FaultInjectingLogStore::Op::kPutIfAbsent,
                   faulty->calls(FaultInjectingLogStore::Op::kPutIfAbsent) + 1, when);
    auto failed = WriteCheckpoint(*snap, CheckpointOptions{});
    ASSERT_FALSE(failed.ok());
    EXPECT_TRUE(failed.status().IsIOError()) << failed.status().ToString();
    EXPECT_NE(failed.status().message().find(ClassicCheckpointPath(root, 6)), std::string::npos)
        << failed.status().ToString();
    // Never a temporary file or a hint; the checkpoint itself only when the put went through.
    if (when == When::kAfter) {
      EXPECT_EQ(NonCommitLogNames(root),
                (std::set<std::string>{fs::path(ClassicCheckpointPath(root, 6)).filename()}));
    } else {
      EXPECT_TRUE(NonCommitLogNames(root).empty());
    }

    auto retried = WriteCheckpoint(*snap, CheckpointOptions{});
    ASSERT_TRUE(retried.ok()) << retried.status().ToString();
    EXPECT_EQ(retried->written, when != When::kAfter);
    DeleteCommitsUpTo(root, 6);
    auto after = Load(root);
    ASSERT_TRUE(after);
    EXPECT_EQ(after->state().checkpoint_version, std::optional<int64_t>(6));
    ExpectSameState(*snap, *after);
  }
}

TEST(CheckpointWriter, LosingTheRaceDuringThePutLeavesTheWinnersCheckpoint) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  FixtureTableWriter w(root);
  BuildRichTable(w, NowMs());
  auto store = std::make_shared<RecordingStore>();
  auto snap = LoadThrough(root, store);
  ASSERT_TRUE(snap);
  // Another writer publishes the same checkpoint after the listing found none.
  auto winner = WriteCheckpoint(*Load(root), CheckpointOptions{});
  ASSERT_TRUE(winner.ok() && winner->written);
  const std::string content = ReadText(winner->path);
  fs::remove(LogPath(root, "_last_checkpoint"));
  bool raced = false;
  // The listing inside WriteCheckpoint would see the winner, so hide it until the put.
  fs::rename(winner->path, winner->path + ".hidden");
  store->before_streamed_put = [&](const std::string& path) {
    raced = true;
    EXPECT_EQ(path, winner->path);
    fs::rename(winner->path + ".hidden", winner->path);
  };
  auto lost = WriteCheckpoint(*snap, CheckpointOptions{});
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_TRUE(raced);
  EXPECT_FALSE(lost->written);
  EXPECT_EQ(ReadText(winner->path), content);
  // The loser leaves neither a temporary file nor a hint.
  EXPECT_EQ(NonCommitLogNames(root),
            (std::set<std::string>{fs::path(winner->path).filename().string()}));
}


TEST(CheckpointWriter, TxnRetentionDropsStaleTxns) {
  TempDir dir;
  const std::string root = dir.str();
  using testing::WriteCommit;
  WriteCommit(root, 0, {testing::ProtocolLine(),
                        testing::MetadataLine(
                            R"({"name":"id","type":"long","nullable":true,"metadata":{}})", "[]",
                            R"({"delta.setTransactionRetentionDuration":"interval 1 hour"})"),
                        R"({"txn":{"appId":"old","version":1,"lastUpdated":1000}})",
                        R"({"txn":{"appId":"fresh","version":2,"lastUpdated":7000000}})",
                        R"({"txn":{"appId":"undated","version":3}})"});
  auto snap = Load(root);
  ASSERT_TRUE(snap);
  CheckpointOptions options;
  options.now_ms = 7200000;
  ASSERT_TRUE(WriteCheckpoint(*snap, options).ok());
  DeleteCommitsUpTo(root, 0);
  auto after = Load(root);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->txns().size(), 1u);
  EXPECT_EQ(after->txns().begin()->first, "fresh");
}

TEST(CheckpointWriter, BadRetentionPropertyIsAnError) {
  TempDir dir;
  const std::string root = dir.str();
  testing::WriteCommit(root, 0, {testing::ProtocolLine(),
                                 testing::MetadataLine(
                                     R"({"name":"id","type":"long","nullable":true,"metadata":{}})",
                                     "[]", R"({"delta.deletedFileRetentionDuration":"interval 1 month"})")});
  auto snap = Load(root);
  ASSERT_TRUE(snap);
  auto st = WriteCheckpoint(*snap);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument)) << st.ToString();
  EXPECT_NE(st.message().find("delta.deletedFileRetentionDuration"), std::string::npos);
  EXPECT_FALSE(fs::exists(ClassicCheckpointPath(root, 0)));
}

}  // namespace
}  // namespace deltacpp
