// Mapping table columns onto file columns: column mapping by physical name, type widening on
// read, and columns added after older files were written.
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <filesystem>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

std::string MappedField(const std::string& name, const std::string& type_json, int id,
                        const std::string& physical) {
  return "{\"name\":" + JsonString(name) + ",\"type\":" + type_json +
         ",\"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":" + std::to_string(id) +
         ",\"delta.columnMapping.physicalName\":" + JsonString(physical) + "}}";
}

std::string StructJson(const std::vector<std::string>& fields) {
  std::string out = "{\"type\":\"struct\",\"fields\":[";
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  return out + "]}";
}

std::shared_ptr<arrow::Array> CityStruct(const std::string& child_name,
                                         const std::vector<std::optional<std::string>>& cities) {
  auto result = arrow::StructArray::Make({Strings(cities)}, {child_name});
  EXPECT_TRUE(result.ok());
  return *result;
}

// ---------------------------------------------------------------------------------------------
// Column mapping, name mode

class NameMappedTable : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    const std::string schema = StructJson(
        {MappedField("Id", "\"long\"", 1, "col-5f1a"),
         MappedField("full name", "\"string\"", 2, "col-9c2e"),
         MappedField("info",
                     StructJson({MappedField("city", "\"string\"", 4, "col-77b0")}), 3,
                     "col-3d4c")});
    ASSERT_TRUE(w.CreateWithSchemaString(schema, {},
                                         {{"delta.columnMapping.mode", "name"},
                                          {"delta.columnMapping.maxColumnId", "4"}},
                                         2, 5)
                    .ok());
    // Files hold the physical names. The first also has a stray column named like a logical
    // column, which must not be read.
    first_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"col-5f1a", Int64s({1, 2, 3})},
                                  {"col-9c2e", Strings({"ann", "bob", std::nullopt})},
                                  {"col-3d4c", CityStruct("col-77b0", {"Paris", "Oslo", "Rome"})},
                                  {"Id", Int64s({1001, 1002, 1003})}}))));
    second_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"col-5f1a", Int64s({11, 12, 13})},
                                  {"col-9c2e", Strings({"cy", "bob", "dee"})},
                                  {"col-3d4c", CityStruct("col-77b0", {"Lima", std::nullopt, "Paris"})}}))
               .WithMaxRowGroupRows(1)));
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
    ASSERT_EQ(snap_->column_mapping_mode(), ColumnMappingMode::kName);
  }

  std::vector<std::optional<std::string>> Cities(const arrow::Table& t) {
    std::vector<std::optional<std::string>> out;
    auto col = t.GetColumnByName("info");
    EXPECT_NE(col, nullptr);
    if (!col) return out;
    for (const auto& chunk : col->chunks()) {
      const auto& s = static_cast<const arrow::StructArray&>(*chunk);
      auto city = s.GetFieldByName("city");
      EXPECT_NE(city, nullptr) << s.type()->ToString();
      if (!city) return out;
      const auto& c = static_cast<const arrow::StringArray&>(*city);
      for (int64_t i = 0; i < s.length(); ++i) {
        if (s.IsNull(i) || c.IsNull(i)) {
          out.push_back(std::nullopt);
        } else {
          out.push_back(std::string(c.GetView(i)));
        }
      }
    }
    return out;
  }

  TempDir dir_;
  std::string first_, second_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(NameMappedTable, ScanReturnsLogicalNamesAndTheValuesOfThePhysicalColumns) {
  auto scan = Plan(*snap_);
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(FieldNames(*scan->schema()), (std::vector<std::string>{"Id", "full name", "info"}));
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"Id", "full name", "info"}));
  auto info_type = t->schema()->GetFieldByName("info")->type();
  ASSERT_EQ(info_type->num_fields(), 1);
  EXPECT_EQ(info_type->field(0)->name(), "city");

  auto ids = Int64Values(*t, "Id");
  auto names = StringValues(*t, "full name");
  auto cities = Cities(*t);
  ASSERT_EQ(ids.size(), 6u);
  ASSERT_EQ(names.size(), ids.size());
  ASSERT_EQ(cities.size(), ids.size());
  std::map<int64_t, std::pair<std::optional<std::string>, std::optional<std::string>>> expected = {
      {1, {"ann", "Paris"}}, {2, {"bob", "Oslo"}},          {3, {std::nullopt, "Rome"}},
      {11, {"cy", "Lima"}},  {12, {"bob", std::nullopt}}, {13, {"dee", "Paris"}}};
  std::map<int64_t, std::pair<std::optional<std::string>, std::optional<std::string>>> got;
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(ids[i].has_value());
    got[*ids[i]] = {names[i], cities[i]};
  }
  EXPECT_EQ(got, expected);
}

TEST_F(NameMappedTable, FilterOnLogicalNameSkipsByPhysicalStatistics) {
  auto scan = Plan(*snap_, {}, "Id > 10");
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(FileBaseNames(*scan), std::vector<std::string>{second_});
  EXPECT_EQ(scan->num_skipped_files(), 1);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(SortedIds(*t, "Id"), (std::vector<int64_t>{11, 12, 13}));
}

TEST_F(NameMappedTable, FiltersOnLogicalNamesSelectTheRightRows) {
  struct Case {
    std::string filter;
    std::vector<int64_t> ids;
  };
  for (const auto& c : std::vector<Case>{{"`full name` = 'bob'", {2, 12}},
                                         {"info.city = 'Paris'", {1, 13}},
                                         {"info.city IS NULL", {12}},
                                         {"id < 3 AND `FULL NAME` IS NOT NULL", {1, 2}},
                                         {"Id = 12", {12}},
                                         {"Id >= 1001", {}}}) {
    SCOPED_TRACE("filter: " + c.filter);
    auto scan = Plan(*snap_, {"Id"}, c.filter);
    ASSERT_NE(scan, nullptr);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(FieldNames(*t->schema()), std::vector<std::string>{"Id"});
    EXPECT_EQ(SortedIds(*t, "Id"), c.ids);
  }
}

TEST_F(NameMappedTable, ProjectionByLogicalNameIgnoresCase) {
  auto scan = Plan(*snap_, {"FULL NAME", "id"}, "id = 11");
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"full name", "Id"}));
  EXPECT_EQ(StringValues(*t, "full name"), (std::vector<std::optional<std::string>>{"cy"}));
}

// A partitioned name-mapped table: partitionValues are keyed by physical name.
TEST(NameMappedPartitionedTable, PartitionValuesAreFoundByPhysicalName) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  const std::string schema = StructJson({MappedField("Id", "\"long\"", 1, "col-a1"),
                                         MappedField("Region", "\"string\"", 2, "col-r2")});
  ASSERT_TRUE(w.CreateWithSchemaString(schema, {"Region"},
                                       {{"delta.columnMapping.mode", "name"},
                                        {"delta.columnMapping.maxColumnId", "2"}},
                                       2, 5)
                  .ok());
  std::vector<std::string> adds;
  const std::vector<std::pair<std::optional<std::string>, std::vector<std::optional<int64_t>>>> files =
      {{"EU", {1, 2}}, {"US", {3}}, {std::nullopt, {4}}};
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string rel = "xy" + std::to_string(i) + "/part-" + std::to_string(i) + ".parquet";
    std::filesystem::create_directories(dir.path() / ("xy" + std::to_string(i)));
    auto data = MakeTable({{"col-a1", Int64s(files[i].second)}});
    auto sink = arrow::io::FileOutputStream::Open((dir.path() / rel).string());
    ASSERT_TRUE(sink.ok());
    ASSERT_TRUE(parquet::arrow::WriteTable(*data, arrow::default_memory_pool(), *sink, 1024).ok());
    ASSERT_TRUE((*sink)->Close().ok());
    const auto size = std::filesystem::file_size(dir.path() / rel);
    const std::string value = files[i].first ? JsonString(*files[i].first) : "null";
    adds.push_back("{\"add\":{\"path\":" + JsonString(rel) + ",\"partitionValues\":{\"col-r2\":" +
                   value + "},\"size\":" + std::to_string(size) +
                   ",\"modificationTime\":1,\"dataChange\":true}}");
  }
  ASSERT_TRUE(w.CommitRaw(adds).ok());
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);

  auto all = Plan(*snap, {"Id", "Region"});
  ASSERT_NE(all, nullptr);
  auto t = Read(*all);
  ASSERT_NE(t, nullptr);
  auto ids = Int64Values(*t, "Id");
  auto regions = StringValues(*t, "Region");
  std::map<int64_t, std::optional<std::string>> got;
  for (size_t i = 0; i < ids.size() && i < regions.size(); ++i) got[ids[i].value_or(-1)] = regions[i];
  EXPECT_EQ(got, (std::map<int64_t, std::optional<std::string>>{
                     {1, "EU"}, {2, "EU"}, {3, "US"}, {4, std::nullopt}}));

  auto eu = Plan(*snap, {"Id"}, "region = 'EU'");
  ASSERT_NE(eu, nullptr);
  EXPECT_EQ(FileBaseNames(*eu), std::vector<std::string>{"part-0.parquet"});
  EXPECT_EQ(eu->num_skipped_files(), 2);
  auto eu_rows = Read(*eu);
  ASSERT_NE(eu_rows, nullptr);
  EXPECT_EQ(SortedIds(*eu_rows, "Id"), (std::vector<int64_t>{1, 2}));

  auto null_region = Plan(*snap, {"Id"}, "Region IS NULL");
  ASSERT_NE(null_region, nullptr);
  EXPECT_EQ(FileBaseNames(*null_region), std::vector<std::string>{"part-2.parquet"});
}

// ---------------------------------------------------------------------------------------------
// Type widening and added columns

TEST(TypeWidening, IntFileColumnReadsAsLongWhenTheSchemaSaysLong) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64()),
                                      arrow::field("v", arrow::int64())}))
                  .ok());
  std::string narrow = BaseName(AppendOne(
      w, FixtureFile(MakeTable({{"id", Int64s({1, 2, 3})}, {"v", Int32s({-7, std::nullopt, 2147483647})}}))
             .WithMaxRowGroupRows(2)));
  std::string wide = BaseName(AppendOne(
      w, FixtureFile(MakeTable({{"id", Int64s({4})}, {"v", Int64s({int64_t{3'000'000'000}})}}))));
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);

  auto scan = Plan(*snap);
  ASSERT_NE(scan, nullptr);
  EXPECT_TRUE(scan->schema()->GetFieldByName("v")->type()->Equals(arrow::int64()));
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  auto ids = Int64Values(*t, "id");
  auto v = Int64Values(*t, "v");  // fails unless the column is int64
  std::map<int64_t, std::optional<int64_t>> got;
  for (size_t i = 0; i < ids.size() && i < v.size(); ++i) got[ids[i].value_or(-1)] = v[i];
  EXPECT_EQ(got, (std::map<int64_t, std::optional<int64_t>>{
                     {1, -7}, {2, std::nullopt}, {3, 2147483647}, {4, 3'000'000'000}}));

  for (const auto& [filter, ids_expected, files_expected] :
       std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<std::string>>>{
           {"v > 2147483647", {4}, {wide}},
           {"v < 0", {1}, {narrow}},
           {"v = 2147483647", {3}, {narrow}},
           {"v IS NULL", {2}, {narrow}}}) {
    SCOPED_TRACE("filter: " + filter);
    auto filtered = Plan(*snap, {}, filter);
    ASSERT_NE(filtered, nullptr);
    EXPECT_EQ(FileBaseNames(*filtered), files_expected);
    auto rows = Read(*filtered);
    ASSERT_NE(rows, nullptr);
    EXPECT_EQ(SortedIds(*rows), ids_expected);
  }
}

class AddedColumn : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    ASSERT_TRUE(w.Create(arrow::schema({arrow::field("id", arrow::int64())})).ok());  // v0
    old_ = BaseName(AppendOne(w, FixtureFile(MakeTable({{"id", Int64s({1, 2})}}))));   // v1
    // v2: the schema gains a column.
    const std::string schema =
        "{\"type\":\"struct\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},"
        "{\"name\":\"extra\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";
    ASSERT_TRUE(w.CommitRaw({"{\"metaData\":{\"id\":" + JsonString(w.state().table_id) +
                             ",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
                             "\"schemaString\":" + JsonString(schema) +
                             ",\"partitionColumns\":[],\"configuration\":{},\"createdTime\":1}}"})
                    .ok());
    // v3: a file with the new column; v4: one with its columns in the other order.
    new_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"id", Int64s({3, 4})}, {"extra", Strings({"x", std::nullopt})}}))));
    reordered_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"extra", Strings({"y", "x"})}, {"id", Int64s({5, 6})}}))));
    table_ = *DeltaTable::Open(dir_.str());
  }

  TempDir dir_;
  std::string old_, new_, reordered_;
  std::shared_ptr<DeltaTable> table_;
};

TEST_F(AddedColumn, ColumnMissingFromAnOlderFileReadsAsNull) {
  auto snap = table_->Latest();
  ASSERT_TRUE(snap.ok());
  auto scan = Plan(**snap);
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(FieldNames(*scan->schema()), (std::vector<std::string>{"id", "extra"}));
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  auto ids = Int64Values(*t, "id");
  auto extra = StringValues(*t, "extra");
  std::map<int64_t, std::optional<std::string>> got;
  for (size_t i = 0; i < ids.size() && i < extra.size(); ++i) got[ids[i].value_or(-1)] = extra[i];
  EXPECT_EQ(got, (std::map<int64_t, std::optional<std::string>>{{1, std::nullopt},
                                                                  {2, std::nullopt},
                                                                  {3, "x"},
                                                                  {4, std::nullopt},
                                                                  {5, "y"},
                                                                  {6, "x"}}));
}

TEST_F(AddedColumn, FiltersOnTheAddedColumnTreatOlderFilesAsNull) {
  auto snap = table_->Latest();
  ASSERT_TRUE(snap.ok());
  struct Case {
    std::string filter;
    std::vector<int64_t> ids;
  };
  for (const auto& c : std::vector<Case>{{"extra IS NULL", {1, 2, 4}},
                                         {"extra = 'x'", {3, 6}},
                                         {"NOT (extra = 'x')", {5}},
                                         {"extra IS NOT NULL AND id > 3", {5, 6}}}) {
    SCOPED_TRACE("filter: " + c.filter);
    auto scan = Plan(**snap, {"id"}, c.filter);
    ASSERT_NE(scan, nullptr);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), c.ids);
  }
}

TEST_F(AddedColumn, VersionBeforeTheChangeHasTheOldSchema) {
  auto snap = table_->SnapshotAt(1);
  ASSERT_TRUE(snap.ok());
  auto scan = Plan(**snap);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), std::vector<std::string>{"id"});
  EXPECT_EQ(SortedIds(*t), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace deltacpp::scantest
