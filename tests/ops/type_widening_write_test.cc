// Writes that widen column types (mergeSchema + delta.enableTypeWidening), the recorded
// delta.typeChanges, the refusals, and the Parquet codec option of WriteTable.
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "deltacpp/api.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/transaction.h"
#include "log/file_action_schema.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Latest;
using testing::LogListing;
using testing::TempDir;

// One-batch reader; columns are given as (field, JSON values).
std::shared_ptr<arrow::RecordBatchReader> Input(
    const std::vector<std::pair<std::shared_ptr<arrow::Field>, std::string>>& columns) {
  arrow::FieldVector fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (const auto& [field, json] : columns) {
    fields.push_back(field);
    auto array = arrow::json::ArrayFromJSONString(field->type(), json);
    EXPECT_TRUE(array.ok()) << array.status().ToString();
    arrays.push_back(*array);
  }
  return testing::Rows(arrow::schema(fields), arrays);
}

// Every row of the latest version as "a|b|..." text, sorted, plus the scanned schema.
std::multiset<std::string> ReadAll(const std::string& path,
                                   std::shared_ptr<arrow::Schema>* schema = nullptr) {
  auto t = testing::ReadTable(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (schema) *schema = (*t)->schema();
  return testing::RowStrings(**t);
}

// The raw `delta.typeChanges` metadata of a (possibly nested) field, "" when absent.
std::string TypeChanges(const std::shared_ptr<arrow::Field>& field) {
  if (!field || !field->metadata()) return "";
  auto v = field->metadata()->Get("delta.typeChanges");
  return v.ok() ? *v : "";
}

std::shared_ptr<arrow::Field> Column(const std::string& path, const std::string& name) {
  return Latest(path)->schema()->GetFieldByName(name);
}

bool HasFeature(const Snapshot& snap, const std::string& feature) {
  auto features = snap.table_features();
  return std::find(features.begin(), features.end(), feature) != features.end();
}

WriteOptions Widening() {
  WriteOptions o;
  o.merge_schema = true;
  return o;
}

WriteOptions CreateWithWidening() {
  WriteOptions o;
  o.properties = {{"delta.enableTypeWidening", "true"}};
  return o;
}

TEST(TypeWideningWrite, IntColumnBecomesLong) {
  TempDir dir;
  auto id = arrow::field("id", arrow::int32());
  auto name = arrow::field("name", arrow::utf8());
  ASSERT_TRUE(WriteTable(dir.str(), Input({{id, "[1, 2]"}, {name, R"(["a", "b"])"}}),
                         CreateWithWidening())
                  .ok());
  EXPECT_TRUE(HasFeature(*Latest(dir.str()), "typeWidening"));

  auto big = arrow::field("id", arrow::int64());
  auto r = WriteTable(dir.str(), Input({{big, "[5000000000]"}, {name, R"(["c"])"}}), Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 1);

  auto field = Column(dir.str(), "id");
  EXPECT_TRUE(field->type()->Equals(arrow::int64())) << field->ToString();
  EXPECT_EQ(TypeChanges(field), R"([{"fromType":"integer","toType":"long"}])");
  EXPECT_EQ(TypeChanges(Column(dir.str(), "name")), "");

  std::shared_ptr<arrow::Schema> scanned;
  EXPECT_EQ(ReadAll(dir.str(), &scanned),
            (std::multiset<std::string>{"1|a", "2|b", "5000000000|c"}));
  EXPECT_TRUE(scanned->field(0)->type()->Equals(arrow::int64()));

  // Narrower input into the widened column is an implicit cast, no further change.
  r = WriteTable(dir.str(), Input({{id, "[7]"}, {name, R"(["d"])"}}), Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(TypeChanges(Column(dir.str(), "id")), R"([{"fromType":"integer","toType":"long"}])");
  EXPECT_EQ(ReadAll(dir.str()).size(), 4u);
}

TEST(TypeWideningWrite, WithoutThePropertyTheWriteIsRefused) {
  TempDir dir;
  auto id = arrow::field("id", arrow::int32());
  ASSERT_TRUE(WriteTable(dir.str(), Input({{id, "[1, 2]"}}), WriteOptions{}).ok());
  auto before = LogListing(dir.str());
  auto r = WriteTable(dir.str(), Input({{arrow::field("id", arrow::int64()), "[3]"}}),
                      Widening());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(GetDeltaErrorCode(r.status()), DeltaErrorCode::kSchemaMismatch);
  EXPECT_NE(r.status().message().find("'id'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("int32"), std::string::npos);
  EXPECT_NE(r.status().message().find("int64"), std::string::npos);
  EXPECT_NE(r.status().message().find("delta.enableTypeWidening"), std::string::npos);
  EXPECT_EQ(LogListing(dir.str()), before);
  EXPECT_TRUE(Column(dir.str(), "id")->type()->Equals(arrow::int32()));
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1", "2"}));
}

TEST(TypeWideningWrite, WithoutMergeSchemaTheWriteIsRefused) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Input({{arrow::field("id", arrow::int32()), "[1]"}}),
                         CreateWithWidening())
                  .ok());
  auto before = LogListing(dir.str());
  auto r = WriteTable(dir.str(), Input({{arrow::field("id", arrow::int64()), "[3]"}}),
                      WriteOptions{});
  EXPECT_EQ(GetDeltaErrorCode(r.status()), DeltaErrorCode::kSchemaMismatch);
  EXPECT_NE(r.status().message().find("mergeSchema"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(LogListing(dir.str()), before);
}

TEST(TypeWideningWrite, ChangesDeltaDoesNotAllowAreRefused) {
  TempDir dir;
  auto l = arrow::field("l", arrow::int64());
  auto i = arrow::field("i", arrow::int32());
  auto s = arrow::field("s", arrow::utf8());
  auto d = arrow::field("d", arrow::decimal128(5, 2));
  ASSERT_TRUE(WriteTable(dir.str(),
                         Input({{l, "[1]"}, {i, "[2]"}, {s, R"(["x"])"}, {d, R"(["1.25"])"}}),
                         CreateWithWidening())
                  .ok());
  auto before = LogListing(dir.str());
  struct Case {
    std::shared_ptr<arrow::Field> input;
    std::string json;
    std::string column;
  };
  const std::vector<Case> cases = {
      {arrow::field("l", arrow::float64()), "[1.5]", "l"},           // long -> double
      {arrow::field("i", arrow::utf8()), R"(["2"])", "i"},           // int -> string
      {arrow::field("s", arrow::int32()), "[3]", "s"},               // string -> int
      {arrow::field("i", arrow::float32()), "[1.5]", "i"},           // int -> float
      {arrow::field("d", arrow::decimal128(5, 3)), R"(["1.250"])", "d"},  // scale without digits
      {arrow::field("d", arrow::decimal128(6, 1)), R"(["12345.6"])", "d"},  // scale drops
      {arrow::field("l", arrow::decimal128(19, 0)), R"(["1"])", "l"},     // long needs 20 digits
      {arrow::field("i", arrow::decimal128(11, 2)), R"(["1.00"])", "i"},  // int needs 10 digits
  };
  for (const auto& c : cases) {
    auto r = WriteTable(dir.str(), Input({{c.input, c.json}}), Widening());
    ASSERT_FALSE(r.ok()) << c.input->ToString();
    EXPECT_EQ(GetDeltaErrorCode(r.status()), DeltaErrorCode::kSchemaMismatch)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find("'" + c.column + "'"), std::string::npos)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.input->type()->ToString()), std::string::npos)
        << r.status().ToString();
  }
  EXPECT_EQ(LogListing(dir.str()), before);
  // Narrowing input is an implicit safe cast, never a type change.
  auto r = WriteTable(dir.str(), Input({{arrow::field("l", arrow::int16()), "[9]"}}), Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(TypeChanges(Column(dir.str(), "l")), "");
}

TEST(TypeWideningWrite, EveryAllowedKindOfChange) {
  TempDir dir;
  auto field = [](const char* n, std::shared_ptr<arrow::DataType> t) { return arrow::field(n, t); };
  ASSERT_TRUE(WriteTable(dir.str(),
                         Input({{field("b", arrow::int8()), "[1]"},
                                {field("sh", arrow::int16()), "[2]"},
                                {field("f", arrow::float32()), "[1.5]"},
                                {field("dt", arrow::date32()), "[19723]"},
                                {field("dec", arrow::decimal128(5, 2)), R"(["1.25"])"},
                                {field("i2d", arrow::int32()), "[7]"},
                                {field("l2d", arrow::int64()), "[8]"}}),
                         CreateWithWidening())
                  .ok());
  auto r = WriteTable(
      dir.str(),
      Input({{field("b", arrow::int16()), "[300]"},
             {field("sh", arrow::float64()), "[2.5]"},
             {field("f", arrow::float64()), "[0.1]"},
             {field("dt", arrow::timestamp(arrow::TimeUnit::MICRO)), "[1704067200000000]"},
             {field("dec", arrow::decimal128(8, 4)), R"(["123.4567"])"},
             {field("i2d", arrow::decimal128(12, 2)), R"(["1.50"])"},
             {field("l2d", arrow::decimal128(20, 0)), R"(["99999999999999999999"])"}}),
      Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  const auto& schema = *snap->schema();
  EXPECT_TRUE(schema.GetFieldByName("b")->type()->Equals(arrow::int16()));
  EXPECT_TRUE(schema.GetFieldByName("sh")->type()->Equals(arrow::float64()));
  EXPECT_TRUE(schema.GetFieldByName("dt")->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO)));
  EXPECT_TRUE(schema.GetFieldByName("dec")->type()->Equals(arrow::decimal128(8, 4)));
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("b")), R"([{"fromType":"byte","toType":"short"}])");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("sh")),
            R"([{"fromType":"short","toType":"double"}])");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("f")),
            R"([{"fromType":"float","toType":"double"}])");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("dt")),
            R"([{"fromType":"date","toType":"timestamp_ntz"}])");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("dec")),
            R"j([{"fromType":"decimal(5,2)","toType":"decimal(8,4)"}])j");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("i2d")),
            R"j([{"fromType":"integer","toType":"decimal(12,2)"}])j");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("l2d")),
            R"j([{"fromType":"long","toType":"decimal(20,0)"}])j");
  // Old rows read in the new types.
  EXPECT_EQ(ReadAll(dir.str()),
            (std::multiset<std::string>{
                "1|2|1.5|2024-01-01 00:00:00.000000|1.2500|7.00|8",
                "300|2.5|0.1|2024-01-01 00:00:00.000000|123.4567|1.50|99999999999999999999"}));
}

// Rows of the latest version matching `predicate` (data skipping uses the old files' stats).
size_t CountWhere(const std::string& path, const std::string& predicate) {
  auto scan = Latest(path)->NewScan().Filter(predicate).Build();
  EXPECT_TRUE(scan.ok()) << predicate << ": " << scan.status().ToString();
  if (!scan.ok()) return 0;
  auto t = (*scan)->ToTable();
  EXPECT_TRUE(t.ok()) << predicate << ": " << t.status().ToString();
  return t.ok() ? static_cast<size_t>((*t)->num_rows()) : 0;
}

TEST(TypeWideningWrite, FiltersSeeOldFilesInTheNewTypes) {
  TempDir dir;
  auto field = [](const char* n, std::shared_ptr<arrow::DataType> t) { return arrow::field(n, t); };
  ASSERT_TRUE(WriteTable(dir.str(),
                         Input({{field("i", arrow::int32()), "[7, 9]"},
                                {field("dt", arrow::date32()), "[19723, 19724]"},
                                {field("dec", arrow::decimal128(5, 2)), R"(["1.25", "2.50"])"}}),
                         CreateWithWidening())
                  .ok());
  ASSERT_TRUE(WriteTable(dir.str(),
                         Input({{field("i", arrow::decimal128(12, 2)), R"(["100.50"])"},
                                {field("dt", arrow::timestamp(arrow::TimeUnit::MICRO)),
                                 "[1704103200000000]"},
                                {field("dec", arrow::decimal128(8, 4)), R"(["3.1234"])"}}),
                         Widening())
                  .ok());
  EXPECT_EQ(CountWhere(dir.str(), "i = 7"), 1u);
  EXPECT_EQ(CountWhere(dir.str(), "i > 8"), 2u);
  EXPECT_EQ(CountWhere(dir.str(), "dec = 1.25"), 1u);
  EXPECT_EQ(CountWhere(dir.str(), "dec > 2"), 2u);
  EXPECT_EQ(CountWhere(dir.str(), "dt >= '2024-01-02'"), 1u);
  EXPECT_EQ(CountWhere(dir.str(), "dt < '2024-01-02'"), 2u);
}

TEST(TypeWideningWrite, PartitionColumnsWidenToo) {
  TempDir dir;
  WriteOptions create = CreateWithWidening();
  create.partition_by = {"p"};
  auto v = arrow::field("v", arrow::utf8());
  ASSERT_TRUE(WriteTable(dir.str(),
                         Input({{v, R"(["a", "b"])"}, {arrow::field("p", arrow::int32()), "[1, 2]"}}),
                         create)
                  .ok());
  auto r = WriteTable(dir.str(),
                      Input({{v, R"(["c"])"}, {arrow::field("p", arrow::int64()), "[5000000000]"}}),
                      Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Column(dir.str(), "p")->type()->Equals(arrow::int64()));
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"a|1", "b|2", "c|5000000000"}));
  EXPECT_EQ(CountWhere(dir.str(), "p = 2"), 1u);
  EXPECT_EQ(CountWhere(dir.str(), "p > 2"), 1u);
}

TEST(TypeWideningWrite, LaterChangesAreAppended) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Input({{arrow::field("v", arrow::int8()), "[1]"}}),
                         CreateWithWidening())
                  .ok());
  ASSERT_TRUE(
      WriteTable(dir.str(), Input({{arrow::field("v", arrow::int16()), "[2]"}}), Widening()).ok());
  ASSERT_TRUE(
      WriteTable(dir.str(), Input({{arrow::field("v", arrow::int64()), "[3]"}}), Widening()).ok());
  EXPECT_EQ(TypeChanges(Column(dir.str(), "v")),
            R"([{"fromType":"byte","toType":"short"},{"fromType":"short","toType":"long"}])");
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1", "2", "3"}));
}

TEST(TypeWideningWrite, NestedChangesRecordTheirFieldPath) {
  TempDir dir;
  auto st = arrow::field("st", arrow::struct_({arrow::field("a", arrow::int32()),
                                               arrow::field("b", arrow::utf8())}));
  auto arr = arrow::field("arr", arrow::list(arrow::int16()));
  auto mp = arrow::field("mp", arrow::map(arrow::utf8(), arrow::int32()));
  ASSERT_TRUE(WriteTable(dir.str(),
                         Input({{st, R"([{"a": 1, "b": "x"}])"},
                                {arr, "[[1, 2]]"},
                                {mp, R"([[["k", 1]]])"}}),
                         CreateWithWidening())
                  .ok());
  auto st2 = arrow::field("st", arrow::struct_({arrow::field("a", arrow::int64()),
                                                arrow::field("b", arrow::utf8())}));
  auto arr2 = arrow::field("arr", arrow::list(arrow::int32()));
  auto mp2 = arrow::field("mp", arrow::map(arrow::utf8(), arrow::int64()));
  auto r = WriteTable(dir.str(),
                      Input({{st2, R"([{"a": 5000000000, "b": "y"}])"},
                             {arr2, "[[100000]]"},
                             {mp2, R"([[["k", 6000000000]]])"}}),
                      Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  const auto& schema = *snap->schema();
  auto st_field = schema.GetFieldByName("st");
  EXPECT_EQ(TypeChanges(st_field), "");
  EXPECT_EQ(TypeChanges(std::static_pointer_cast<arrow::StructType>(st_field->type())->GetFieldByName("a")),
            R"([{"fromType":"integer","toType":"long"}])");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("arr")),
            R"([{"fromType":"short","toType":"integer","fieldPath":"element"}])");
  EXPECT_EQ(TypeChanges(schema.GetFieldByName("mp")),
            R"([{"fromType":"integer","toType":"long","fieldPath":"value"}])");
  auto rows = ReadAll(dir.str());
  ASSERT_EQ(rows.size(), 2u);
  std::string all;
  for (const auto& row : rows) all += row + "\n";
  EXPECT_NE(all.find("5000000000"), std::string::npos) << all;
  EXPECT_NE(all.find("100000"), std::string::npos) << all;
  EXPECT_NE(all.find("6000000000"), std::string::npos) << all;
}

TEST(TypeWideningWrite, AddsTheFeatureToTablesThatLackIt) {
  TempDir dir;
  // A table whose property allows widening but whose protocol predates the feature.
  Protocol protocol;
  protocol.min_reader_version = 1;
  protocol.min_writer_version = 2;
  Metadata metadata;
  metadata.id = "00000000-0000-4000-8000-0000000000aa";
  metadata.schema_string =
      R"({"type":"struct","fields":[{"name":"v","type":"integer","nullable":true,"metadata":{}}]})";
  metadata.configuration = {{"delta.enableTypeWidening", "true"}};
  auto txn = Transaction::StartCreate(dir.str(), MakeLocalLogStore());
  ASSERT_TRUE(txn.ok());
  (*txn)->UpdateProtocol(protocol);
  (*txn)->UpdateMetadata(metadata);
  ASSERT_TRUE((*txn)->Commit("CREATE TABLE").ok());
  ASSERT_TRUE(
      WriteTable(dir.str(), Input({{arrow::field("v", arrow::int32()), "[1]"}}), WriteOptions{})
          .ok());
  EXPECT_FALSE(HasFeature(*Latest(dir.str()), "typeWidening"));

  auto r = WriteTable(dir.str(), Input({{arrow::field("v", arrow::int64()), "[2]"}}), Widening());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = Latest(dir.str());
  EXPECT_TRUE(HasFeature(*snap, "typeWidening"));
  EXPECT_TRUE(HasFeature(*snap, "appendOnly"));  // the legacy features stay supported
  EXPECT_EQ(snap->protocol().min_reader_version, 3);
  EXPECT_EQ(snap->protocol().min_writer_version, 7);
  EXPECT_TRUE(snap->schema()->GetFieldByName("v")->type()->Equals(arrow::int64()));
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1", "2"}));
}

// The codec of the first column chunk of every data file of the latest version.
std::set<parquet::Compression::type> Codecs(const std::string& root) {
  std::set<parquet::Compression::type> out;
  auto snap = Latest(root);
  const auto& paths =
      static_cast<const arrow::StringArray&>(*snap->files()->column(internal::kPathCol));
  for (int64_t i = 0; i < paths.length(); ++i) {
    auto reader = parquet::ParquetFileReader::OpenFile(root + "/" + std::string(paths.GetView(i)));
    out.insert(reader->metadata()->RowGroup(0)->ColumnChunk(0)->compression());
  }
  return out;
}

TEST(WriteCompression, DataFilesUseTheRequestedCodec) {
  TempDir dir;
  auto v = arrow::field("v", arrow::int64());
  ASSERT_TRUE(WriteTable(dir.str(), Input({{v, "[1, 2, 3]"}}), WriteOptions{}).ok());
  EXPECT_EQ(Codecs(dir.str()), std::set<parquet::Compression::type>{parquet::Compression::SNAPPY});

  WriteOptions zstd;
  zstd.mode = WriteMode::kOverwrite;
  zstd.compression = "zstd";
  ASSERT_TRUE(WriteTable(dir.str(), Input({{v, "[4, 5]"}}), zstd).ok());
  EXPECT_EQ(Codecs(dir.str()), std::set<parquet::Compression::type>{parquet::Compression::ZSTD});

  WriteOptions none;
  none.mode = WriteMode::kOverwrite;
  none.compression = "uncompressed";
  ASSERT_TRUE(WriteTable(dir.str(), Input({{v, "[6]"}}), none).ok());
  EXPECT_EQ(Codecs(dir.str()),
            std::set<parquet::Compression::type>{parquet::Compression::UNCOMPRESSED});
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"6"}));

  auto before = LogListing(dir.str());
  WriteOptions bad;
  bad.compression = "lzma9";
  auto r = WriteTable(dir.str(), Input({{v, "[7]"}}), bad);
  EXPECT_EQ(GetDeltaErrorCode(r.status()), DeltaErrorCode::kInvalidArgument)
      << r.status().ToString();
  EXPECT_EQ(LogListing(dir.str()), before);
}

}  // namespace
}  // namespace deltacpp
