#include "output_format.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/json/from_string.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <rapidjson/document.h>

#include <cmath>
#include <limits>
#include <sstream>

namespace deltacpp::cli {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<arrow::Array> FromJson(const std::shared_ptr<arrow::DataType>& type,
                                       const std::string& json) {
  auto array = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return array.ValueOrDie();
}

std::shared_ptr<arrow::Array> BinaryColumn() {
  arrow::BinaryBuilder b;
  EXPECT_TRUE(b.Append(std::string("\x00\x01\xff", 3)).ok());
  EXPECT_TRUE(b.Append(std::string()).ok());
  EXPECT_TRUE(b.AppendNull().ok());
  EXPECT_TRUE(b.Append(std::string("abc")).ok());
  return b.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Array> DoubleColumn() {
  arrow::DoubleBuilder b;
  EXPECT_TRUE(b.Append(1.5).ok());
  EXPECT_TRUE(b.Append(std::numeric_limits<double>::quiet_NaN()).ok());
  EXPECT_TRUE(b.AppendNull().ok());
  EXPECT_TRUE(b.Append(-std::numeric_limits<double>::infinity()).ok());
  return b.Finish().ValueOrDie();
}

/// Four rows covering every kind of value the formats must handle; row 3 is all NULL.
std::shared_ptr<arrow::RecordBatch> SampleBatch() {
  auto st_type =
      arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8())});
  auto schema = arrow::schema({
      arrow::field("id", arrow::int64()),
      arrow::field("name", arrow::utf8()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("d", arrow::date32()),
      arrow::field("dec", arrow::decimal128(5, 2)),
      arrow::field("st", st_type),
      arrow::field("lst", arrow::list(arrow::int32())),
      arrow::field("m", arrow::map(arrow::utf8(), arrow::int32())),
      arrow::field("bin", arrow::binary()),
      arrow::field("f", arrow::float64()),
      arrow::field("b", arrow::boolean()),
  });
  const std::string times = "[1705314600000000, 1705314600123456, null, -500000]";
  std::vector<std::shared_ptr<arrow::Array>> columns = {
      FromJson(arrow::int64(), "[1, 2, null, 4]"),
      FromJson(arrow::utf8(), R"(["plain", "a,b \"q\"\nnext", null, "ünïcødé ✓"])"),
      FromJson(schema->field(2)->type(), times),
      FromJson(schema->field(3)->type(), times),
      FromJson(arrow::date32(), "[19737, 0, null, -1]"),
      FromJson(arrow::decimal128(5, 2), R"(["1.20", "-0.05", null, "123.00"])"),
      FromJson(st_type,
               R"([{"a": 1, "b": "x"}, {"a": null, "b": "y\"z"}, null, {"a": 3, "b": null}])"),
      FromJson(arrow::list(arrow::int32()), "[[1, 2], [], null, [null, 4]]"),
      FromJson(arrow::map(arrow::utf8(), arrow::int32()),
               R"([[["k1", 1], ["k2", null]], [], null, [["a\"b", 3]]])"),
      BinaryColumn(),
      DoubleColumn(),
      FromJson(arrow::boolean(), "[true, false, null, true]"),
  };
  return arrow::RecordBatch::Make(schema, 4, columns);
}

std::string Render(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                   OutputFormat format, std::optional<int64_t> limit = std::nullopt) {
  auto reader = arrow::RecordBatchReader::Make(batches).ValueOrDie();
  std::ostringstream out;
  auto st = WriteRecordBatches(*reader, format, out, OutputOptions{.limit = limit});
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out.str();
}

std::string RenderColumn(const std::shared_ptr<arrow::Array>& column, OutputFormat format) {
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("v", column->type())}),
                                        column->length(), {column});
  return Render({batch}, format);
}

// The sample holds a NaN, which only compares equal to itself when asked to.
const arrow::EqualOptions kNansEqual = arrow::EqualOptions::Defaults().nans_equal(true);

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// ---------------------------------------------------------------------------------------------

TEST(OutputFormat, ParsesFormatNames) {
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("CSV"), OutputFormat::kCsv);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("jsonl"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("Parquet"), OutputFormat::kParquet);
  auto bad = ParseOutputFormat("xml");
  ASSERT_TRUE(bad.status().IsInvalid());
  EXPECT_THAT(bad.status().message(), HasSubstr("xml"));
}

TEST(OutputFormat, JsonLinesRenderEveryKindOfValue) {
  const std::string expected =
      R"({"id":1,"name":"plain","ts":"2024-01-15T10:30:00Z","ntz":"2024-01-15T10:30:00",)"
      R"("d":"2024-01-15","dec":1.20,"st":{"a":1,"b":"x"},"lst":[1,2],"m":{"k1":1,"k2":null},)"
      R"("bin":"AAH/","f":1.5,"b":true})"
      "\n"
      R"({"id":2,"name":"a,b \"q\"\nnext","ts":"2024-01-15T10:30:00.123456Z",)"
      R"("ntz":"2024-01-15T10:30:00.123456","d":"1970-01-01","dec":-0.05,)"
      R"("st":{"a":null,"b":"y\"z"},"lst":[],"m":{},"bin":"","f":"NaN","b":false})"
      "\n"
      R"({"id":null,"name":null,"ts":null,"ntz":null,"d":null,"dec":null,"st":null,)"
      R"("lst":null,"m":null,"bin":null,"f":null,"b":null})"
      "\n"
      R"({"id":4,"name":"ünïcødé ✓","ts":"1969-12-31T23:59:59.500000Z",)"
      R"("ntz":"1969-12-31T23:59:59.500000","d":"1969-12-31","dec":123.00,)"
      R"("st":{"a":3,"b":null},"lst":[null,4],"m":{"a\"b":3},"bin":"YWJj","f":"-Infinity",)"
      R"("b":true})"
      "\n";
  const std::string actual = Render({SampleBatch()}, OutputFormat::kJson);
  EXPECT_EQ(actual, expected);
  // Every line is a JSON document on its own; decimals are numbers.
  for (const auto& line : Lines(actual)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    ASSERT_FALSE(doc.HasParseError()) << line;
    ASSERT_TRUE(doc.IsObject());
    EXPECT_TRUE(doc["dec"].IsNumber() || doc["dec"].IsNull());
  }
}

TEST(OutputFormat, CsvQuotesAndLeavesNullsEmpty) {
  const std::string expected =
      "id,name,ts,ntz,d,dec,st,lst,m,bin,f,b\n"
      R"(1,plain,2024-01-15T10:30:00Z,2024-01-15T10:30:00,2024-01-15,1.20,)"
      R"("{""a"":1,""b"":""x""}","[1,2]","{""k1"":1,""k2"":null}",AAH/,1.5,true)"
      "\n"
      "2,\"a,b \"\"q\"\"\nnext\",2024-01-15T10:30:00.123456Z,2024-01-15T10:30:00.123456,"
      R"(1970-01-01,-0.05,"{""a"":null,""b"":""y\""z""}",[],{},"",NaN,false)"
      "\n"
      ",,,,,,,,,,,\n"
      R"(4,ünïcødé ✓,1969-12-31T23:59:59.500000Z,1969-12-31T23:59:59.500000,1969-12-31,)"
      R"(123.00,"{""a"":3,""b"":null}","[null,4]","{""a\""b"":3}",YWJj,-Infinity,true)"
      "\n";
  EXPECT_EQ(Render({SampleBatch()}, OutputFormat::kCsv), expected);
}

TEST(OutputFormat, CsvQuotesHeadersAndCarriageReturns) {
  auto column = FromJson(arrow::utf8(), R"(["", null, "a\rb", "x"])");
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("a,b", arrow::utf8())}), 4,
                                        {column});
  EXPECT_EQ(Render({batch}, OutputFormat::kCsv), "\"a,b\"\n\"\"\n\n\"a\rb\"\nx\n");
}

TEST(OutputFormat, TableAlignsColumnsAndShowsNull) {
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(
      schema, 3,
      {FromJson(arrow::int64(), "[1, null, 100]"),
       FromJson(arrow::utf8(), R"(["a", "ünï", "x\ny"])")});
  EXPECT_EQ(Render({batch}, OutputFormat::kTable),
            "id   | name\n"
            "-----+-----\n"
            "   1 | a\n"
            "NULL | ünï\n"
            " 100 | x\\ny\n");
}

TEST(OutputFormat, TableOfEveryKindOfValueKeepsSeparatorsAligned) {
  const std::string text = Render({SampleBatch()}, OutputFormat::kTable);
  auto lines = Lines(text);
  ASSERT_EQ(lines.size(), 2u + 4u);
  EXPECT_THAT(lines[0], HasSubstr("id"));
  EXPECT_THAT(text, HasSubstr("2024-01-15T10:30:00.123456Z"));
  EXPECT_THAT(text, HasSubstr("| 2024-01-15T10:30:00.123456 "));
  EXPECT_THAT(text, HasSubstr(R"({"a":null,"b":"y\"z"})"));
  EXPECT_THAT(text, HasSubstr(R"(a,b "q"\nnext)"));
  EXPECT_THAT(lines[4], HasSubstr("NULL"));
  // The column separators sit at the same display column on every line.
  auto separator_columns = [](const std::string& line) {
    std::vector<size_t> at;
    size_t cp = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
      if (line[i] == '|' || line[i] == '+') at.push_back(cp);
      ++cp;
    }
    return at;
  };
  const auto expected = separator_columns(lines[1]);
  EXPECT_EQ(expected.size(), 11u);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 1) continue;
    // Values may contain '|' only inside JSON text, which the sample does not have.
    EXPECT_EQ(separator_columns(lines[i]), expected) << lines[i];
  }
}

TEST(OutputFormat, ParquetReadsBackEqualToTheInput) {
  auto batch = SampleBatch();
  const std::string bytes = Render({batch, batch}, OutputFormat::kParquet);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 4), "PAR1");
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "PAR1");

  auto input = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
  auto reader = parquet::arrow::OpenFile(input, arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto read = (*reader)->ReadTable();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  std::shared_ptr<arrow::Table> table = *read;
  auto expected = arrow::Table::FromRecordBatches({batch, batch}).ValueOrDie();
  EXPECT_TRUE(table->schema()->Equals(*expected->schema())) << table->schema()->ToString();
  EXPECT_TRUE(table->Equals(*expected, kNansEqual)) << table->ToString();
  auto metadata = (*reader)->parquet_reader()->metadata();
  EXPECT_EQ(metadata->num_rows(), 8);
  EXPECT_EQ(metadata->RowGroup(0)->ColumnChunk(0)->compression(), parquet::Compression::SNAPPY);
}

// A struct array of `children` whose rows are null where `valid` (a JSON list of booleans) is
// false; the children keep whatever they hold at those rows, nulls in NOT NULL fields included,
// as a scan of a Delta file returns them.
std::shared_ptr<arrow::Array> StructWithNulls(const std::shared_ptr<arrow::DataType>& type,
                                              const arrow::ArrayVector& children,
                                              const std::string& valid) {
  auto mask = FromJson(arrow::boolean(), valid);
  const int64_t nulls = mask->length() - std::static_pointer_cast<arrow::BooleanArray>(mask)->true_count();
  auto array = arrow::StructArray::Make(children, type->fields(), mask->data()->buffers[1], nulls);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return *array;
}

std::shared_ptr<arrow::Table> ReadParquetBytes(const std::string& bytes) {
  auto input = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
  auto reader = parquet::arrow::OpenFile(input, arrow::default_memory_pool());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  auto read = (*reader)->ReadTable();
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  return *read;
}

// s struct<a int NOT NULL, inner struct<x string NOT NULL> NOT NULL>,
// xs array<struct<k string NOT NULL, v int>>; rows 1 (s) and 2 (an element of xs) are null
// structs whose NOT NULL fields hold nulls.
std::shared_ptr<arrow::RecordBatch> NullStructsWithRequiredFields() {
  auto inner_type = arrow::struct_({arrow::field("x", arrow::utf8(), false)});
  auto s_type = arrow::struct_(
      {arrow::field("a", arrow::int32(), false), arrow::field("inner", inner_type, false)});
  auto inner = StructWithNulls(inner_type, {FromJson(arrow::utf8(), R"(["p", null, "r"])")},
                               "[true, false, true]");
  auto s = StructWithNulls(s_type, {FromJson(arrow::int32(), "[1, null, 3]"), inner},
                           "[true, false, true]");
  auto kv_type = arrow::struct_(
      {arrow::field("k", arrow::utf8(), false), arrow::field("v", arrow::int32())});
  auto elements = StructWithNulls(
      kv_type, {FromJson(arrow::utf8(), R"(["k1", "k2", null, "k4"])"),
                FromJson(arrow::int32(), "[1, null, null, 4]")},
      "[true, true, false, true]");
  auto offsets = FromJson(arrow::int32(), "[0, 1, 2, 4]");
  auto xs = arrow::ListArray::FromArrays(*offsets, *elements).ValueOrDie();
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false),
                               arrow::field("s", s_type), arrow::field("xs", xs->type())});
  return arrow::RecordBatch::Make(schema, 3, {FromJson(arrow::int64(), "[1, 2, 3]"), s, xs});
}

TEST(OutputFormat, ParquetWritesNullStructsWithNotNullFieldsAndKeepsTheirNullability) {
  auto batch = NullStructsWithRequiredFields();
  ASSERT_TRUE(batch->ValidateFull().ok());
  // The slice starts at the null struct, so offsets into the children are exercised too.
  for (const auto& [input, null_row] :
       {std::pair{batch, int64_t{1}}, std::pair{batch->Slice(1, 2), int64_t{0}}}) {
    auto table = ReadParquetBytes(Render({input}, OutputFormat::kParquet));
    ASSERT_NE(table, nullptr);
    EXPECT_TRUE(table->schema()->Equals(*batch->schema())) << table->schema()->ToString();
    auto expected = arrow::Table::FromRecordBatches({input}).ValueOrDie();
    EXPECT_TRUE(table->Equals(*expected)) << table->ToString() << "\nvs\n" << expected->ToString();
    auto s = table->GetColumnByName("s");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->null_count(), 1);
    EXPECT_FALSE(s->GetScalar(null_row).ValueOrDie()->is_valid);
  }
  // The JSON rendering of the same rows shows the null struct as null, not its fields.
  const auto lines = Lines(Render({batch}, OutputFormat::kJson));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[1], HasSubstr(R"("s":null)"));
}

TEST(OutputFormat, ParquetRefusesAVisibleNullInANotNullField) {
  auto s_type = arrow::struct_({arrow::field("a", arrow::int32(), false)});
  // Row 1's struct is present but its NOT NULL field is null: data the schema does not allow.
  auto s = StructWithNulls(s_type, {FromJson(arrow::int32(), "[1, null]")}, "[true, true]");
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("s", s_type)}), 2, {s});
  auto reader = arrow::RecordBatchReader::Make({batch}).ValueOrDie();
  std::ostringstream out;
  auto st = WriteRecordBatches(*reader, OutputFormat::kParquet, out, {});
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("field 's.a' is declared NOT NULL but holds a null"));
}

TEST(OutputFormat, ParquetChecksListElementsOfTheRowsWritten) {
  // xs array<struct<k string NOT NULL>>: row 0's element is a null struct (k masked), row 1's
  // element is present with k null (not allowed).
  auto kv_type = arrow::struct_({arrow::field("k", arrow::utf8(), false)});
  auto elements =
      StructWithNulls(kv_type, {FromJson(arrow::utf8(), "[null, null]")}, "[false, true]");
  auto xs = arrow::ListArray::FromArrays(*FromJson(arrow::int32(), "[0, 1, 2]"), *elements)
                .ValueOrDie();
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("xs", xs->type())}), 2, {xs});
  auto write = [](const std::shared_ptr<arrow::RecordBatch>& b) {
    auto reader = arrow::RecordBatchReader::Make({b}).ValueOrDie();
    std::ostringstream out;
    return WriteRecordBatches(*reader, OutputFormat::kParquet, out, {});
  };
  EXPECT_TRUE(write(batch->Slice(0, 1)).ok());
  for (const auto& refused : {batch, batch->Slice(1, 1)}) {
    auto st = write(refused);
    ASSERT_TRUE(st.IsInvalid()) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("field 'xs.element.k' is declared NOT NULL"));
  }
}

TEST(OutputFormat, LimitStopsAfterThatManyRowsAcrossBatches) {
  auto batch = SampleBatch();
  const std::vector<std::shared_ptr<arrow::RecordBatch>> batches = {batch, batch, batch};
  EXPECT_EQ(Lines(Render(batches, OutputFormat::kJson, 6)).size(), 6u);
  EXPECT_EQ(Lines(Render(batches, OutputFormat::kJson)).size(), 12u);
  EXPECT_EQ(Lines(Render(batches, OutputFormat::kTable, 5)).size(), 2u + 5u);
  // One CSV row spans two lines (a quoted newline), so count rows by their leading id.
  const auto csv = Lines(Render(batches, OutputFormat::kCsv, 2));
  ASSERT_EQ(csv.size(), 1u + 3u);
  EXPECT_EQ(csv[0].substr(0, 3), "id,");
  EXPECT_EQ(csv[1].substr(0, 2), "1,");
  EXPECT_EQ(csv[2].substr(0, 2), "2,");
  EXPECT_EQ(Render(batches, OutputFormat::kCsv, 0), "id,name,ts,ntz,d,dec,st,lst,m,bin,f,b\n");
  EXPECT_EQ(Render(batches, OutputFormat::kJson, 0), "");

  const std::string bytes = Render(batches, OutputFormat::kParquet, 7);
  auto input = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
  auto reader = parquet::arrow::OpenFile(input, arrow::default_memory_pool()).ValueOrDie();
  auto read = reader->ReadTable();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  std::shared_ptr<arrow::Table> table = *read;
  EXPECT_EQ(table->num_rows(), 7);
  auto expected = arrow::Table::FromRecordBatches({batch, batch->Slice(0, 3)}).ValueOrDie();
  EXPECT_TRUE(table->Equals(*expected, kNansEqual));
}

TEST(OutputFormat, NegativeLimitIsInvalid) {
  auto reader = arrow::RecordBatchReader::Make({SampleBatch()}).ValueOrDie();
  std::ostringstream out;
  EXPECT_TRUE(WriteRecordBatches(*reader, OutputFormat::kCsv, out, {.limit = -1}).IsInvalid());
}

TEST(OutputFormat, TimestampUnitsZonesAndTimes) {
  using arrow::TimeUnit;
  // Fractions use the unit's digit count and appear only when non-zero; any zone prints in UTC.
  EXPECT_EQ(RenderColumn(FromJson(arrow::timestamp(TimeUnit::MILLI, "UTC"), "[1705314600120, 0]"),
                         OutputFormat::kJson),
            "{\"v\":\"2024-01-15T10:30:00.120Z\"}\n{\"v\":\"1970-01-01T00:00:00Z\"}\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::timestamp(TimeUnit::NANO), "[1705314600000000001]"),
                         OutputFormat::kCsv),
            "v\n2024-01-15T10:30:00.000000001\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::timestamp(TimeUnit::SECOND, "America/New_York"),
                                  "[1705314600]"),
                         OutputFormat::kCsv),
            "v\n2024-01-15T10:30:00Z\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::date64(), "[1705276800000]"), OutputFormat::kCsv),
            "v\n2024-01-15\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::date32(), "[-719528, 2932896]"), OutputFormat::kCsv),
            "v\n0000-01-01\n9999-12-31\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::time64(TimeUnit::MICRO), "[37800000001]"),
                         OutputFormat::kJson),
            "{\"v\":\"10:30:00.000001\"}\n");
}

TEST(OutputFormat, NumbersAndOtherTypes) {
  EXPECT_EQ(RenderColumn(FromJson(arrow::float64(), "[0.1, 1e300, -2.5]"), OutputFormat::kJson),
            "{\"v\":0.1}\n{\"v\":1e+300}\n{\"v\":-2.5}\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::float32(), "[0.1]"), OutputFormat::kCsv), "v\n0.1\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::decimal128(10, 3), R"(["-1.000", "0.001"])"),
                         OutputFormat::kJson),
            "{\"v\":-1.000}\n{\"v\":0.001}\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::large_utf8(), R"(["tab\there"])"), OutputFormat::kJson),
            "{\"v\":\"tab\\there\"}\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::map(arrow::int32(), arrow::utf8()),
                                  R"([[[1, "one"], [2, null]]])"),
                         OutputFormat::kJson),
            R"({"v":[{"key":1,"value":"one"},{"key":2,"value":null}]})"
            "\n");
  auto dict = FromJson(arrow::dictionary(arrow::int8(), arrow::utf8()), R"(["x", "y", "x"])");
  EXPECT_EQ(RenderColumn(dict, OutputFormat::kCsv), "v\nx\ny\nx\n");
  EXPECT_EQ(RenderColumn(FromJson(arrow::uint64(), "[18446744073709551615]"), OutputFormat::kCsv),
            "v\n18446744073709551615\n");
  // Control characters are escaped in JSON strings.
  EXPECT_EQ(RenderColumn(FromJson(arrow::utf8(), R"(["\u0001"])"), OutputFormat::kJson),
            "{\"v\":\"\\u0001\"}\n");
}

TEST(OutputFormat, ReaderErrorsPropagate) {
  class FailingReader : public arrow::RecordBatchReader {
   public:
    std::shared_ptr<arrow::Schema> schema() const override {
      return arrow::schema({arrow::field("v", arrow::int32())});
    }
    arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>*) override {
      return arrow::Status::IOError("disk on fire");
    }
  };
  for (auto format : {OutputFormat::kTable, OutputFormat::kCsv, OutputFormat::kJson,
                      OutputFormat::kParquet}) {
    FailingReader reader;
    std::ostringstream out;
    auto st = WriteRecordBatches(reader, format, out, {});
    EXPECT_TRUE(st.IsIOError()) << st.ToString();
  }
}

}  // namespace
}  // namespace deltacpp::cli
