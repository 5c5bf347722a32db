// Data writer: partitions, physical columns, statistics, rollover, compression, abort, read-back.
#include <arrow/io/file.h>
#include <arrow/json/from_string.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "deltacpp/api.h"
#include "expr/file_stats.h"
#include "protocol/path_encoding.h"
#include "protocol/schema_json.h"
#include "scan/scan_test_util.h"
#include "write/data_writer.h"

namespace deltacpp::internal {
namespace {

namespace fs = std::filesystem;
using scantest::Dates;
using scantest::Days;
using scantest::Decimals;
using scantest::Doubles;
using scantest::Int32s;
using scantest::Int64s;
using scantest::Micros;
using scantest::Strings;
using scantest::Timestamps;
using testing::TempDir;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::shared_ptr<arrow::Array> Ntz(const std::vector<std::optional<int64_t>>& v) {
  arrow::TimestampBuilder b(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  return scantest::BuildArray(b, v);
}

std::shared_ptr<arrow::Array> FromJson(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto r = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : nullptr;
}

std::shared_ptr<arrow::RecordBatch> Batch(const std::shared_ptr<arrow::Schema>& schema,
                                          arrow::ArrayVector columns) {
  const int64_t rows = columns.empty() ? 0 : columns.front()->length();
  return arrow::RecordBatch::Make(schema, rows, std::move(columns));
}

// Field metadata as SchemaFromDeltaJson produces it (values are JSON text).
std::shared_ptr<arrow::Field> Mapped(std::shared_ptr<arrow::Field> field, int id, const std::string& physical) {
  return field->WithMetadata(arrow::key_value_metadata(
      {std::string(kColumnIdKey), std::string(kPhysicalNameKey)}, {std::to_string(id), "\"" + physical + "\""}));
}

DataWriterOptions Options(const std::string& root, std::shared_ptr<arrow::Schema> schema,
                          std::vector<std::string> partitions = {}) {
  DataWriterOptions o;
  o.table_root = root;
  o.table_schema = std::move(schema);
  o.partition_columns = std::move(partitions);
  return o;
}

std::vector<AddFile> WriteAll(DataWriterOptions options,
                              const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  auto writer = DataWriter::Make(std::move(options));
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return {};
  for (const auto& b : batches) {
    auto st = (*writer)->Write(b);
    EXPECT_TRUE(st.ok()) << st;
  }
  auto adds = (*writer)->Finish();
  EXPECT_TRUE(adds.ok()) << adds.status();
  return adds.ok() ? *adds : std::vector<AddFile>{};
}

std::string FilePath(const std::string& root, const AddFile& add) { return root + "/" + UriDecodePath(add.path); }

struct ParquetFile {
  std::shared_ptr<arrow::Table> table;
  std::shared_ptr<parquet::FileMetaData> metadata;
};

ParquetFile ReadParquet(const std::string& path) {
  ParquetFile out;
  auto file = arrow::io::ReadableFile::Open(path);
  EXPECT_TRUE(file.ok()) << path << ": " << file.status();
  if (!file.ok()) return out;
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  auto table = (*reader)->ReadTable();
  EXPECT_TRUE(table.ok()) << table.status();
  if (table.ok()) out.table = *table;
  out.metadata = (*reader)->parquet_reader()->metadata();
  return out;
}

std::vector<std::string> ParquetFilesUnder(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".parquet") out.push_back(e.path().string());
  }
  return out;
}

// The values of a column as text, one entry per row (independent of chunking and of the field
// names inside lists and maps, which Parquet round trips rename).
std::vector<std::string> Cells(const arrow::Table& table, const std::string& column) {
  std::vector<std::string> out;
  auto c = table.GetColumnByName(column);
  EXPECT_NE(c, nullptr) << "no column " << column << " in " << table.schema()->ToString();
  if (!c) return out;
  for (const auto& chunk : c->chunks()) {
    for (int64_t i = 0; i < chunk->length(); ++i) {
      auto s = chunk->GetScalar(i);
      std::string text = s.ok() ? (*s)->ToString() : "?";
      const auto id = chunk->type_id();
      if ((id == arrow::Type::LIST || id == arrow::Type::MAP) && text.find('[') != std::string::npos) {
        text = text.substr(text.find('['));
      }
      out.push_back(text);
    }
  }
  return out;
}

std::shared_ptr<arrow::Table> SortById(const std::shared_ptr<arrow::Table>& table) {
  auto indices = arrow::compute::SortIndices(arrow::Datum(table), arrow::compute::SortOptions(
                                                                      {arrow::compute::SortKey("id")}));
  EXPECT_TRUE(indices.ok()) << indices.status();
  auto sorted = arrow::compute::Take(table, *indices);
  EXPECT_TRUE(sorted.ok()) << sorted.status();
  return sorted->table();
}

// ---------------------------------------------------------------------------------------------
// Unpartitioned files

TEST(DataWriter, UnpartitionedFileHoldsTheRows) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8()),
                               arrow::field("score", arrow::float64()),
                               arrow::field("tags", arrow::list(arrow::field("element", arrow::utf8()))),
                               arrow::field("m", arrow::map(arrow::utf8(), arrow::int32()))});
  auto b1 = Batch(schema, {Int64s({1, 2, 3}), Strings({"a", std::nullopt, "c"}), Doubles({1.5, 2.5, std::nullopt}),
                           FromJson(schema->field(3)->type(), R"([["x", "y"], null, []])"),
                           FromJson(schema->field(4)->type(), R"([[["k", 1]], null, [["a", 2], ["b", null]]])")});
  auto b2 = Batch(schema, {Int64s({4, 5}), Strings({"d", "e"}), Doubles({4.5, -1}),
                           FromJson(schema->field(3)->type(), R"([["z"], null])"),
                           FromJson(schema->field(4)->type(), R"([null, []])")});
  const int64_t before = NowMs();
  auto adds = WriteAll(Options(dir.str(), schema), {b1, b2});
  const int64_t after = NowMs();
  ASSERT_EQ(adds.size(), 1u);
  const AddFile& add = adds[0];
  EXPECT_TRUE(std::regex_match(add.path, std::regex(R"(part-00000-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.c000\.snappy\.parquet)")))
      << add.path;
  EXPECT_TRUE(add.partition_values.empty());
  EXPECT_TRUE(add.data_change);
  EXPECT_GE(add.modification_time, before);
  EXPECT_LE(add.modification_time, after);
  EXPECT_EQ(add.size, static_cast<int64_t>(fs::file_size(FilePath(dir.str(), add))));
  ASSERT_TRUE(add.stats.has_value());
  EXPECT_NE(add.stats->find("\"numRecords\":5"), std::string::npos) << *add.stats;

  auto file = ReadParquet(FilePath(dir.str(), add));
  ASSERT_NE(file.table, nullptr);
  EXPECT_EQ(file.table->num_rows(), 5);
  ASSERT_EQ(file.table->num_columns(), 5);
  auto input = *arrow::Table::FromRecordBatches({b1, b2});
  for (const auto& f : schema->fields()) {
    EXPECT_EQ(Cells(*file.table, f->name()), Cells(*input, f->name())) << f->name();
  }
  // Spark-style files: every column optional, no Arrow schema blob.
  for (const auto& f : file.table->schema()->fields()) EXPECT_TRUE(f->nullable()) << f->name();
  EXPECT_FALSE(file.metadata->key_value_metadata() &&
               file.metadata->key_value_metadata()->Contains("ARROW:schema"));
}

TEST(DataWriter, DataChangeFalseAndEmptyBatches) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  auto options = Options(dir.str(), schema);
  options.data_change = false;
  auto adds = WriteAll(options, {Batch(schema, {Int64s({})}), Batch(schema, {Int64s({7})})});
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_FALSE(adds[0].data_change);
  // Nothing written, nothing returned.
  TempDir empty;
  EXPECT_TRUE(WriteAll(Options(empty.str(), schema), {Batch(schema, {Int64s({})})}).empty());
  EXPECT_TRUE(ParquetFilesUnder(empty.str()).empty());
}

TEST(DataWriter, TimestampsAreInt64Micros) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                               arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO))});
  auto adds = WriteAll(Options(dir.str(), schema),
                       {Batch(schema, {Timestamps({Micros(2024, 1, 15, 10, 0, 0, 123456)}),
                                       Ntz({Micros(2024, 1, 15, 10, 0, 0, 654321)})})});
  ASSERT_EQ(adds.size(), 1u);
  auto file = ReadParquet(FilePath(dir.str(), adds[0]));
  ASSERT_NE(file.metadata, nullptr);
  const auto* ts = file.metadata->schema()->Column(0);
  const auto* ntz = file.metadata->schema()->Column(1);
  for (const auto* column : {ts, ntz}) {
    EXPECT_EQ(column->physical_type(), parquet::Type::INT64);
    ASSERT_TRUE(column->logical_type()->is_timestamp());
    EXPECT_EQ(static_cast<const parquet::TimestampLogicalType&>(*column->logical_type()).time_unit(),
              parquet::LogicalType::TimeUnit::MICROS);
  }
  EXPECT_TRUE(static_cast<const parquet::TimestampLogicalType&>(*ts->logical_type()).is_adjusted_to_utc());
  EXPECT_FALSE(static_cast<const parquet::TimestampLogicalType&>(*ntz->logical_type()).is_adjusted_to_utc());
  EXPECT_EQ(Cells(*file.table, "ts"), (std::vector<std::string>{"2024-01-15 10:00:00.123456Z"}));
  EXPECT_EQ(Cells(*file.table, "ntz"), (std::vector<std::string>{"2024-01-15 10:00:00.654321"}));
}

// ---------------------------------------------------------------------------------------------
// Partitions

struct PartitionRow {
  int64_t id;
  std::optional<std::string> p;
  std::optional<int32_t> n;
};

const std::string kUnicode = "\xC3\xBCn\xC3\xAF \xE6\x9D\xB1\xE4\xBA\xAC";

TEST(DataWriter, PartitionedRowsGoToHiveFolders) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("p", arrow::utf8()),
                               arrow::field("n", arrow::int32())});
  const std::vector<PartitionRow> rows = {
      {1, "a b", 1},  {2, "x/y", 1},    {3, "k=v", 1},    {4, "50%", 2},        {5, "#h", 2},
      {6, kUnicode, 2}, {7, "", 3},      {8, std::nullopt, 3}, {9, "a b", 1},   {10, "a b", std::nullopt},
      {11, "x/y", 1}, {12, "", 3}};
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> ps;
  std::vector<std::optional<int32_t>> ns;
  for (const auto& r : rows) {
    ids.push_back(r.id);
    ps.push_back(r.p);
    ns.push_back(r.n);
  }
  auto batch = Batch(schema, {Int64s(ids), Strings(ps), Int32s(ns)});
  // Two slices (non-zero offsets); a partition's rows from both land in one file.
  auto adds = WriteAll(Options(dir.str(), schema, {"p", "n"}), {batch->Slice(0, 6), batch->Slice(6)});

  // Expected: partition values -> ids. An empty string is NULL, so rows 7, 8 and 12 share a file.
  using Key = std::pair<std::optional<std::string>, std::optional<std::string>>;
  std::map<Key, std::set<int64_t>> expected;
  for (const auto& r : rows) {
    std::optional<std::string> p = r.p && !r.p->empty() ? r.p : std::nullopt;
    std::optional<std::string> n = r.n ? std::optional<std::string>(std::to_string(*r.n)) : std::nullopt;
    expected[{p, n}].insert(r.id);
  }
  ASSERT_EQ(adds.size(), expected.size());
  std::map<Key, std::set<int64_t>> actual;
  for (const auto& add : adds) {
    ASSERT_EQ(add.partition_values.size(), 2u);
    Key key{add.partition_values.at("p"), add.partition_values.at("n")};
    const std::string folder = "p=" + (key.first ? EscapePartitionValueForPath(*key.first) : "__HIVE_DEFAULT_PARTITION__") +
                               "/n=" + (key.second ? *key.second : "__HIVE_DEFAULT_PARTITION__") + "/";
    const std::string name = fs::path(add.path).filename().string();
    EXPECT_EQ(add.path, UriEncodePath(folder + name));
    EXPECT_TRUE(std::regex_match(name, std::regex(R"(part-\d{5}-[0-9a-f-]{36}\.c000\.snappy\.parquet)"))) << name;
    EXPECT_TRUE(fs::exists(dir.path() / fs::u8path(folder + name))) << folder + name;

    auto file = ReadParquet(FilePath(dir.str(), add));
    ASSERT_NE(file.table, nullptr);
    // Partition columns are not stored in the files.
    ASSERT_EQ(file.table->num_columns(), 1);
    EXPECT_EQ(file.table->schema()->field(0)->name(), "id");
    auto file_ids = scantest::Values<arrow::Int64Array, int64_t>(*file.table, "id", arrow::int64());
    for (const auto& id : file_ids) {
      if (id) actual[key].insert(*id);
    }
  }
  EXPECT_EQ(actual, expected);

  // The escaping, spelled out for a few values.
  std::set<std::string> folders;
  for (const auto& add : adds) folders.insert(add.path.substr(0, add.path.rfind('/') + 1));
  EXPECT_TRUE(folders.count("p=a%20b/n=1/"));
  EXPECT_TRUE(folders.count("p=x%252Fy/n=1/"));
  EXPECT_TRUE(folders.count("p=k%253Dv/n=1/"));
  EXPECT_TRUE(folders.count("p=50%2525/n=2/"));
  EXPECT_TRUE(folders.count("p=%2523h/n=2/"));
  EXPECT_TRUE(folders.count("p=" + kUnicode.substr(0, kUnicode.find(' ')) + "%20" +
                            kUnicode.substr(kUnicode.find(' ') + 1) + "/n=2/"));
  EXPECT_TRUE(folders.count("p=__HIVE_DEFAULT_PARTITION__/n=3/"));
  EXPECT_TRUE(folders.count("p=a%20b/n=__HIVE_DEFAULT_PARTITION__/"));
}

TEST(DataWriter, TypedPartitionValues) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("d", arrow::date32()),
                               arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                               arrow::field("dec", arrow::decimal128(5, 2)), arrow::field("b", arrow::boolean())});
  auto batch = Batch(schema, {Int64s({1, 2}), Dates({Days(2024, 1, 15), std::nullopt}),
                              Timestamps({Micros(2024, 1, 15, 10, 30, 0), Micros(2024, 1, 15, 10, 30, 0, 500)}),
                              Decimals(5, 2, {150, -5}), FromJson(arrow::boolean(), "[true, false]")});
  auto adds = WriteAll(Options(dir.str(), schema, {"d", "ts", "dec", "b"}), {batch});
  ASSERT_EQ(adds.size(), 2u);
  using Values = std::map<std::string, std::optional<std::string>>;
  EXPECT_EQ(adds[0].partition_values, (Values{{"d", "2024-01-15"}, {"ts", "2024-01-15 10:30:00"},
                                              {"dec", "1.50"}, {"b", "true"}}));
  EXPECT_EQ(adds[1].partition_values, (Values{{"d", std::nullopt}, {"ts", "2024-01-15 10:30:00.0005"},
                                              {"dec", "-0.05"}, {"b", "false"}}));
  EXPECT_EQ(adds[0].path.substr(0, adds[0].path.rfind('/') + 1),
            "d=2024-01-15/ts=2024-01-15%2010%253A30%253A00/dec=1.50/b=true/");
}

// ---------------------------------------------------------------------------------------------
// Column mapping

class ColumnMappingWrite : public ::testing::TestWithParam<ColumnMappingMode> {};

std::shared_ptr<arrow::Schema> MappedSchema() {
  auto x = Mapped(arrow::field("x", arrow::int32()), 4, "col-x");
  return arrow::schema({Mapped(arrow::field("id", arrow::int64()), 1, "col-id"),
                        Mapped(arrow::field("p", arrow::utf8()), 2, "col-p"),
                        Mapped(arrow::field("s", arrow::struct_({x})), 3, "col-s")});
}

TEST_P(ColumnMappingWrite, PhysicalNamesFieldIdsAndRandomPrefixes) {
  TempDir dir;
  auto schema = MappedSchema();
  auto options = Options(dir.str(), schema, {"p"});
  options.column_mapping_mode = GetParam();
  auto batch = Batch(schema, {Int64s({1, 2, 3}), Strings({"a", "b", "a"}),
                              FromJson(schema->field(2)->type(), R"([{"x": 10}, null, {"x": 30}])")});
  auto adds = WriteAll(options, {batch});
  ASSERT_EQ(adds.size(), 2u);
  std::set<std::optional<std::string>> values;
  for (const auto& add : adds) {
    // `<2 random characters>/part-...`, no Hive folders.
    EXPECT_TRUE(std::regex_match(add.path, std::regex(R"([0-9A-Za-z]{2}/part-\d{5}-[0-9a-f-]{36}\.c000\.snappy\.parquet)")))
        << add.path;
    ASSERT_EQ(add.partition_values.size(), 1u);
    ASSERT_TRUE(add.partition_values.count("col-p"));
    values.insert(add.partition_values.at("col-p"));
    ASSERT_TRUE(add.stats.has_value());
    EXPECT_NE(add.stats->find("\"minValues\":{\"col-id\":"), std::string::npos) << *add.stats;
    EXPECT_NE(add.stats->find("\"col-s\":{\"col-x\":"), std::string::npos) << *add.stats;

    auto file = ReadParquet(FilePath(dir.str(), add));
    ASSERT_NE(file.table, nullptr);
    const auto& fields = file.table->schema()->fields();
    ASSERT_EQ(fields.size(), 2u);
    EXPECT_EQ(fields[0]->name(), "col-id");
    EXPECT_EQ(fields[1]->name(), "col-s");
    ASSERT_EQ(fields[1]->type()->num_fields(), 1);
    EXPECT_EQ(fields[1]->type()->field(0)->name(), "col-x");
    // Parquet field ids carry the column ids.
    const auto* root = file.metadata->schema()->group_node();
    ASSERT_EQ(root->field_count(), 2);
    EXPECT_EQ(root->field(0)->field_id(), 1);
    EXPECT_EQ(root->field(1)->field_id(), 3);
    EXPECT_EQ(static_cast<const parquet::schema::GroupNode&>(*root->field(1)).field(0)->field_id(), 4);
  }
  EXPECT_EQ(values, (std::set<std::optional<std::string>>{"a", "b"}));
}

INSTANTIATE_TEST_SUITE_P(Modes, ColumnMappingWrite,
                         ::testing::Values(ColumnMappingMode::kName, ColumnMappingMode::kId),
                         [](const auto& info) { return info.param == ColumnMappingMode::kId ? "Id" : "Name"; });

TEST(DataWriter, NoMappingKeepsLogicalNamesAndHiveFolders) {
  TempDir dir;
  auto schema = MappedSchema();  // physical names present in metadata, but mapping is off
  auto batch = Batch(schema, {Int64s({1}), Strings({"a"}), FromJson(schema->field(2)->type(), R"([{"x": 1}])")});
  auto adds = WriteAll(Options(dir.str(), schema, {"p"}), {batch});
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_EQ(adds[0].path.substr(0, 4), "p=a/");
  EXPECT_TRUE(adds[0].partition_values.count("p"));
  auto file = ReadParquet(FilePath(dir.str(), adds[0]));
  ASSERT_NE(file.table, nullptr);
  EXPECT_EQ(file.table->schema()->field(0)->name(), "id");
  EXPECT_EQ(file.metadata->schema()->group_node()->field(0)->field_id(), -1);
}

// ---------------------------------------------------------------------------------------------
// Statistics

TEST(DataWriterStats, ExactJsonForEveryKindOfColumn) {
  TempDir dir;
  auto st_type = arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("y", arrow::utf8())});
  auto schema = arrow::schema({
      arrow::field("i8", arrow::int8()), arrow::field("i64", arrow::int64()), arrow::field("f", arrow::float32()),
      arrow::field("d", arrow::float64()), arrow::field("s", arrow::utf8()), arrow::field("dt", arrow::date32()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)), arrow::field("dec", arrow::decimal128(10, 2)),
      arrow::field("b", arrow::boolean()), arrow::field("bin", arrow::binary()), arrow::field("st", st_type),
      arrow::field("arr", arrow::list(arrow::int32()))});
  auto all = Batch(schema, {
      FromJson(arrow::int8(), "[1, -5, null]"), Int64s({100, 7, 3000000000LL}),
      FromJson(arrow::float32(), "[1.5, -0.25, null]"), Doubles({2.5, 1e300, -3.0}),
      Strings({"banana", "apple", std::nullopt}), Dates({Days(2024, 1, 15), Days(1969, 12, 31), std::nullopt}),
      Timestamps({Micros(2024, 1, 15, 10, 0, 0, 123456), Micros(2024, 1, 15, 10, 0, 0, 999999), -1}),
      Ntz({Micros(2024, 1, 15, 10, 0, 0, 123456), std::nullopt, Micros(2000, 1, 1)}),
      Decimals(10, 2, {12345, -50, std::nullopt}), FromJson(arrow::boolean(), "[true, false, null]"),
      FromJson(arrow::binary(), R"(["a", null, "x"])"),
      FromJson(st_type, R"([{"x": 1, "y": "q"}, null, {"x": 3, "y": null}])"),
      FromJson(arrow::list(arrow::int32()), "[[1, 2], null, []]")});
  // Two batches: the statistics merge across them.
  auto adds = WriteAll(Options(dir.str(), schema), {all->Slice(0, 2), all->Slice(2)});
  ASSERT_EQ(adds.size(), 1u);
  ASSERT_TRUE(adds[0].stats.has_value());
  EXPECT_EQ(*adds[0].stats,
            R"({"numRecords":3,)"
            R"("minValues":{"i8":-5,"i64":7,"f":-0.25,"d":-3,"s":"apple","dt":"1969-12-31",)"
            R"("ts":"1969-12-31T23:59:59.999Z","ntz":"2000-01-01T00:00:00.000","dec":-0.50,"st":{"x":1,"y":"q"}},)"
            R"("maxValues":{"i8":1,"i64":3000000000,"f":1.5,"d":1e+300,"s":"banana","dt":"2024-01-15",)"
            R"("ts":"2024-01-15T10:00:00.999Z","ntz":"2024-01-15T10:00:00.123","dec":123.45,"st":{"x":3,"y":"q"}},)"
            R"("nullCount":{"i8":1,"i64":0,"f":1,"d":0,"s":1,"dt":1,"ts":0,"ntz":1,"dec":1,"b":1,"bin":1,)"
            R"("st":{"x":1,"y":2},"arr":1},"tightBounds":true})");

  // The reader's statistics parser understands every value.
  auto parsed = ParseStatsJson(*adds[0].stats, *schema);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->num_records, 3);
  EXPECT_EQ(parsed->tight_bounds, true);
  auto stat = [&](const std::string& key) { return parsed->columns.at(key); };
  EXPECT_EQ(stat("ts").min->ToString(), "1969-12-31 23:59:59.999000Z");
  EXPECT_EQ(stat("ts").max->ToString(), "2024-01-15 10:00:00.999000Z");
  EXPECT_EQ(stat("ntz").max->ToString(), "2024-01-15 10:00:00.123000");
  EXPECT_EQ(stat("dec").min->ToString(), "-0.50");
  EXPECT_EQ(stat("dec").max->ToString(), "123.45");
  EXPECT_EQ(stat("dt").min->ToString(), "1969-12-31");
  EXPECT_EQ(stat("st.y").null_count, 2);
  EXPECT_EQ(stat("arr").null_count, 1);
  EXPECT_EQ(stat("b").min, nullptr);
}

TEST(DataWriterStats, StringTruncationNaNAndInfinity) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("s", arrow::utf8()), arrow::field("t", arrow::utf8()),
                               arrow::field("nan", arrow::float64()), arrow::field("inf", arrow::float64()),
                               arrow::field("all_null", arrow::int32())});
  const std::string a40(40, 'a');
  const std::string z_accent = std::string(32, 'z') + "\xC3\xA9tude";
  const std::string m_tail = std::string(32, 'm') + "nop";
  auto batch = Batch(schema, {Strings({a40, z_accent}), Strings({m_tail, "b"}),
                              Doubles({1.0, std::nan("")}),
                              Doubles({-std::numeric_limits<double>::infinity(), 2.0}),
                              Int32s({std::nullopt, std::nullopt})});
  auto adds = WriteAll(Options(dir.str(), schema), {batch});
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_EQ(*adds[0].stats, R"({"numRecords":2,"minValues":{"s":")" + std::string(32, 'a') + R"(","t":"b"},)" +
                                R"("maxValues":{"s":")" + std::string(32, 'z') + "\xF4\x8F\xBF\xBF" +
                                R"(","t":")" + std::string(32, 'm') + "\x7F" + R"(","inf":2},)" +
                                R"("nullCount":{"s":0,"t":0,"nan":0,"inf":0,"all_null":2},"tightBounds":true})");
}

TEST(DataWriterStats, IndexedColumnsAndStatsColumns) {
  TempDir dir;
  auto a_type = arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("y", arrow::int32())});
  auto schema = arrow::schema({arrow::field("p", arrow::utf8()), arrow::field("a", a_type),
                               arrow::field("b", arrow::int32()), arrow::field("c", arrow::int32())});
  auto batch = Batch(schema, {Strings({"k"}), FromJson(a_type, R"([{"x": 1, "y": 2}])"), Int32s({3}), Int32s({4})});
  auto stats_for = [&](int32_t n, std::optional<std::vector<std::string>> columns) {
    TempDir d;
    auto options = Options(d.str(), schema, {"p"});
    options.num_indexed_cols = n;
    options.stats_columns = std::move(columns);
    auto adds = WriteAll(options, {batch});
    return adds.size() == 1 && adds[0].stats ? *adds[0].stats : std::string("<none>");
  };
  // The partition column does not count towards the first N.
  EXPECT_EQ(stats_for(2, std::nullopt),
            R"({"numRecords":1,"minValues":{"a":{"x":1,"y":2}},"maxValues":{"a":{"x":1,"y":2}},)"
            R"("nullCount":{"a":{"x":0,"y":0}},"tightBounds":true})");
  EXPECT_EQ(stats_for(3, std::nullopt),
            R"({"numRecords":1,"minValues":{"a":{"x":1,"y":2},"b":3},"maxValues":{"a":{"x":1,"y":2},"b":3},)"
            R"("nullCount":{"a":{"x":0,"y":0},"b":0},"tightBounds":true})");
  EXPECT_EQ(stats_for(0, std::nullopt),
            R"({"numRecords":1,"minValues":{},"maxValues":{},"nullCount":{},"tightBounds":true})");
  EXPECT_EQ(stats_for(-1, std::nullopt),
            R"({"numRecords":1,"minValues":{"a":{"x":1,"y":2},"b":3,"c":4},"maxValues":{"a":{"x":1,"y":2},"b":3,"c":4},)"
            R"("nullCount":{"a":{"x":0,"y":0},"b":0,"c":0},"tightBounds":true})");
  // stats_columns overrides num_indexed_cols; schema order; partition columns ignored.
  EXPECT_EQ(stats_for(0, std::vector<std::string>{"c", "a.y", "p"}),
            R"({"numRecords":1,"minValues":{"a":{"y":2},"c":4},"maxValues":{"a":{"y":2},"c":4},)"
            R"("nullCount":{"a":{"y":0},"c":0},"tightBounds":true})");

  auto options = Options(dir.str(), schema, {"p"});
  options.stats_columns = std::vector<std::string>{"nope"};
  EXPECT_TRUE(IsDeltaError(DataWriter::Make(options).status(), DeltaErrorCode::kInvalidArgument));
}

// ---------------------------------------------------------------------------------------------
// File size, compression, layout rules

std::shared_ptr<arrow::RecordBatch> PayloadBatch(const std::shared_ptr<arrow::Schema>& schema, int64_t first,
                                                 int64_t rows) {
  arrow::Int64Builder ids;
  arrow::StringBuilder payload;
  uint64_t state = static_cast<uint64_t>(first) * 0x9E3779B97F4A7C15ULL + 1;
  for (int64_t i = 0; i < rows; ++i) {
    EXPECT_TRUE(ids.Append(first + i).ok());
    std::string text;
    for (int k = 0; k < 4; ++k) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      text += fmt::format("{:016x}", state);
    }
    EXPECT_TRUE(payload.Append(text).ok());
  }
  return Batch(schema, {*ids.Finish(), *payload.Finish()});
}

TEST(DataWriter, RollsOverAtTheTargetSize) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("payload", arrow::utf8())});
  auto options = Options(dir.str(), schema);
  options.target_file_size = 256 * 1024;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  const int64_t kRows = 40000;
  for (int64_t first = 0; first < kRows; first += 4000) batches.push_back(PayloadBatch(schema, first, 4000));
  auto adds = WriteAll(options, batches);
  ASSERT_GE(adds.size(), 4u);
  int64_t total = 0;
  std::set<int64_t> ids;
  for (size_t i = 0; i < adds.size(); ++i) {
    const auto& add = adds[i];
    EXPECT_EQ(add.path.substr(0, 11), fmt::format("part-{:05d}-", i));
    auto parsed = ParseStatsJson(*add.stats, *schema);
    ASSERT_TRUE(parsed.ok());
    total += *parsed->num_records;
    // Every file but the last reached the target; none overshoots by more than a row group.
    // (Unless several files of the partition were encoding at once: then those left open at
    // the end may all be short; this test's batches go faster than that rarely does.)
    if (i + 1 < adds.size()) {
      EXPECT_GE(add.size, options.target_file_size) << add.path;
    }
    EXPECT_LT(add.size, 2 * options.target_file_size + 64 * 1024) << add.path;
    auto file = ReadParquet(FilePath(dir.str(), add));
    ASSERT_NE(file.table, nullptr);
    EXPECT_EQ(file.table->num_rows(), *parsed->num_records);
    EXPECT_GE(file.metadata->num_row_groups(), 1);
    for (const auto& id : scantest::Values<arrow::Int64Array, int64_t>(*file.table, "id", arrow::int64())) {
      if (id) ids.insert(*id);
    }
  }
  EXPECT_EQ(total, kRows);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(*ids.begin(), 0);
  EXPECT_EQ(*ids.rbegin(), kRows - 1);
}

// Rows arriving faster than one file encodes (gzip, batches already in memory) go to another
// file of the partition while the first encodes: the row groups interleave across files, and
// each file's statistics are those of the rows it holds.
TEST(DataWriter, EncodesSeveralFilesOfOnePartitionAtOnce) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: one file at a time";
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("payload", arrow::utf8())});
  auto options = Options(dir.str(), schema);
  options.target_file_size = 16 * 1024 * 1024;
  options.row_group_bytes = 256 * 1024;
  options.compression = "gzip";
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  const int64_t kRows = 160000;
  for (int64_t first = 0; first < kRows; first += 4000) batches.push_back(PayloadBatch(schema, first, 4000));
  auto adds = WriteAll(options, batches);
  ASSERT_GE(adds.size(), 2u);
  std::set<int64_t> ids;
  bool interleaved = false;
  for (const auto& add : adds) {
    auto parsed = ParseStatsJson(*add.stats, *schema);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto file = ReadParquet(FilePath(dir.str(), add));
    ASSERT_NE(file.table, nullptr);
    EXPECT_EQ(file.table->num_rows(), *parsed->num_records) << add.path;
    int64_t lo = INT64_MAX, hi = INT64_MIN, count = 0;
    for (const auto& id : scantest::Values<arrow::Int64Array, int64_t>(*file.table, "id", arrow::int64())) {
      ASSERT_TRUE(id.has_value());
      lo = std::min(lo, *id);
      hi = std::max(hi, *id);
      ++count;
      EXPECT_TRUE(ids.insert(*id).second) << "row " << *id << " written twice";
    }
    const auto& id_stats = parsed->columns.at("id");
    EXPECT_EQ(id_stats.min->ToString(), std::to_string(lo)) << add.path;
    EXPECT_EQ(id_stats.max->ToString(), std::to_string(hi)) << add.path;
    if (hi - lo + 1 != count) interleaved = true;
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kRows));
  EXPECT_TRUE(interleaved) << "every file holds one contiguous run of rows: no second file "
                              "received rows while the first encoded";
}

TEST(DataWriter, CompressionOption) {
  struct Case {
    std::string option;
    parquet::Compression::type codec;
    std::string suffix;
  };
  const std::vector<Case> cases = {{"snappy", parquet::Compression::SNAPPY, ".c000.snappy.parquet"},
                                   {"ZSTD", parquet::Compression::ZSTD, ".c000.zstd.parquet"},
                                   {"gzip", parquet::Compression::GZIP, ".c000.gz.parquet"},
                                   {"uncompressed", parquet::Compression::UNCOMPRESSED, ".c000.parquet"}};
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("payload", arrow::utf8())});
  for (const auto& c : cases) {
    TempDir dir;
    auto options = Options(dir.str(), schema);
    options.compression = c.option;
    auto adds = WriteAll(options, {PayloadBatch(schema, 0, 100)});
    ASSERT_EQ(adds.size(), 1u) << c.option;
    EXPECT_EQ(adds[0].path.substr(adds[0].path.size() - c.suffix.size()), c.suffix);
    auto file = ReadParquet(FilePath(dir.str(), adds[0]));
    ASSERT_NE(file.metadata, nullptr);
    for (int col = 0; col < 2; ++col) {
      EXPECT_EQ(file.metadata->RowGroup(0)->ColumnChunk(col)->compression(), c.codec) << c.option;
    }
  }
  TempDir dir;
  auto options = Options(dir.str(), schema);
  options.compression = "lzo";
  EXPECT_TRUE(IsDeltaError(DataWriter::Make(options).status(), DeltaErrorCode::kInvalidArgument));
}

TEST(DataWriter, VoidColumnsAreNotWritten) {
  TempDir dir;
  auto s_type = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("z", arrow::null())});
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::null()),
                               arrow::field("s", s_type)});
  auto batch = Batch(schema, {Int64s({1, 2}), *arrow::MakeArrayOfNull(arrow::null(), 2),
                              FromJson(s_type, R"([{"a": 1, "z": null}, null])")});
  auto adds = WriteAll(Options(dir.str(), schema), {batch});
  ASSERT_EQ(adds.size(), 1u);
  auto file = ReadParquet(FilePath(dir.str(), adds[0]));
  ASSERT_NE(file.table, nullptr);
  EXPECT_EQ(file.table->schema()->ToString(), "id: int64\ns: struct<a: int32>");
  EXPECT_EQ(Cells(*file.table, "s"), (std::vector<std::string>{"{a:int32 = 1}", "null"}));
  EXPECT_NE(adds[0].stats->find(R"("nullCount":{"id":0,"s":{"a":1}})"), std::string::npos) << *adds[0].stats;

  for (const auto& bad : {arrow::schema({arrow::field("v", arrow::null())}),
                          arrow::schema({arrow::field("l", arrow::list(arrow::null()))}),
                          arrow::schema({arrow::field("s", arrow::struct_({arrow::field("z", arrow::null())}))})}) {
    EXPECT_TRUE(IsDeltaError(DataWriter::Make(Options(dir.str(), bad)).status(), DeltaErrorCode::kSchemaMismatch))
        << bad->ToString();
  }
}

TEST(DataWriter, RejectsBadOptionsAndBatches) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("p", arrow::utf8())});
  EXPECT_TRUE(IsDeltaError(DataWriter::Make(Options(dir.str(), schema, {"nope"})).status(),
                           DeltaErrorCode::kInvalidArgument));
  auto only_partition = Options(dir.str(), arrow::schema({arrow::field("p", arrow::utf8())}), {"p"});
  EXPECT_TRUE(IsDeltaError(DataWriter::Make(only_partition).status(), DeltaErrorCode::kSchemaMismatch));
  auto zero_target = Options(dir.str(), schema);
  zero_target.target_file_size = 0;
  EXPECT_TRUE(IsDeltaError(DataWriter::Make(zero_target).status(), DeltaErrorCode::kInvalidArgument));

  auto writer = DataWriter::Make(Options(dir.str(), schema, {"P"}));  // case-insensitive
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto wrong_type = arrow::schema({arrow::field("id", arrow::int32()), arrow::field("p", arrow::utf8())});
  EXPECT_TRUE(IsDeltaError((*writer)->Write(Batch(wrong_type, {Int32s({1}), Strings({"a"})})),
                           DeltaErrorCode::kSchemaMismatch));
  auto too_few = arrow::schema({arrow::field("id", arrow::int64())});
  EXPECT_TRUE(IsDeltaError((*writer)->Write(Batch(too_few, {Int64s({1})})), DeltaErrorCode::kSchemaMismatch));
  auto renamed = arrow::schema({arrow::field("ID", arrow::int64()), arrow::field("p", arrow::utf8())});
  EXPECT_TRUE((*writer)->Write(Batch(renamed, {Int64s({1}), Strings({"a"})})).ok());
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok());
  EXPECT_EQ(adds->size(), 1u);
  EXPECT_FALSE((*writer)->Finish().ok());
  EXPECT_FALSE((*writer)->Write(Batch(schema, {Int64s({1}), Strings({"a"})})).ok());
}

TEST(DataWriter, AbortDeletesEveryFile) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("payload", arrow::utf8())});
  auto partitioned = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("payload", arrow::utf8()),
                                    arrow::field("p", arrow::int32())});
  {
    // Some files finished by rollover, some still open.
    TempDir dir;
    auto options = Options(dir.str(), partitioned, {"p"});
    options.target_file_size = 64 * 1024;
    auto writer = DataWriter::Make(options);
    ASSERT_TRUE(writer.ok());
    for (int64_t first = 0; first < 8000; first += 2000) {
      auto b = PayloadBatch(schema, first, 2000);
      std::vector<std::optional<int32_t>> p;
      for (int64_t i = 0; i < 2000; ++i) p.push_back(static_cast<int32_t>(i % 3));
      ASSERT_TRUE((*writer)->Write(Batch(partitioned, {b->column(0), b->column(1), Int32s(p)})).ok());
    }
    EXPECT_GT(ParquetFilesUnder(dir.str()).size(), 3u);
    ASSERT_TRUE((*writer)->Abort().ok());
    EXPECT_TRUE(ParquetFilesUnder(dir.str()).empty());
    EXPECT_FALSE((*writer)->Write(PayloadBatch(schema, 0, 1)).ok());
  }
  {
    // After Finish (the commit failed): the finished files go too.
    TempDir dir;
    auto writer = DataWriter::Make(Options(dir.str(), schema));
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Write(PayloadBatch(schema, 0, 10)).ok());
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok());
    EXPECT_EQ(ParquetFilesUnder(dir.str()).size(), 1u);
    ASSERT_TRUE((*writer)->Abort().ok());
    EXPECT_TRUE(ParquetFilesUnder(dir.str()).empty());
  }
}

// ---------------------------------------------------------------------------------------------
// End to end: commit the adds and read them through a table

std::string JsonLine(const std::function<void(rapidjson::Writer<rapidjson::StringBuffer>&)>& body) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  body(w);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void CommitVersionZero(const std::string& root, const arrow::Schema& schema, const std::vector<std::string>& partitions,
                       const std::map<std::string, std::string>& configuration, int min_reader, int min_writer,
                       const std::vector<AddFile>& adds) {
  auto schema_string = SchemaToDeltaJson(schema);
  ASSERT_TRUE(schema_string.ok()) << schema_string.status();
  std::vector<std::string> lines;
  lines.push_back(JsonLine([&](auto& w) {
    w.Key("protocol");
    w.StartObject();
    w.Key("minReaderVersion");
    w.Int(min_reader);
    w.Key("minWriterVersion");
    w.Int(min_writer);
    w.EndObject();
  }));
  lines.push_back(JsonLine([&](auto& w) {
    w.Key("metaData");
    w.StartObject();
    w.Key("id");
    w.String("5fba94ed-9794-4965-ba6e-6ee3c0d22af9");
    w.Key("format");
    w.StartObject();
    w.Key("provider");
    w.String("parquet");
    w.Key("options");
    w.StartObject();
    w.EndObject();
    w.EndObject();
    w.Key("schemaString");
    w.String(schema_string->c_str());
    w.Key("partitionColumns");
    w.StartArray();
    for (const auto& p : partitions) w.String(p.c_str());
    w.EndArray();
    w.Key("configuration");
    w.StartObject();
    for (const auto& [k, v] : configuration) {
      w.Key(k.c_str());
      w.String(v.c_str());
    }
    w.EndObject();
    w.Key("createdTime");
    w.Int64(NowMs());
    w.EndObject();
  }));
  for (const auto& add : adds) {
    lines.push_back(JsonLine([&](auto& w) {
      w.Key("add");
      w.StartObject();
      w.Key("path");
      w.String(add.path.c_str());
      w.Key("partitionValues");
      w.StartObject();
      for (const auto& [k, v] : add.partition_values) {
        w.Key(k.c_str());
        if (v) {
          w.String(v->c_str(), static_cast<rapidjson::SizeType>(v->size()));
        } else {
          w.Null();
        }
      }
      w.EndObject();
      w.Key("size");
      w.Int64(add.size);
      w.Key("modificationTime");
      w.Int64(add.modification_time);
      w.Key("dataChange");
      w.Bool(add.data_change);
      if (add.stats) {
        w.Key("stats");
        w.String(add.stats->c_str(), static_cast<rapidjson::SizeType>(add.stats->size()));
      }
      w.EndObject();
    }));
  }
  fs::create_directories(fs::path(root) / "_delta_log");
  std::ofstream out(fs::path(root) / "_delta_log" / "00000000000000000000.json", std::ios::binary);
  for (const auto& line : lines) out << line << "\n";
}

std::shared_ptr<arrow::Table> ScanTable(const std::string& root, const std::string& filter, int64_t* skipped) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status();
  if (!table.ok()) return nullptr;
  auto snapshot = (*table)->Latest();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status();
  if (!snapshot.ok()) return nullptr;
  auto builder = (*snapshot)->NewScan();
  builder.Filter(filter);
  auto scan = builder.Build();
  EXPECT_TRUE(scan.ok()) << scan.status();
  if (!scan.ok()) return nullptr;
  if (skipped) *skipped = (*scan)->num_skipped_files();
  auto rows = (*scan)->ToTable();
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? SortById(*rows) : nullptr;
}

struct EndToEndCase {
  std::string name;
  ColumnMappingMode mode;
};

class EndToEnd : public ::testing::TestWithParam<EndToEndCase> {};

TEST_P(EndToEnd, TheReaderReadsWhatWasWritten) {
  TempDir dir;
  const bool mapped = GetParam().mode != ColumnMappingMode::kNone;
  auto field = [&](std::shared_ptr<arrow::Field> f, int id) {
    const std::string physical = "col-" + std::to_string(id) + "-" + f->name();
    return mapped ? Mapped(f, id, physical) : f;
  };
  auto st_type = arrow::struct_({field(arrow::field("x", arrow::int32()), 7), field(arrow::field("y", arrow::utf8()), 8)});
  auto schema = arrow::schema({field(arrow::field("id", arrow::int64()), 1), field(arrow::field("p", arrow::utf8()), 2),
                               field(arrow::field("v", arrow::float64()), 3),
                               field(arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")), 4),
                               field(arrow::field("dec", arrow::decimal128(10, 3)), 5),
                               field(arrow::field("s", st_type), 6)});
  // Partition "lo" holds ids 0..99, "hi" 100..199, NULL (empty and null values) 200..209.
  auto make = [&](int64_t first, int64_t count, std::function<std::optional<std::string>(int64_t)> part) {
    std::vector<std::optional<int64_t>> ids, ts, dec;
    std::vector<std::optional<std::string>> ps;
    std::vector<std::optional<double>> vs;
    std::string structs = "[";
    for (int64_t i = first; i < first + count; ++i) {
      ids.push_back(i);
      ps.push_back(part(i));
      vs.push_back(i % 7 == 0 ? std::nullopt : std::optional<double>(i * 0.5));
      ts.push_back(Micros(2024, 1, 1) + i * 1'000'123);
      dec.push_back(i * 1001);
      structs += (i > first ? "," : "") + (i % 5 == 0 ? std::string("null")
                                                       : fmt::format(R"({{"x": {}, "y": "s{}"}})", i, i % 13));
    }
    structs += "]";
    return Batch(schema, {Int64s(ids), Strings(ps), Doubles(vs), Timestamps(ts), Decimals(10, 3, dec),
                          FromJson(st_type, structs)});
  };
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches = {
      make(0, 150, [](int64_t i) { return i < 100 ? "lo" : "hi"; }),
      make(150, 60, [](int64_t i) -> std::optional<std::string> {
        if (i < 200) return "hi";
        if (i % 2 == 0) return "";
        return std::nullopt;
      })};
  auto options = Options(dir.str(), schema, {"p"});
  options.column_mapping_mode = GetParam().mode;
  auto adds = WriteAll(options, batches);
  ASSERT_EQ(adds.size(), 3u);
  std::map<std::string, std::string> configuration;
  int min_reader = 1, min_writer = 2;
  if (mapped) {
    configuration = {{"delta.columnMapping.mode", GetParam().mode == ColumnMappingMode::kId ? "id" : "name"},
                     {"delta.columnMapping.maxColumnId", "8"}};
    min_reader = 2;
    min_writer = 5;
  }
  CommitVersionZero(dir.str(), *schema, {"p"}, configuration, min_reader, min_writer, adds);

  // Everything: the input rows, with empty partition values read back as NULL.
  int64_t skipped = -1;
  auto all = ScanTable(dir.str(), "", &skipped);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(skipped, 0);
  auto input = SortById(*arrow::Table::FromRecordBatches(batches));
  ASSERT_EQ(all->num_rows(), input->num_rows());
  for (const auto& f : schema->fields()) {
    auto want = Cells(*input, f->name());
    if (f->name() == "p") {
      for (auto& v : want) {
        if (v == "") v = "null";
      }
    }
    EXPECT_EQ(Cells(*all, f->name()), want) << f->name();
  }

  // A filter on a data column: the "lo" file is skipped by its statistics.
  auto filtered = ScanTable(dir.str(), "id > 150", &skipped);
  ASSERT_NE(filtered, nullptr);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(filtered->num_rows(), 59);
  // Nested and timestamp statistics skip too: only ids 200..209 are beyond this time.
  auto late = ScanTable(dir.str(), "ts >= TIMESTAMP '2024-01-01 00:03:20.024600Z'", &skipped);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ(Cells(*late, "id").front(), "200");
  auto nested = ScanTable(dir.str(), "s.x < 50", &skipped);
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(skipped, 2);
}

INSTANTIATE_TEST_SUITE_P(Modes, EndToEnd,
                         ::testing::Values(EndToEndCase{"NoMapping", ColumnMappingMode::kNone},
                                           EndToEndCase{"NameMapping", ColumnMappingMode::kName},
                                           EndToEndCase{"IdMapping", ColumnMappingMode::kId}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace deltacpp::internal

namespace deltacpp::internal {
namespace {

// Whether a column chunk of the file's first row group has a dictionary page.
bool HasDictionary(const parquet::FileMetaData& metadata, int column) {
  return metadata.RowGroup(0)->ColumnChunk(column)->has_dictionary_page();
}

TEST(DataWriterEncodingTest, ColumnsOfDistinctValuesAreWrittenPlainOthersWithADictionary) {
  TempDir dir;
  const std::string root = dir.path().string();
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("few", arrow::int64()),
                               arrow::field("spread", arrow::float64()),
                               arrow::field("small", arrow::int32()),
                               arrow::field("name", arrow::utf8())});
  const int64_t n = 200000;
  arrow::Int64Builder id, few;
  arrow::DoubleBuilder spread;
  arrow::Int32Builder small;
  arrow::StringBuilder name;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> pick(0, 39999);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(id.Append(i).ok());
    ASSERT_TRUE(few.Append(i % 1000).ok());
    // About 2^20 values drawn in a scattered order: far more than a dictionary page holds.
    ASSERT_TRUE(spread.Append(static_cast<double>((i * 2654435761LL) & 0xFFFFF) / 100).ok());
    // Drawn from 40,000 int32 values: a dictionary of 160 KB, under the page limit.
    ASSERT_TRUE(small.Append(pick(rng)).ok());
    ASSERT_TRUE(name.Append("n" + std::to_string(i)).ok());
  }
  auto batch = Batch(schema, {id.Finish().ValueOrDie(), few.Finish().ValueOrDie(),
                              spread.Finish().ValueOrDie(), small.Finish().ValueOrDie(),
                              name.Finish().ValueOrDie()});
  auto adds = WriteAll(Options(root, schema), {batch});
  ASSERT_EQ(adds.size(), 1u);
  auto file = ReadParquet(FilePath(root, adds[0]));
  ASSERT_TRUE(file.metadata && file.table);
  EXPECT_FALSE(HasDictionary(*file.metadata, 0));  // id: every value distinct
  EXPECT_TRUE(HasDictionary(*file.metadata, 1));   // few
  EXPECT_FALSE(HasDictionary(*file.metadata, 2));  // spread
  EXPECT_TRUE(HasDictionary(*file.metadata, 3));   // small
  EXPECT_TRUE(HasDictionary(*file.metadata, 4));   // strings keep Parquet's default
  EXPECT_TRUE(file.table->Equals(*arrow::Table::FromRecordBatches({batch}).ValueOrDie()));
}

TEST(DataWriterEncodingTest, SmallFilesKeepDictionaries) {
  TempDir dir;
  const std::string root = dir.path().string();
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  auto adds = WriteAll(Options(root, schema),
                       {Batch(schema, {Int64s({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})})});
  ASSERT_EQ(adds.size(), 1u);
  auto file = ReadParquet(FilePath(root, adds[0]));
  ASSERT_TRUE(file.metadata);
  EXPECT_TRUE(HasDictionary(*file.metadata, 0));
}

}  // namespace
}  // namespace deltacpp::internal
