// replaceWhere on tables with the change data feed: a commit that rewrites part of a file
// carries cdc files holding every change of the commit (the matching rows as deletes, the new
// rows as inserts); a commit that only removes whole files carries none. The cdc files are read
// back with plain Parquet and compared with changes derived from the test's own input rows.
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"
#include "util/uri.h"

namespace deltacpp {
namespace {

using testing::CommitName;
using testing::DataFiles;
using testing::LogListing;
using testing::Longs;
using testing::ReadRows;
using testing::Rows;
using testing::RowStrings;
using testing::Strings;
using testing::TempDir;

std::shared_ptr<arrow::Schema> IdName() {
  return arrow::schema(
      {arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8())});
}

std::shared_ptr<arrow::Schema> IdNamePart() {
  return arrow::schema({arrow::field("id", arrow::int64(), false),
                        arrow::field("name", arrow::utf8()), arrow::field("part", arrow::utf8())});
}

// One `cdc` action of a commit.
struct CdcAction {
  std::string path;  // as in the log (URI-encoded)
  std::map<std::string, std::optional<std::string>> partition_values;
  int64_t size = -1;
  bool data_change = true;
};

// The actions of one commit file that these tests look at.
struct CommitActions {
  std::vector<CdcAction> cdc;
  int64_t adds = 0;
  int64_t removes = 0;
  std::map<std::string, std::string> operation_metrics;
};

CommitActions ReadCommit(const std::string& root, int64_t version) {
  CommitActions out;
  std::ifstream in(root + "/_delta_log/" + CommitName(version));
  EXPECT_TRUE(in.good()) << "commit " << version << " of " << root;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    EXPECT_FALSE(doc.HasParseError()) << line;
    if (doc.HasParseError() || !doc.IsObject()) continue;
    if (doc.HasMember("add")) ++out.adds;
    if (doc.HasMember("remove")) ++out.removes;
    if (doc.HasMember("commitInfo") && doc["commitInfo"].HasMember("operationMetrics")) {
      for (const auto& m : doc["commitInfo"]["operationMetrics"].GetObject()) {
        out.operation_metrics[m.name.GetString()] = m.value.GetString();
      }
    }
    if (!doc.HasMember("cdc")) continue;
    const auto& c = doc["cdc"];
    CdcAction a;
    a.path = c["path"].GetString();
    EXPECT_TRUE(c.HasMember("partitionValues")) << line;
    if (c.HasMember("partitionValues")) {
      for (const auto& pv : c["partitionValues"].GetObject()) {
        a.partition_values[pv.name.GetString()] =
            pv.value.IsNull() ? std::nullopt : std::optional<std::string>(pv.value.GetString());
      }
    }
    a.size = c["size"].GetInt64();
    a.data_change = c["dataChange"].GetBool();
    out.cdc.push_back(std::move(a));
  }
  return out;
}

std::string AbsolutePath(const std::string& root, const std::string& log_path) {
  auto decoded = internal::PercentDecodeStrict(log_path);
  EXPECT_TRUE(decoded.ok()) << log_path;
  return root + "/" + (decoded.ok() ? *decoded : log_path);
}

// A Parquet file read as it is stored (physical column names, no partition columns).
std::shared_ptr<arrow::Table> ReadParquet(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path);
  EXPECT_TRUE(file.ok()) << path << ": " << file.status().ToString();
  if (!file.ok()) return nullptr;
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  auto table = (*reader)->ReadTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : nullptr;
}

std::vector<std::string> ColumnNames(const arrow::Schema& schema) {
  std::vector<std::string> out;
  for (const auto& f : schema.fields()) out.push_back(f->name());
  return out;
}

// Rows of all cdc files of a commit ("id|name|_change_type"), after checking each file has
// exactly `columns`.
std::multiset<std::string> CdcRows(const std::string& root, const std::vector<CdcAction>& cdc,
                                   const std::vector<std::string>& columns) {
  std::multiset<std::string> out;
  for (const auto& a : cdc) {
    auto table = ReadParquet(AbsolutePath(root, a.path));
    if (!table) continue;
    EXPECT_EQ(ColumnNames(*table->schema()), columns) << a.path;
    auto rows = RowStrings(*table);
    out.insert(rows.begin(), rows.end());
  }
  return out;
}

std::set<std::string> ChangeDataFiles(const std::string& root) {
  std::set<std::string> out;
  for (const auto& f : DataFiles(root)) {
    if (f.rfind("_change_data/", 0) == 0) out.insert(f);
  }
  return out;
}

WriteOptions ReplaceWhere(std::string predicate) {
  WriteOptions o;
  o.mode = WriteMode::kOverwrite;
  o.replace_where = std::move(predicate);
  return o;
}

void CreateChangeDataFeedTable(const std::string& root,
                               const std::shared_ptr<arrow::Schema>& schema,
                               std::vector<std::string> partition_columns = {},
                               std::map<std::string, std::string> extra_properties = {}) {
  CreateTableOptions opts;
  opts.schema = schema;
  opts.partition_columns = std::move(partition_columns);
  opts.properties = std::move(extra_properties);
  opts.properties["delta.enableChangeDataFeed"] = "true";
  auto created = CreateTable(root, opts);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
}

TEST(ReplaceWhereChangeData, PartialRewriteCommitsEveryChangeAsCdcFiles) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName());
  // Three files: two are wholly replaced, one only partly.
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({5, 6}), Strings({"e", "f"})}), {}).ok());
  ASSERT_TRUE(
      WriteTable(root, Rows(IdName(), {Longs({1, 2, 3, 4}), Strings({"a", "b", "c", "d"})}), {})
          .ok());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({7, 8}), Strings({"g", "h"})}), {}).ok());
  auto r = WriteTable(root, Rows(IdName(), {Longs({3, 9}), Strings({"C", "I"})}),
                      ReplaceWhere("id >= 3"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->version, 4);

  // Expected from the rows written above: ids >= 3 are deleted, the two new rows inserted.
  const std::multiset<std::string> expected_changes = {
      "3|c|delete", "4|d|delete", "5|e|delete", "6|f|delete", "7|g|delete", "8|h|delete",
      "3|C|insert", "9|I|insert"};
  auto commit = ReadCommit(root, 4);
  ASSERT_FALSE(commit.cdc.empty());
  for (const auto& a : commit.cdc) {
    EXPECT_EQ(a.path.rfind("_change_data/cdc-", 0), 0u) << a.path;
    EXPECT_FALSE(a.data_change);
    EXPECT_TRUE(a.partition_values.empty());
    EXPECT_EQ(a.size, static_cast<int64_t>(std::filesystem::file_size(AbsolutePath(root, a.path))));
  }
  EXPECT_EQ(CdcRows(root, commit.cdc, {"id", "name", "_change_type"}), expected_changes);
  EXPECT_EQ(commit.removes, 3);
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a", "2|b", "3|C", "9|I"}));
  EXPECT_EQ(commit.operation_metrics["numDeletedRows"], "6");
  EXPECT_EQ(commit.operation_metrics["numCopiedRows"], "2");
  EXPECT_EQ(commit.operation_metrics["numAddedChangeFiles"], std::to_string(commit.cdc.size()));
}

TEST(ReplaceWhereChangeData, RowsWhereThePredicateIsNullAreKeptNotDeleted) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName());
  ASSERT_TRUE(
      WriteTable(root, Rows(IdName(), {Longs({1, 2, 3}), Strings({"a", std::nullopt, "c"})}), {})
          .ok());
  // name = 'c' is NULL for id 2: that row is not replaced.
  auto r = WriteTable(root, Rows(IdName(), {Longs({30}), Strings({"c"})}),
                      ReplaceWhere("name = 'c'"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto commit = ReadCommit(root, *r->version);
  EXPECT_EQ(CdcRows(root, commit.cdc, {"id", "name", "_change_type"}),
            (std::multiset<std::string>{"3|c|delete", "30|c|insert"}));
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a", "2|null", "30|c"}));
}

TEST(ReplaceWhereChangeData, WholeFileReplacementWritesNoChangeData) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), {}).ok());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({3}), Strings({"c"})}), {}).ok());
  auto r = WriteTable(root, Rows(IdName(), {Longs({4}), Strings({"D"})}), ReplaceWhere("id >= 3"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto commit = ReadCommit(root, *r->version);
  // The remove and the add describe the change exactly; readers derive it from them.
  EXPECT_TRUE(commit.cdc.empty());
  EXPECT_EQ(commit.removes, 1);
  EXPECT_EQ(commit.adds, 1);
  EXPECT_TRUE(ChangeDataFiles(root).empty());
  EXPECT_EQ(commit.operation_metrics["numDeletedRows"], "1");
  EXPECT_EQ(commit.operation_metrics["numCopiedRows"], "0");
  EXPECT_EQ(commit.operation_metrics["numAddedChangeFiles"], "0");
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a", "2|b", "4|D"}));
}

TEST(ReplaceWhereChangeData, FilesTheStatisticsProveWhollyMatchingAreRemovedUnread) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), {}).ok());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({3, 4}), Strings({"c", "d"})}), {}).ok());
  // The second file's stats (id in [3, 4]) prove `id >= 3` for every row: it goes without
  // being read, so damaging its bytes changes nothing.
  std::string second;
  {
    auto table = DeltaTable::Open(root);
    ASSERT_TRUE(table.ok());
    auto scan = (*(*table)->Latest())->NewScan().Filter("id >= 3").Build();
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    ASSERT_EQ((*scan)->files().size(), 1u);
    EXPECT_TRUE((*scan)->files()[0].all_rows_match);
    second = (*scan)->files()[0].path;
  }
  std::ofstream(second, std::ios::binary | std::ios::trunc) << "not parquet";
  auto r = WriteTable(root, Rows(IdName(), {Longs({5}), Strings({"E"})}), ReplaceWhere("id >= 3"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto commit = ReadCommit(root, *r->version);
  EXPECT_EQ(commit.removes, 1);
  EXPECT_TRUE(commit.cdc.empty());
  EXPECT_EQ(commit.operation_metrics["numDeletedRows"], "2");
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a", "2|b", "5|E"}));
}

TEST(ReplaceWhereChangeData, PartitionedTableWritesCdcFilesInPartitionFolders) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdNamePart(), {"part"});
  ASSERT_TRUE(WriteTable(root,
                         Rows(IdNamePart(), {Longs({1, 2, 3, 4}), Strings({"x1", "x2", "x3", "x4"}),
                                             Strings({"a", "a", "b", std::nullopt})}),
                         {})
                  .ok());
  // Partition a is rewritten in part (id 1 stays), b and the null partition are replaced whole.
  auto r = WriteTable(root,
                      Rows(IdNamePart(), {Longs({5, 6}), Strings({"n5", "n6"}),
                                          Strings({"b", std::nullopt})}),
                      ReplaceWhere("id >= 2"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto commit = ReadCommit(root, *r->version);
  ASSERT_FALSE(commit.cdc.empty());

  // Changes per partition value ("null" for the null partition), from the rows above.
  const std::map<std::string, std::multiset<std::string>> expected = {
      {"a", {"2|x2|delete"}},
      {"b", {"3|x3|delete", "5|n5|insert"}},
      {"null", {"4|x4|delete", "6|n6|insert"}},
  };
  std::map<std::string, std::multiset<std::string>> found;
  for (const auto& a : commit.cdc) {
    ASSERT_EQ(a.partition_values.size(), 1u) << a.path;
    ASSERT_TRUE(a.partition_values.count("part")) << a.path;
    const auto& value = a.partition_values.at("part");
    const std::string folder = "_change_data/part=" +
                               (value ? *value : std::string("__HIVE_DEFAULT_PARTITION__")) +
                               "/cdc-";
    EXPECT_EQ(a.path.rfind(folder, 0), 0u) << a.path;
    EXPECT_FALSE(a.data_change);
    // Partition columns are not stored in the files, as for data files.
    auto rows = CdcRows(root, {a}, {"id", "name", "_change_type"});
    found[value ? *value : "null"].insert(rows.begin(), rows.end());
  }
  EXPECT_EQ(found, expected);
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|x1|a", "5|n5|b", "6|n6|null"}));
}

TEST(ReplaceWhereChangeData, ColumnMappingWritesPhysicalNamesAndFieldIds) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName(), {}, {{"delta.columnMapping.mode", "name"}});
  ASSERT_TRUE(
      WriteTable(root, Rows(IdName(), {Longs({1, 2, 3}), Strings({"a", "b", "c"})}), {}).ok());
  auto r = WriteTable(root, Rows(IdName(), {Longs({2}), Strings({"B"})}), ReplaceWhere("id = 2"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snapshot = testing::Latest(root);
  ASSERT_TRUE(snapshot);
  std::vector<std::string> physical;
  std::vector<std::string> ids;
  for (const auto& f : snapshot->schema()->fields()) {
    auto id = FieldId(*f);
    ASSERT_TRUE(id.has_value()) << f->ToString(true);
    EXPECT_NE(PhysicalName(*f), f->name());
    physical.push_back(PhysicalName(*f));
    ids.push_back(std::to_string(*id));
  }
  physical.push_back("_change_type");

  auto commit = ReadCommit(root, *r->version);
  ASSERT_FALSE(commit.cdc.empty());
  for (const auto& a : commit.cdc) {
    EXPECT_EQ(a.path.rfind("_change_data/", 0), 0u) << a.path;
    auto table = ReadParquet(AbsolutePath(root, a.path));
    ASSERT_TRUE(table);
    EXPECT_EQ(ColumnNames(*table->schema()), physical);
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto& field = table->schema()->field(static_cast<int>(i));
      ASSERT_TRUE(field->metadata()) << field->ToString(true);
      auto field_id = field->metadata()->Get(std::string(kParquetFieldIdKey));
      ASSERT_TRUE(field_id.ok()) << field->ToString(true);
      EXPECT_EQ(*field_id, ids[i]);
    }
  }
  EXPECT_EQ(CdcRows(root, commit.cdc, physical),
            (std::multiset<std::string>{"2|b|delete", "2|B|insert"}));
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a", "2|B", "3|c"}));
}

TEST(ReplaceWhereChangeData, MergedSchemaAppliesToCopiedAndDeletedRows) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), {}).ok());
  auto wider = arrow::schema({arrow::field("id", arrow::int64(), false),
                              arrow::field("name", arrow::utf8()),
                              arrow::field("note", arrow::utf8())});
  WriteOptions merge = ReplaceWhere("id = 2");
  merge.merge_schema = true;
  auto r = WriteTable(root, Rows(wider, {Longs({2}), Strings({"B"}), Strings({"new"})}), merge);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto commit = ReadCommit(root, *r->version);
  EXPECT_EQ(CdcRows(root, commit.cdc, {"id", "name", "note", "_change_type"}),
            (std::multiset<std::string>{"2|b|null|delete", "2|B|new|insert"}));
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a|null", "2|B|new"}));
}

TEST(ReplaceWhereChangeData, FailedWriteLeavesNoChangeDataBehind) {
  TempDir dir;
  const std::string root = dir.str();
  CreateChangeDataFeedTable(root, IdName());
  ASSERT_TRUE(WriteTable(root, Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}), {}).ok());
  const auto log_before = LogListing(root);
  const auto files_before = DataFiles(root);
  // id 7 does not match the predicate, which fails the write after the partial rewrite of the
  // file (kept rows and change data already written).
  auto r = WriteTable(root, Rows(IdName(), {Longs({2, 7}), Strings({"B", "G"})}),
                      ReplaceWhere("id = 2"));
  EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kConstraintViolation))
      << r.status().ToString();
  EXPECT_EQ(LogListing(root), log_before);
  EXPECT_EQ(DataFiles(root), files_before);
  EXPECT_TRUE(ChangeDataFiles(root).empty());
}

TEST(ReplaceWhereChangeData, ReservedChangeTypeColumnIsRefused) {
  // deltacpp refuses to make such a table (see change_data_feed_columns_test.cc), so the log
  // of one written by another tool is built by hand: the feed on and a `_change_type` column.
  TempDir dir;
  const std::string root = dir.str();
  std::filesystem::create_directories(root + "/_delta_log");
  {
    std::ofstream out(root + "/_delta_log/" + CommitName(0));
    out << R"({"protocol":{"minReaderVersion":1,"minWriterVersion":4}})" << "\n"
        << R"({"metaData":{"id":"0b8c8f0e-5b1a-4c5e-9d7e-3f2a1b0c9d8e","format":{"provider":)"
        << R"("parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[)"
        << R"({\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},)"
        << R"({\"name\":\"_change_type\",\"type\":\"string\",\"nullable\":true,)"
        << R"(\"metadata\":{}}]}","partitionColumns":[],"configuration":)"
        << R"({"delta.enableChangeDataFeed":"true"},"createdTime":1700000000000}})" << "\n";
  }
  auto schema = arrow::schema(
      {arrow::field("id", arrow::int64()), arrow::field("_change_type", arrow::utf8())});
  ASSERT_TRUE(WriteTable(root, Rows(schema, {Longs({1, 2}), Strings({"a", "b"})}), {}).ok());
  const auto before = LogListing(root);
  auto r = WriteTable(root, Rows(schema, {Longs({2}), Strings({"B"})}), ReplaceWhere("id = 2"));
  EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kSchemaMismatch)) << r.status().ToString();
  EXPECT_NE(r.status().message().find("_change_type"), std::string::npos);
  EXPECT_NE(r.status().message().find(root), std::string::npos);
  EXPECT_EQ(LogListing(root), before);
}

}  // namespace
}  // namespace deltacpp
