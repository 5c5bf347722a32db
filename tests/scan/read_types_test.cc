// How file columns become table columns beyond plain names: column mapping by Parquet field id,
// type widening on read, void columns and variant columns.
#include <arrow/io/file.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>

#include <filesystem>

#include "scan_test_util.h"

namespace deltacpp::scantest {
namespace {

std::string Quoted(const std::string& s) { return JsonString(s); }

std::string MappedField(const std::string& name, const std::string& type_json, int id,
                        const std::string& physical) {
  return "{\"name\":" + Quoted(name) + ",\"type\":" + type_json +
         ",\"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":" + std::to_string(id) +
         ",\"delta.columnMapping.physicalName\":" + Quoted(physical) + "}}";
}

std::string PlainField(const std::string& name, const std::string& type_json) {
  return "{\"name\":" + Quoted(name) + ",\"type\":" + type_json +
         ",\"nullable\":true,\"metadata\":{}}";
}

std::string StructJson(const std::vector<std::string>& fields) {
  std::string out = "{\"type\":\"struct\",\"fields\":[";
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  return out + "]}";
}

/// A field carrying a Parquet field id.
std::shared_ptr<arrow::Field> IdField(const std::string& name,
                                      const std::shared_ptr<arrow::DataType>& type, int id) {
  return arrow::field(name, type, true,
                      arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

std::shared_ptr<arrow::Table> TableOf(const arrow::FieldVector& fields,
                                      const arrow::ArrayVector& arrays) {
  return arrow::Table::Make(arrow::schema(fields), arrays);
}

std::shared_ptr<arrow::Array> StructOf(const arrow::FieldVector& fields,
                                       const arrow::ArrayVector& children,
                                       std::shared_ptr<arrow::Buffer> validity = nullptr) {
  auto result = arrow::StructArray::Make(children, fields, std::move(validity));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return *result;
}

/// The child `child` of struct column `column`, null where the struct is null.
std::shared_ptr<arrow::Array> StructChild(const arrow::Table& t, const std::string& column,
                                          const std::string& child) {
  auto col = t.GetColumnByName(column);
  EXPECT_NE(col, nullptr) << column;
  if (!col) return nullptr;
  auto joined = arrow::Concatenate(col->chunks());
  EXPECT_TRUE(joined.ok());
  const auto& s = static_cast<const arrow::StructArray&>(**joined);
  auto flat = s.GetFlattenedField(s.struct_type()->GetFieldIndex(child));
  EXPECT_TRUE(flat.ok()) << s.type()->ToString();
  return flat.ok() ? *flat : nullptr;
}

template <typename ArrayType, typename T>
std::vector<std::optional<T>> ArrayValues(const std::shared_ptr<arrow::Array>& a) {
  std::vector<std::optional<T>> out;
  if (!a) return out;
  const auto& typed = static_cast<const ArrayType&>(*a);
  for (int64_t i = 0; i < a->length(); ++i) {
    out.push_back(a->IsNull(i) ? std::nullopt : std::optional<T>(T(typed.GetView(i))));
  }
  return out;
}

/// Maps the int64 column "id"-like `key` of each row to the rendering `render(i)`.
template <typename Render>
std::map<int64_t, std::string> ByKey(const std::vector<std::optional<int64_t>>& keys,
                                     Render render) {
  std::map<int64_t, std::string> out;
  for (size_t i = 0; i < keys.size(); ++i) out[keys[i].value_or(-1)] = render(i);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Column mapping, id mode

// The table's columns Id (1, col-id), score (2, col-score) and info (3, col-info) with
// info.city (4, col-city) and info.zip (5, col-zip). The files name their columns neither way;
// only the Parquet field ids match. The second file also holds decoy columns that carry the
// logical or the physical names under other ids.
class IdMappedTable : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    const std::string schema = StructJson(
        {MappedField("Id", "\"long\"", 1, "col-id"), MappedField("score", "\"double\"", 2, "col-score"),
         MappedField("info",
                     StructJson({MappedField("city", "\"string\"", 4, "col-city"),
                                 MappedField("zip", "\"integer\"", 5, "col-zip")}),
                     3, "col-info")});
    ASSERT_TRUE(w.CreateWithSchemaString(schema, {},
                                         {{"delta.columnMapping.mode", "id"},
                                          {"delta.columnMapping.maxColumnId", "5"}},
                                         2, 5)
                    .ok());
    // File A: other names, other column order, struct children in the other order.
    arrow::FieldVector a_info = {IdField("z5", arrow::int32(), 5), IdField("c4", arrow::utf8(), 4)};
    auto a = TableOf(
        {IdField("a2", arrow::float64(), 2), IdField("a3", arrow::struct_(a_info), 3),
         IdField("a1", arrow::int64(), 1)},
        {Doubles({1.5, std::nullopt, 3.5}),
         StructOf(a_info, {Int32s({75001, std::nullopt, 1}), Strings({"Paris", "Oslo", std::nullopt})}),
         Int64s({1, 2, 3})});
    AppendOne(w, FixtureFile(a).WithStats(false).WithMaxRowGroupRows(2));
    // File B: decoys named like the logical and physical columns under unknown ids; no zip.
    arrow::FieldVector b_info = {IdField("col-city", arrow::utf8(), 97),
                                 IdField("city", arrow::utf8(), 96),
                                 IdField("b4", arrow::utf8(), 4)};
    auto b = TableOf(
        {IdField("col-id", arrow::int64(), 99), IdField("Id", arrow::int64(), 98),
         IdField("col-score", arrow::float64(), 95), IdField("b1", arrow::int64(), 1),
         IdField("b2", arrow::float64(), 2), IdField("col-info", arrow::struct_(b_info), 3)},
        {Int64s({901, 902}), Int64s({801, 802}), Doubles({-1, -2}), Int64s({11, 12}),
         Doubles({0.5, 2.5}),
         StructOf(b_info, {Strings({"decoy", "decoy"}), Strings({"decoy", "decoy"}),
                           Strings({"Lima", "Rome"})})});
    AppendOne(w, FixtureFile(b).WithStats(false));
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
    ASSERT_EQ(snap_->column_mapping_mode(), ColumnMappingMode::kId);
  }

  TempDir dir_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(IdMappedTable, ColumnsAndNestedFieldsAreFoundByFieldId) {
  auto scan = Plan(*snap_);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(FieldNames(*t->schema()), (std::vector<std::string>{"Id", "score", "info"}));
  auto ids = Int64Values(*t, "Id");
  auto scores = Values<arrow::DoubleArray, double>(*t, "score", arrow::float64());
  auto cities = ArrayValues<arrow::StringArray, std::string>(StructChild(*t, "info", "city"));
  auto zips_array = StructChild(*t, "info", "zip");
  ASSERT_NE(zips_array, nullptr);
  ASSERT_TRUE(zips_array->type()->Equals(arrow::int32()));
  const auto& zips = static_cast<const arrow::Int32Array&>(*zips_array);
  ASSERT_EQ(ids.size(), 5u);
  ASSERT_EQ(scores.size(), 5u);
  ASSERT_EQ(cities.size(), 5u);
  auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("null"); };
  auto got = ByKey(ids, [&](size_t i) {
    return opt(scores[i]) + "|" + opt(cities[i]) + "|" +
           (zips.IsNull(i) ? std::string("null") : std::to_string(zips.Value(i)));
  });
  EXPECT_EQ(got, (std::map<int64_t, std::string>{{1, "1.5|Paris|75001"},
                                                 {2, "null|Oslo|null"},
                                                 {3, "3.5|null|1"},
                                                 {11, "0.5|Lima|null"},
                                                 {12, "2.5|Rome|null"}}));
}

TEST_F(IdMappedTable, FiltersUseTheColumnsFoundById) {
  struct Case {
    std::string filter;
    std::vector<int64_t> ids;
  };
  for (const auto& c : std::vector<Case>{{"Id > 10", {11, 12}},
                                         {"Id = 3", {3}},
                                         {"score > 1", {1, 3, 12}},
                                         {"info.city = 'Paris'", {1}},
                                         {"info.city = 'decoy'", {}},
                                         {"info.zip IS NULL", {2, 11, 12}},
                                         {"Id > 900", {}}}) {
    SCOPED_TRACE("filter: " + c.filter);
    auto scan = Plan(*snap_, {"Id"}, c.filter);
    ASSERT_NE(scan, nullptr);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t, "Id"), c.ids);
  }
}

// A file column under another field id is another column, even when it has the physical name;
// only a file column without any field id is matched by physical name.
TEST(IdMappedFallback, PhysicalNameOnlyMatchesColumnsWithoutFieldIds) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  const std::string schema =
      StructJson({MappedField("Id", "\"long\"", 1, "col-id"),
                  MappedField("score", "\"double\"", 2, "col-score"),
                  MappedField("info", StructJson({MappedField("city", "\"string\"", 4, "col-city")}),
                              3, "col-info")});
  ASSERT_TRUE(w.CreateWithSchemaString(schema, {},
                                       {{"delta.columnMapping.mode", "id"},
                                        {"delta.columnMapping.maxColumnId", "4"}},
                                       2, 5)
                  .ok());
  // Ids 2 and 4 are missing; the columns named col-score and col-city belong to ids 95 and 94.
  arrow::FieldVector with_ids_info = {IdField("col-city", arrow::utf8(), 94)};
  AppendOne(w, FixtureFile(TableOf({IdField("c1", arrow::int64(), 1),
                                    IdField("col-score", arrow::float64(), 95),
                                    IdField("col-info", arrow::struct_(with_ids_info), 3)},
                                   {Int64s({1, 2}), Doubles({-1, -2}),
                                    StructOf(with_ids_info, {Strings({"decoy", "decoy"})})}))
                   .WithStats(false));
  // No field ids at all: physical names.
  arrow::FieldVector plain_info = {arrow::field("col-city", arrow::utf8())};
  AppendOne(w, FixtureFile(TableOf({arrow::field("col-id", arrow::int64()),
                                    arrow::field("col-score", arrow::float64()),
                                    arrow::field("col-info", arrow::struct_(plain_info))},
                                   {Int64s({3}), Doubles({3.5}),
                                    StructOf(plain_info, {Strings({"Oslo"})})}))
                   .WithStats(false));
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);
  auto scan = Plan(*snap);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  auto ids = Int64Values(*t, "Id");
  auto scores = Values<arrow::DoubleArray, double>(*t, "score", arrow::float64());
  auto cities = ArrayValues<arrow::StringArray, std::string>(StructChild(*t, "info", "city"));
  ASSERT_EQ(ids.size(), 3u);
  ASSERT_EQ(scores.size(), 3u);
  ASSERT_EQ(cities.size(), 3u);
  auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("null"); };
  auto got = ByKey(ids, [&](size_t i) { return opt(scores[i]) + "|" + opt(cities[i]); });
  EXPECT_EQ(got, (std::map<int64_t, std::string>{
                     {1, "null|null"}, {2, "null|null"}, {3, "3.5|Oslo"}}));
}

// ---------------------------------------------------------------------------------------------
// Type widening

// Columns widened after the first file was written: float -> double, byte -> int and long,
// short -> int and long, date -> timestamp_ntz, decimal(5,2) -> decimal(10,4). The second file
// has the wide types.
class WidenedTable : public ::testing::Test {
 protected:
  void SetUp() override {
    FixtureTableWriter w(dir_.str());
    const std::string schema = StructJson(
        {PlainField("id", "\"long\""), PlainField("f", "\"double\""),
         PlainField("b_int", "\"integer\""), PlainField("b_long", "\"long\""),
         PlainField("s_int", "\"integer\""), PlainField("s_long", "\"long\""),
         PlainField("d", "\"timestamp_ntz\""), PlainField("dec", "\"decimal(10,4)\"")});
    ASSERT_TRUE(w.CreateWithSchemaString(schema, {}, {{"delta.enableTypeWidening", "true"}}, 3,
                                         7, {"timestampNtz", "typeWidening"},
                                         {"timestampNtz", "typeWidening"})
                    .ok());
    arrow::Int8Builder i8;
    ASSERT_TRUE(i8.AppendValues({-128, 127, 5}).ok());
    ASSERT_TRUE(i8.AppendNull().ok());
    auto bytes = i8.Finish().ValueOrDie();
    arrow::Int16Builder i16;
    ASSERT_TRUE(i16.AppendValues({-32768, 32767, -1}).ok());
    ASSERT_TRUE(i16.AppendNull().ok());
    auto shorts = i16.Finish().ValueOrDie();
    arrow::FloatBuilder f32;
    ASSERT_TRUE(f32.AppendValues({1.5f, 0.1f, -3.25f}).ok());
    ASSERT_TRUE(f32.AppendNull().ok());
    auto floats = f32.Finish().ValueOrDie();
    narrow_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"id", Int64s({1, 2, 3, 4})},
                                  {"f", floats},
                                  {"b_int", bytes},
                                  {"b_long", bytes},
                                  {"s_int", shorts},
                                  {"s_long", shorts},
                                  {"d", Dates({Days(2024, 2, 29), Days(1969, 12, 31),
                                               Days(1, 1, 1), std::nullopt})},
                                  {"dec", Decimals(5, 2, {12345, -99999, 1, std::nullopt})}}))
               .WithMaxRowGroupRows(2)));
    arrow::TimestampBuilder ntz(arrow::timestamp(arrow::TimeUnit::MICRO),
                                arrow::default_memory_pool());
    ASSERT_TRUE(ntz.Append(Micros(2024, 3, 1, 12, 30)).ok());
    wide_ = BaseName(AppendOne(
        w, FixtureFile(MakeTable({{"id", Int64s({5})},
                                  {"f", Doubles({1e300})},
                                  {"b_int", Int32s({100000})},
                                  {"b_long", Int64s({int64_t{1} << 40})},
                                  {"s_int", Int32s({-100000})},
                                  {"s_long", Int64s({-(int64_t{1} << 40)})},
                                  {"d", ntz.Finish().ValueOrDie()},
                                  {"dec", Decimals(10, 4, {123456789})}}))));
    snap_ = OpenLatest(dir_.str());
    ASSERT_NE(snap_, nullptr);
  }

  TempDir dir_;
  std::string narrow_, wide_;
  std::shared_ptr<Snapshot> snap_;
};

TEST_F(WidenedTable, NarrowFileValuesReadAsTheWideTypes) {
  auto scan = Plan(*snap_);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->num_rows(), 5);
  using Opt64 = std::vector<std::optional<int64_t>>;
  using Opt32 = std::vector<std::optional<int32_t>>;
  // Rows in id order (files may come in any order): ids 1..4 from the narrow file, then 5.
  auto ids = Int64Values(*t, "id");
  std::vector<size_t> order(ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a] < ids[b]; });
  auto sorted = [&](auto values) {
    decltype(values) out;
    for (size_t i : order) out.push_back(i < values.size() ? values[i] : std::nullopt);
    return out;
  };
  ASSERT_EQ(sorted(ids), (Opt64{1, 2, 3, 4, 5}));
  EXPECT_EQ(sorted(Values<arrow::DoubleArray, double>(*t, "f", arrow::float64())),
            (std::vector<std::optional<double>>{1.5, static_cast<double>(0.1f), -3.25,
                                                std::nullopt, 1e300}));
  EXPECT_EQ(sorted(Int32Values(*t, "b_int")), (Opt32{-128, 127, 5, std::nullopt, 100000}));
  EXPECT_EQ(sorted(Int64Values(*t, "b_long")),
            (Opt64{-128, 127, 5, std::nullopt, int64_t{1} << 40}));
  EXPECT_EQ(sorted(Int32Values(*t, "s_int")), (Opt32{-32768, 32767, -1, std::nullopt, -100000}));
  EXPECT_EQ(sorted(Int64Values(*t, "s_long")),
            (Opt64{-32768, 32767, -1, std::nullopt, -(int64_t{1} << 40)}));
  // A date becomes midnight of that day.
  const int64_t kDayUs = 86'400'000'000;
  EXPECT_EQ(sorted(Values<arrow::TimestampArray, int64_t>(
                *t, "d", arrow::timestamp(arrow::TimeUnit::MICRO))),
            (Opt64{int64_t{Days(2024, 2, 29)} * kDayUs, -kDayUs, int64_t{Days(1, 1, 1)} * kDayUs,
                   std::nullopt, Micros(2024, 3, 1, 12, 30)}));
  // decimal(5,2) 123.45 is decimal(10,4) 123.4500: unscaled times 100.
  auto dec = Column<arrow::Decimal128Array>(*t, "dec", arrow::decimal128(10, 4));
  ASSERT_NE(dec, nullptr);
  std::vector<std::string> dec_text;
  for (size_t i : order) {
    const auto row = static_cast<int64_t>(i);
    dec_text.push_back(dec->IsNull(row) ? "null" : dec->FormatValue(row));
  }
  EXPECT_EQ(dec_text,
            (std::vector<std::string>{"123.4500", "-999.9900", "0.0100", "null", "12345.6789"}));
}

TEST_F(WidenedTable, FiltersOnWidenedColumnsMatchTheWideValues) {
  struct Case {
    std::string filter;
    std::vector<int64_t> ids;
  };
  for (const auto& c : std::vector<Case>{
           {"f = 1.5", {1}},
           {"f < 0", {3}},
           {"f > 1000000", {5}},
           {"b_int = -128", {1}},
           {"b_long > 127", {5}},
           {"s_int < -32767", {1, 5}},
           {"s_long = 32767", {2}},
           {"d = TIMESTAMP_NTZ '2024-02-29 00:00:00'", {1}},
           {"d < TIMESTAMP_NTZ '1970-01-01 00:00:00'", {2, 3}},
           {"d > TIMESTAMP_NTZ '2024-02-29 12:00:00'", {5}},
           {"d IS NULL", {4}},
           {"dec = 123.45", {1}},
           {"dec < -999", {2}},
           {"dec > 12345", {5}},
           {"dec = 0.01", {3}}}) {
    SCOPED_TRACE("filter: " + c.filter);
    auto scan = Plan(*snap_, {"id"}, c.filter);
    ASSERT_NE(scan, nullptr);
    auto t = Read(*scan);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(SortedIds(*t), c.ids);
  }
}

// Decimals stored as INT32 / INT64 (as Spark writes precision <= 18), in row groups whose
// statistics are unscaled integers of the file's scale.
TEST(TypeWideningStoredAsIntegers, DecimalRowGroupStatisticsKeepTheFileScale) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  const std::string schema =
      StructJson({PlainField("id", "\"long\""), PlainField("small", "\"decimal(12,4)\""),
                  PlainField("big", "\"decimal(20,3)\"")});
  ASSERT_TRUE(w.CreateWithSchemaString(schema, {}, {{"delta.enableTypeWidening", "true"}}, 3, 7,
                                       {"typeWidening"}, {"typeWidening"})
                  .ok());
  // small: decimal(5,2) in INT32; big: decimal(15,1) in INT64. Row group 0 holds ids 1..2,
  // row group 1 ids 3..4.
  auto data = MakeTable({{"id", Int64s({1, 2, 3, 4})},
                         {"small", Decimals(5, 2, {100, 200, 50000, 60000})},
                         {"big", Decimals(15, 1, {-10, 10, 123456789012345, 5})}});
  const std::string rel = "part-0.parquet";
  {
    auto sink = arrow::io::FileOutputStream::Open((dir.path() / rel).string()).ValueOrDie();
    auto props = parquet::WriterProperties::Builder().enable_store_decimal_as_integer()->build();
    ASSERT_TRUE(parquet::arrow::WriteTable(*data, arrow::default_memory_pool(), sink, 2, props).ok());
    ASSERT_TRUE(sink->Close().ok());
  }
  {
    auto file = arrow::io::ReadableFile::Open((dir.path() / rel).string()).ValueOrDie();
    auto reader = parquet::ParquetFileReader::Open(file);
    auto md = reader->metadata();
    ASSERT_EQ(md->num_row_groups(), 2);
    ASSERT_EQ(md->schema()->Column(1)->physical_type(), parquet::Type::INT32);
    ASSERT_EQ(md->schema()->Column(2)->physical_type(), parquet::Type::INT64);
  }
  const auto size = std::filesystem::file_size(dir.path() / rel);
  ASSERT_TRUE(w.CommitRaw({"{\"add\":{\"path\":\"" + rel + "\",\"partitionValues\":{},\"size\":" +
                           std::to_string(size) +
                           ",\"modificationTime\":1,\"dataChange\":true}}"})
                  .ok());
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);
  auto all = Plan(*snap);
  ASSERT_NE(all, nullptr);
  auto t = Read(*all);
  ASSERT_NE(t, nullptr);
  auto small = Column<arrow::Decimal128Array>(*t, "small", arrow::decimal128(12, 4));
  auto big = Column<arrow::Decimal128Array>(*t, "big", arrow::decimal128(20, 3));
  ASSERT_NE(small, nullptr);
  ASSERT_NE(big, nullptr);
  std::vector<std::string> text;
  for (int64_t i = 0; i < t->num_rows(); ++i) {
    text.push_back(small->FormatValue(i) + "|" + big->FormatValue(i));
  }
  EXPECT_EQ(text, (std::vector<std::string>{"1.0000|-1.000", "2.0000|1.000",
                                            "500.0000|12345678901234.500", "600.0000|0.500"}));
  struct Case {
    std::string filter;
    std::vector<int64_t> ids;
  };
  for (const auto& c : std::vector<Case>{{"small > 400", {3, 4}},
                                         {"small < 5", {1, 2}},
                                         {"small = 500", {3}},
                                         {"big > 1000000", {3}},
                                         {"big < 0", {1}},
                                         {"big = 0.5", {4}}}) {
    SCOPED_TRACE("filter: " + c.filter);
    auto scan = Plan(*snap, {"id"}, c.filter);
    ASSERT_NE(scan, nullptr);
    auto rows = Read(*scan);
    ASSERT_NE(rows, nullptr);
    EXPECT_EQ(SortedIds(*rows), c.ids);
  }
}

// Widening inside nested types: a struct field short -> int, array elements byte -> long, map
// values float -> double.
TEST(TypeWideningNested, StructFieldsListElementsAndMapValuesAreWidened) {
  TempDir dir;
  FixtureTableWriter w(dir.str());
  const std::string schema = StructJson(
      {PlainField("id", "\"long\""),
       PlainField("s", StructJson({PlainField("n", "\"integer\"")})),
       PlainField("a", R"({"type":"array","elementType":"long","containsNull":true})"),
       PlainField("m",
                  R"({"type":"map","keyType":"string","valueType":"double","valueContainsNull":true})")});
  ASSERT_TRUE(w.CreateWithSchemaString(schema, {}, {{"delta.enableTypeWidening", "true"}}, 3, 7,
                                       {"typeWidening"}, {"typeWidening"})
                  .ok());
  arrow::Int16Builder n;
  ASSERT_TRUE(n.AppendValues({-300, 300}).ok());
  auto s = StructOf({arrow::field("n", arrow::int16())}, {n.Finish().ValueOrDie()});
  arrow::ListBuilder lb(arrow::default_memory_pool(), std::make_shared<arrow::Int8Builder>());
  auto* lv = static_cast<arrow::Int8Builder*>(lb.value_builder());
  ASSERT_TRUE(lb.Append().ok());
  ASSERT_TRUE(lv->AppendValues({-128, 1}).ok());
  ASSERT_TRUE(lb.Append().ok());
  ASSERT_TRUE(lv->AppendNull().ok());
  auto a = lb.Finish().ValueOrDie();
  arrow::MapBuilder mb(arrow::default_memory_pool(), std::make_shared<arrow::StringBuilder>(),
                       std::make_shared<arrow::FloatBuilder>());
  auto* mk = static_cast<arrow::StringBuilder*>(mb.key_builder());
  auto* mv = static_cast<arrow::FloatBuilder*>(mb.item_builder());
  ASSERT_TRUE(mb.Append().ok());
  ASSERT_TRUE(mk->Append("x").ok());
  ASSERT_TRUE(mv->Append(0.1f).ok());
  ASSERT_TRUE(mb.Append().ok());
  auto m = mb.Finish().ValueOrDie();
  AppendOne(w, FixtureFile(MakeTable({{"id", Int64s({1, 2})}, {"s", s}, {"a", a}, {"m", m}})));
  auto snap = OpenLatest(dir.str());
  ASSERT_NE(snap, nullptr);
  auto scan = Plan(*snap);
  ASSERT_NE(scan, nullptr);
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->schema()->Equals(*scan->schema())) << t->schema()->ToString();
  auto nn = StructChild(*t, "s", "n");
  ASSERT_NE(nn, nullptr);
  ASSERT_TRUE(nn->type()->Equals(arrow::int32())) << nn->type()->ToString();
  EXPECT_EQ((static_cast<const arrow::Int32Array&>(*nn).Value(0)), -300);
  EXPECT_EQ((static_cast<const arrow::Int32Array&>(*nn).Value(1)), 300);
  auto list_col = arrow::Concatenate(t->GetColumnByName("a")->chunks()).ValueOrDie();
  const auto& list = static_cast<const arrow::ListArray&>(*list_col);
  ASSERT_TRUE(list.value_type()->Equals(arrow::int64())) << list.type()->ToString();
  const auto& elems = static_cast<const arrow::Int64Array&>(*list.values());
  ASSERT_EQ(list.value_length(0), 2);
  EXPECT_EQ(elems.Value(list.value_offset(0)), -128);
  EXPECT_EQ(elems.Value(list.value_offset(0) + 1), 1);
  ASSERT_EQ(list.value_length(1), 1);
  EXPECT_TRUE(elems.IsNull(list.value_offset(1)));
  auto map_col = arrow::Concatenate(t->GetColumnByName("m")->chunks()).ValueOrDie();
  const auto& map = static_cast<const arrow::MapArray&>(*map_col);
  ASSERT_TRUE(map.items()->type()->Equals(arrow::float64())) << map.type()->ToString();
  ASSERT_EQ(map.value_length(0), 1);
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*map.keys()).GetView(map.value_offset(0)), "x");
  EXPECT_EQ(static_cast<const arrow::DoubleArray&>(*map.items()).Value(map.value_offset(0)),
            static_cast<double>(0.1f));
  EXPECT_EQ(map.value_length(1), 0);
  auto filtered = Plan(*snap, {"id"}, "s.n > 0");
  ASSERT_NE(filtered, nullptr);
  auto rows = Read(*filtered);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(SortedIds(*rows), (std::vector<int64_t>{2}));
}

// ---------------------------------------------------------------------------------------------
// Void and variant columns

std::shared_ptr<arrow::Array> Binaries(const std::vector<std::optional<std::string>>& v) {
  arrow::BinaryBuilder b;
  return BuildArray(b, v);
}

// Minimal variant encodings: metadata header (version 1, empty dictionary), values as
// primitive headers (int8 42, true, the short string "hi").
const std::string kMeta("\x01\x00\x00", 3);
const std::string kInt42("\x0c\x2a", 2);
const std::string kTrue("\x04", 1);
const std::string kHi("\x09hi", 3);

class VoidAndVariant : public ::testing::Test {
 protected:
  void Create(FixtureTableWriter& w) {
    const std::string schema =
        StructJson({PlainField("id", "\"long\""), PlainField("nothing", "\"void\""),
                    PlainField("v", "\"variant\"")});
    ASSERT_TRUE(w.CreateWithSchemaString(schema, {}, {}, 3, 7, {"variantType"}, {"variantType"})
                    .ok());
  }

  TempDir dir_;
};

TEST_F(VoidAndVariant, VoidIsAllNullAndUnshreddedVariantIsMetadataAndValue) {
  FixtureTableWriter w(dir_.str());
  Create(w);
  // Written value before metadata, as some writers do; the void column is not in the file.
  arrow::FieldVector vf = {arrow::field("value", arrow::binary(), false),
                           arrow::field("metadata", arrow::binary(), false)};
  std::shared_ptr<arrow::Buffer> validity;
  {
    arrow::TypedBufferBuilder<bool> bits;
    ASSERT_TRUE(bits.Append(4, true).ok());
    validity = bits.Finish().ValueOrDie();
    arrow::bit_util::ClearBit(validity->mutable_data(), 1);
  }
  auto v = StructOf(vf, {Binaries({kInt42, std::string(), kTrue, kHi}),
                         Binaries({kMeta, std::string(), kMeta, kMeta})},
                    validity);
  AppendOne(w, FixtureFile(MakeTable({{"id", Int64s({1, 2, 3, 4})}, {"v", v}})).WithStats(false));
  auto snap = OpenLatest(dir_.str());
  ASSERT_NE(snap, nullptr);

  auto scan = Plan(*snap);
  ASSERT_NE(scan, nullptr);
  auto variant_type = arrow::struct_({arrow::field("metadata", arrow::binary(), false),
                                      arrow::field("value", arrow::binary(), false)});
  ASSERT_EQ(scan->schema()->num_fields(), 3);
  EXPECT_TRUE(scan->schema()->field(1)->type()->Equals(arrow::null()))
      << scan->schema()->field(1)->type()->ToString();
  EXPECT_TRUE(scan->schema()->field(2)->type()->Equals(variant_type))
      << scan->schema()->field(2)->type()->ToString();
  auto t = Read(*scan);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->num_rows(), 4);
  auto nothing = t->GetColumnByName("nothing");
  ASSERT_NE(nothing, nullptr);
  EXPECT_TRUE(nothing->type()->Equals(arrow::null())) << nothing->type()->ToString();
  EXPECT_EQ(nothing->null_count(), 4);
  auto col = t->GetColumnByName("v");
  ASSERT_NE(col, nullptr);
  ASSERT_TRUE(col->type()->Equals(variant_type)) << col->type()->ToString();
  EXPECT_EQ(col->null_count(), 1);
  EXPECT_EQ((ArrayValues<arrow::BinaryArray, std::string>(StructChild(*t, "v", "metadata"))),
            (std::vector<std::optional<std::string>>{kMeta, std::nullopt, kMeta, kMeta}));
  EXPECT_EQ((ArrayValues<arrow::BinaryArray, std::string>(StructChild(*t, "v", "value"))),
            (std::vector<std::optional<std::string>>{kInt42, std::nullopt, kTrue, kHi}));

  // A void column is NULL in every row.
  for (const auto& [filter, expected] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"nothing IS NULL", {1, 2, 3, 4}},
           {"nothing IS NOT NULL", {}},
           {"id > 2 AND nothing IS NULL", {3, 4}},
           {"v IS NULL", {2}}}) {
    SCOPED_TRACE("filter: " + filter);
    auto filtered = Plan(*snap, {"id"}, filter);
    ASSERT_NE(filtered, nullptr);
    auto rows = Read(*filtered);
    ASSERT_NE(rows, nullptr);
    EXPECT_EQ(SortedIds(*rows), expected);
  }

  // The void column alone still has a row per row.
  auto only_void = Plan(*snap, {"nothing"});
  ASSERT_NE(only_void, nullptr);
  auto vt = Read(*only_void);
  ASSERT_NE(vt, nullptr);
  EXPECT_EQ(vt->num_rows(), 4);
  EXPECT_TRUE(vt->schema()->field(0)->type()->Equals(arrow::null()));
}

TEST_F(VoidAndVariant, ShreddedVariantIsUnsupportedAndNamed) {
  FixtureTableWriter w(dir_.str());
  Create(w);
  arrow::FieldVector vf = {arrow::field("metadata", arrow::binary(), false),
                           arrow::field("value", arrow::binary(), true),
                           arrow::field("typed_value", arrow::int64(), true)};
  auto v = StructOf(vf, {Binaries({kMeta, kMeta}), Binaries({std::nullopt, kTrue}),
                         Int64s({42, std::nullopt})});
  AppendOne(w, FixtureFile(MakeTable({{"id", Int64s({1, 2})}, {"v", v}})).WithStats(false));
  auto snap = OpenLatest(dir_.str());
  ASSERT_NE(snap, nullptr);
  auto scan = Plan(*snap);
  ASSERT_NE(scan, nullptr);
  auto t = scan->ToTable();
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(IsDeltaError(t.status(), DeltaErrorCode::kUnsupportedFeature)) << t.status().ToString();
  EXPECT_NE(t.status().message().find("'v'"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("shredded variant"), std::string::npos)
      << t.status().message();
  // Columns other than the variant still read.
  auto ids_only = Plan(*snap, {"id"});
  ASSERT_NE(ids_only, nullptr);
  auto ids = Read(*ids_only);
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(SortedIds(*ids), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace deltacpp::scantest
