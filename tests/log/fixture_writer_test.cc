// Checks that the test fixture writer lays tables down in the Delta format.
#include "support/fixture_writer.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "protocol/deletion_vector.h"
#include "support/temp_dir.h"

namespace deltacpp::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string CommitPath(const std::string& root, int64_t version) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020lld.json", static_cast<long long>(version));
  return root + "/_delta_log/" + name;
}

/// The NDJSON lines of a commit, each parsed with its own simdjson parser.
class CommitLines {
 public:
  explicit CommitLines(const std::string& path) {
    std::istringstream in(ReadText(path));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      texts_.push_back(line);
    }
    for (const auto& t : texts_) {
      parsers_.push_back(std::make_unique<simdjson::dom::parser>());
      simdjson::dom::element el;
      auto err = parsers_.back()->parse(t).get(el);
      EXPECT_EQ(err, simdjson::SUCCESS) << t;
      elements_.push_back(el);
    }
  }
  size_t size() const { return elements_.size(); }
  const std::string& text(size_t i) const { return texts_[i]; }
  /// The action body of line `i` if it is a `kind` action.
  std::optional<simdjson::dom::object> Action(size_t i, const char* kind) const {
    simdjson::dom::object obj;
    if (elements_[i][kind].get(obj) != simdjson::SUCCESS) return std::nullopt;
    return obj;
  }
  std::vector<simdjson::dom::object> All(const char* kind) const {
    std::vector<simdjson::dom::object> out;
    for (size_t i = 0; i < size(); ++i) {
      if (auto a = Action(i, kind)) out.push_back(*a);
    }
    return out;
  }

 private:
  std::vector<std::string> texts_;
  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers_;
  std::vector<simdjson::dom::element> elements_;
};

std::string Str(simdjson::dom::element el) {
  std::string_view s;
  EXPECT_EQ(el.get(s), simdjson::SUCCESS);
  return std::string(s);
}
int64_t Int(simdjson::dom::element el) {
  int64_t v = 0;
  EXPECT_EQ(el.get(v), simdjson::SUCCESS);
  return v;
}
bool Bool(simdjson::dom::element el) {
  bool v = false;
  EXPECT_EQ(el.get(v), simdjson::SUCCESS);
  return v;
}

std::shared_ptr<arrow::Table> ReadParquet(const std::string& path, int* row_groups = nullptr) {
  auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
  auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  if (row_groups) *row_groups = reader->num_row_groups();
  return reader->ReadTable().ValueOrDie()->CombineChunks().ValueOrDie();
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::shared_ptr<arrow::Table> MakeTable(const std::shared_ptr<arrow::Schema>& schema,
                                        const std::vector<std::string>& json_columns) {
  arrow::ArrayVector arrays;
  for (int i = 0; i < schema->num_fields(); ++i) {
    arrays.push_back(
        arrow::json::ArrayFromJSONString(schema->field(i)->type(), json_columns[i]).ValueOrDie());
  }
  return arrow::Table::Make(schema, arrays);
}

std::shared_ptr<arrow::Table> IdTable(int64_t first, int64_t n) {
  arrow::Int64Builder b;
  for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(b.Append(first + i).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  return arrow::Table::Make(schema, {b.Finish().ValueOrDie()});
}

class FixtureWriterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(arrow::compute::Initialize().ok()); }
  TempDir dir_;
};

TEST_F(FixtureWriterTest, CreateWritesCommitInfoProtocolAndMetadata) {
  auto key_value = arrow::key_value_metadata({"delta.columnMapping.id", "comment"}, {"7", "hi"});
  auto schema = arrow::schema({
      arrow::field("id", arrow::int64(), false),
      arrow::field("name", arrow::utf8()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("d", arrow::date32()),
      arrow::field("amount", arrow::decimal128(10, 2)),
      arrow::field("s", arrow::struct_({arrow::field("x", arrow::int32())}), true, key_value),
      arrow::field("l", arrow::list(arrow::field("element", arrow::utf8(), false))),
      arrow::field("m", arrow::map(arrow::utf8(), arrow::float64())),
      arrow::field("p", arrow::utf8()),
  });
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(
      writer.Create(schema, {"p"}, {{"delta.appendOnly", "false"}}, 1, 2, {}, {}, 1700000000123)
          .ok());
  EXPECT_EQ(writer.version(), 0);

  CommitLines lines(CommitPath(dir_.str(), 0));
  ASSERT_EQ(lines.size(), 3u);
  auto info = lines.Action(0, "commitInfo");
  ASSERT_TRUE(info.has_value()) << "commitInfo must be the first line";
  EXPECT_EQ(Int((*info)["timestamp"]), 1700000000123);
  EXPECT_EQ(Str((*info)["operation"]), "CREATE TABLE");
  EXPECT_EQ(Str((*info)["operationParameters"]["partitionBy"]), "[\"p\"]");
  EXPECT_FALSE(Str((*info)["engineInfo"]).empty());

  auto protocol = lines.All("protocol");
  ASSERT_EQ(protocol.size(), 1u);
  EXPECT_EQ(Int(protocol[0]["minReaderVersion"]), 1);
  EXPECT_EQ(Int(protocol[0]["minWriterVersion"]), 2);
  EXPECT_EQ(protocol[0]["readerFeatures"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(protocol[0]["writerFeatures"].error(), simdjson::NO_SUCH_FIELD);

  auto md = lines.All("metaData");
  ASSERT_EQ(md.size(), 1u);
  EXPECT_EQ(Str(md[0]["id"]).size(), 36u);
  EXPECT_EQ(Str(md[0]["format"]["provider"]), "parquet");
  EXPECT_EQ(Str(md[0]["partitionColumns"].at(0)), "p");
  EXPECT_EQ(Str(md[0]["configuration"]["delta.appendOnly"]), "false");
  EXPECT_EQ(Int(md[0]["createdTime"]), 1700000000123);

  simdjson::dom::parser schema_parser;
  simdjson::dom::element s;
  ASSERT_EQ(schema_parser.parse(Str(md[0]["schemaString"])).get(s), simdjson::SUCCESS);
  EXPECT_EQ(Str(s["type"]), "struct");
  auto f = s["fields"];
  EXPECT_EQ(Str(f.at(0)["name"]), "id");
  EXPECT_EQ(Str(f.at(0)["type"]), "long");
  EXPECT_FALSE(Bool(f.at(0)["nullable"]));
  EXPECT_EQ(Str(f.at(1)["type"]), "string");
  EXPECT_EQ(Str(f.at(2)["type"]), "timestamp");
  EXPECT_EQ(Str(f.at(3)["type"]), "timestamp_ntz");
  EXPECT_EQ(Str(f.at(4)["type"]), "date");
  EXPECT_EQ(Str(f.at(5)["type"]), "decimal(10,2)");
  EXPECT_EQ(Str(f.at(6)["type"]["type"]), "struct");
  EXPECT_EQ(Str(f.at(6)["type"]["fields"].at(0)["type"]), "integer");
  EXPECT_EQ(Int(f.at(6)["metadata"]["delta.columnMapping.id"]), 7);
  EXPECT_EQ(Str(f.at(6)["metadata"]["comment"]), "hi");
  EXPECT_EQ(Str(f.at(7)["type"]["type"]), "array");
  EXPECT_EQ(Str(f.at(7)["type"]["elementType"]), "string");
  EXPECT_FALSE(Bool(f.at(7)["type"]["containsNull"]));
  EXPECT_EQ(Str(f.at(8)["type"]["type"]), "map");
  EXPECT_EQ(Str(f.at(8)["type"]["keyType"]), "string");
  EXPECT_EQ(Str(f.at(8)["type"]["valueType"]), "double");
  EXPECT_TRUE(Bool(f.at(8)["type"]["valueContainsNull"]));

  EXPECT_TRUE(writer.Create(schema).IsAlreadyExists());
}

TEST_F(FixtureWriterTest, CreateWithFeaturesAndRawSchemaString) {
  FixtureTableWriter writer(dir_.str());
  const std::string schema_string =
      R"({"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}}]})";
  ASSERT_TRUE(writer
                  .CreateWithSchemaString(schema_string, {}, {}, 3, 7, {"variantType"},
                                          {"variantType", "appendOnly"})
                  .ok());
  CommitLines lines(CommitPath(dir_.str(), 0));
  auto protocol = lines.All("protocol");
  ASSERT_EQ(protocol.size(), 1u);
  EXPECT_EQ(Str(protocol[0]["readerFeatures"].at(0)), "variantType");
  EXPECT_EQ(Str(protocol[0]["writerFeatures"].at(1)), "appendOnly");
  EXPECT_EQ(Str(lines.All("metaData")[0]["schemaString"]), schema_string);

  FixtureTableWriter bad(dir_.str() + "/other");
  EXPECT_TRUE(bad.Create(arrow::schema({arrow::field("a", arrow::int32())}), {}, {}, 1, 2,
                         {"deletionVectors"})
                  .IsInvalid());
  EXPECT_TRUE(bad.Create(arrow::schema({arrow::field("a", arrow::int32())}), {"nope"}).IsInvalid());
}

TEST_F(FixtureWriterTest, AppendWritesHivePartitionedParquetAndAddActions) {
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("p", arrow::utf8())});
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer.Create(schema, {"p"}).ok());

  FixtureFile plain(IdTable(0, 10), {{"p", "a"}});
  auto escaped = FixtureFile(IdTable(10, 25), {{"p", "x/y:z"}}).WithMaxRowGroupRows(10);
  FixtureFile null_part(IdTable(100, 3), {{"p", std::nullopt}});
  auto v = writer.Append({plain, escaped, null_part}, "WRITE", 1700000001000);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 1);

  CommitLines lines(CommitPath(dir_.str(), 1));
  ASSERT_EQ(lines.size(), 4u);
  auto info = lines.Action(0, "commitInfo");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(Int((*info)["timestamp"]), 1700000001000);
  EXPECT_EQ(Str((*info)["operation"]), "WRITE");
  EXPECT_EQ(Str((*info)["operationParameters"]["mode"]), "Append");
  EXPECT_EQ(Int((*info)["readVersion"]), 0);

  auto adds = lines.All("add");
  ASSERT_EQ(adds.size(), 3u);
  const int64_t expected_rows[] = {10, 25, 3};
  const int expected_groups[] = {1, 3, 1};
  for (size_t i = 0; i < adds.size(); ++i) {
    std::string path = Str(adds[i]["path"]);
    EXPECT_TRUE(path.ends_with(".c000.snappy.parquet")) << path;
    EXPECT_TRUE(Bool(adds[i]["dataChange"]));
    EXPECT_EQ(Int(adds[i]["modificationTime"]), 1700000001000);
    std::string file = dir_.str() + "/" + PercentDecode(path);
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_EQ(Int(adds[i]["size"]), static_cast<int64_t>(fs::file_size(file)));
    int groups = 0;
    auto table = ReadParquet(file, &groups);
    EXPECT_EQ(table->num_rows(), expected_rows[i]);
    EXPECT_EQ(groups, expected_groups[i]);
    EXPECT_EQ(table->num_columns(), 1);

    simdjson::dom::parser stats_parser;
    simdjson::dom::element stats;
    ASSERT_EQ(stats_parser.parse(Str(adds[i]["stats"])).get(stats), simdjson::SUCCESS);
    EXPECT_EQ(Int(stats["numRecords"]), expected_rows[i]);
    auto ids = std::static_pointer_cast<arrow::Int64Array>(table->column(0)->chunk(0));
    EXPECT_EQ(Int(stats["minValues"]["id"]), ids->Value(0));
    EXPECT_EQ(Int(stats["maxValues"]["id"]), ids->Value(ids->length() - 1));
    EXPECT_EQ(Int(stats["nullCount"]["id"]), 0);
  }
  EXPECT_EQ(Str(adds[0]["partitionValues"]["p"]), "a");
  EXPECT_TRUE(Str(adds[0]["path"]).starts_with("p=a/"));
  // Hive escaping gives the directory `p=x%2Fy%3Az`; the URI in add.path escapes its '%' again.
  EXPECT_EQ(Str(adds[1]["partitionValues"]["p"]), "x/y:z");
  EXPECT_TRUE(Str(adds[1]["path"]).starts_with("p=x%252Fy%253Az/")) << Str(adds[1]["path"]);
  EXPECT_TRUE(fs::is_directory(dir_.str() + "/p=x%2Fy%3Az"));
  EXPECT_TRUE(adds[2]["partitionValues"]["p"].is_null());
  EXPECT_TRUE(Str(adds[2]["path"]).starts_with("p=__HIVE_DEFAULT_PARTITION__/"));

  EXPECT_EQ(writer.active_paths().size(), 3u);
  EXPECT_EQ(writer.version(), 1);

  // Partition values must match the table's partition columns.
  EXPECT_TRUE(writer.Append({FixtureFile(IdTable(0, 1))}).status().IsInvalid());
  EXPECT_EQ(writer.version(), 1);
}

TEST_F(FixtureWriterTest, StatsCoverTypesNestedColumnsAndTruncation) {
  auto inner =
      arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8())});
  auto schema = arrow::schema({
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("ntz", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("d", arrow::date32()),
      arrow::field("x", arrow::float64()),
      arrow::field("nan", arrow::float64()),
      arrow::field("dec", arrow::decimal128(10, 2)),
      arrow::field("s", arrow::utf8()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("st", inner),
      arrow::field("l", arrow::list(arrow::int32())),
  });
  const std::string long_a(40, 'a');
  auto data = MakeTable(schema, {
                                    // 2024-01-01T00:00:00.123999Z and 2024-01-02T00:00:00.000001Z
                                    "[1704067200123999, 1704153600000001, null]",
                                    "[1704067200123999, 0, null]",
                                    "[19723, 0, 19724]",
                                    "[1.5, -2.25, null]",
                                    "[1.0, NaN, 2.0]",
                                    R"(["12.34", "-0.05", null])",
                                    "[\"" + long_a + "\", \"b\", null]",
                                    "[true, false, null]",
                                    R"([{"a": 1, "b": "q"}, null, {"a": 5, "b": null}])",
                                    "[[1], null, []]",
                                });
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer.Create(schema).ok());
  ASSERT_TRUE(writer.Append({FixtureFile(data)}).ok());
  CommitLines adds_lines(CommitPath(dir_.str(), 1));
  auto adds = adds_lines.All("add");
  ASSERT_EQ(adds.size(), 1u);
  simdjson::dom::parser p;
  simdjson::dom::element st;
  ASSERT_EQ(p.parse(Str(adds[0]["stats"])).get(st), simdjson::SUCCESS);
  auto min = st["minValues"], max = st["maxValues"], nulls = st["nullCount"];
  EXPECT_EQ(Int(st["numRecords"]), 3);
  EXPECT_EQ(st["tightBounds"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(Str(min["ts"]), "2024-01-01T00:00:00.123Z");
  EXPECT_EQ(Str(max["ts"]), "2024-01-02T00:00:00.000Z");
  EXPECT_EQ(Str(min["ntz"]), "1970-01-01T00:00:00.000");
  EXPECT_EQ(Str(max["ntz"]), "2024-01-01T00:00:00.123");
  EXPECT_EQ(Str(min["d"]), "1970-01-01");
  EXPECT_EQ(Str(max["d"]), "2024-01-02");
  double x = 0;
  ASSERT_EQ(min["x"].get(x), simdjson::SUCCESS);
  EXPECT_EQ(x, -2.25);
  ASSERT_EQ(max["x"].get(x), simdjson::SUCCESS);
  EXPECT_EQ(x, 1.5);
  EXPECT_EQ(min["nan"].error(), simdjson::NO_SUCH_FIELD) << "NaN has no JSON bound";
  EXPECT_EQ(Int(nulls["nan"]), 0);
  ASSERT_EQ(max["dec"].get(x), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(x, 12.34);
  EXPECT_EQ(Str(min["s"]), std::string(32, 'a'));
  EXPECT_EQ(Str(max["s"]), "b");
  EXPECT_EQ(Int(nulls["s"]), 1);
  EXPECT_EQ(min["flag"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(Int(nulls["flag"]), 1);
  EXPECT_EQ(Int(min["st"]["a"]), 1);
  EXPECT_EQ(Int(max["st"]["a"]), 5);
  EXPECT_EQ(Int(nulls["st"]["a"]), 1) << "a null parent struct makes its leaves null";
  EXPECT_EQ(Int(nulls["st"]["b"]), 2);
  EXPECT_EQ(nulls["l"].error(), simdjson::NO_SUCH_FIELD);

  // A max string longer than the prefix is cut and bumped so it stays an upper bound.
  auto strs = arrow::schema({arrow::field("s", arrow::utf8())});
  ASSERT_TRUE(writer.Append({FixtureFile(MakeTable(strs, {"[\"a\", \"" + long_a + "\"]"}))}).ok());
  CommitLines adds2_lines(CommitPath(dir_.str(), 2));
  auto adds2 = adds2_lines.All("add");
  simdjson::dom::parser p2;
  simdjson::dom::element st2;
  ASSERT_EQ(p2.parse(Str(adds2[0]["stats"])).get(st2), simdjson::SUCCESS);
  EXPECT_EQ(Str(st2["maxValues"]["s"]), std::string(32, 'a') + "\x7f");
  EXPECT_GT(Str(st2["maxValues"]["s"]), long_a);

  ASSERT_TRUE(writer.Append({FixtureFile(IdTable(0, 2)).WithStats(false)}).ok());
  CommitLines adds3_lines(CommitPath(dir_.str(), 3));
  auto adds3 = adds3_lines.All("add");
  EXPECT_EQ(adds3[0]["stats"].error(), simdjson::NO_SUCH_FIELD);
}

TEST_F(FixtureWriterTest, RemoveWritesExtendedTombstonesAndTracksLiveFiles) {
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("p", arrow::int32())});
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer.Create(schema, {"p"}).ok());
  ASSERT_TRUE(writer
                  .Append({FixtureFile(IdTable(0, 5), {{"p", "1"}}),
                           FixtureFile(IdTable(5, 5), {{"p", "2"}})})
                  .ok());
  auto before = writer.active_paths();
  ASSERT_EQ(before.size(), 2u);

  auto v = writer.Remove({before[0]}, {FixtureFile(IdTable(0, 4), {{"p", "1"}})}, "UPDATE",
                         1700000002000);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 2);
  CommitLines lines(CommitPath(dir_.str(), 2));
  EXPECT_EQ(Str(lines.Action(0, "commitInfo").value()["operation"]), "UPDATE");
  auto removes = lines.All("remove");
  ASSERT_EQ(removes.size(), 1u);
  EXPECT_EQ(Str(removes[0]["path"]), before[0]);
  EXPECT_EQ(Int(removes[0]["deletionTimestamp"]), 1700000002000);
  EXPECT_TRUE(Bool(removes[0]["dataChange"]));
  EXPECT_TRUE(Bool(removes[0]["extendedFileMetadata"]));
  EXPECT_EQ(Str(removes[0]["partitionValues"]["p"]), "1");
  EXPECT_EQ(Int(removes[0]["size"]),
            static_cast<int64_t>(fs::file_size(dir_.str() + "/" + PercentDecode(before[0]))));
  EXPECT_EQ(lines.All("add").size(), 1u);

  auto after = writer.active_paths();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(std::count(after.begin(), after.end(), before[0]), 0);
  EXPECT_EQ(std::count(after.begin(), after.end(), before[1]), 1);
  EXPECT_EQ(writer.state().tombstones.size(), 1u);

  EXPECT_TRUE(writer.Remove({"p=9/missing.parquet"}).status().IsKeyError());
  EXPECT_EQ(writer.version(), 2);
}

TEST_F(FixtureWriterTest, InlineDeletionVectorRoundTrips) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  FixtureTableWriter plain(dir_.str() + "/plain");
  ASSERT_TRUE(plain.Create(schema).ok());
  EXPECT_TRUE(plain.Append({FixtureFile(IdTable(0, 5)).WithDeletedRows({1})}).status().IsInvalid());

  FixtureTableWriter writer(dir_.str() + "/dv");
  ASSERT_TRUE(writer
                  .Create(schema, {}, {{"delta.enableDeletionVectors", "true"}}, 3, 7,
                          {"deletionVectors"}, {"deletionVectors"})
                  .ok());
  ASSERT_TRUE(writer.Append({FixtureFile(IdTable(0, 10)).WithDeletedRows({7, 1, 3})}).ok());
  CommitLines adds_lines(CommitPath(writer.table_root(), 1));
  auto adds = adds_lines.All("add");
  ASSERT_EQ(adds.size(), 1u);
  auto dv = adds[0]["deletionVector"];
  EXPECT_EQ(Str(dv["storageType"]), "i");
  EXPECT_EQ(Int(dv["cardinality"]), 3);
  EXPECT_EQ(dv["offset"].error(), simdjson::NO_SUCH_FIELD);
  auto bytes = internal::Z85Decode(Str(dv["pathOrInlineDv"]));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::string bitmap = bytes->substr(0, static_cast<size_t>(Int(dv["sizeInBytes"])));
  auto rows = internal::DeserializeRoaringBitmapArray(bitmap);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, (std::vector<uint64_t>{1, 3, 7}));

  simdjson::dom::parser p;
  simdjson::dom::element st;
  ASSERT_EQ(p.parse(Str(adds[0]["stats"])).get(st), simdjson::SUCCESS);
  EXPECT_EQ(Int(st["numRecords"]), 10) << "numRecords counts physical rows";
  EXPECT_FALSE(Bool(st["tightBounds"]));

  // Removing the file carries its DV in the tombstone.
  ASSERT_TRUE(writer.Remove(writer.active_paths()).ok());
  CommitLines removes_lines(CommitPath(writer.table_root(), 2));
  auto removes = removes_lines.All("remove");
  ASSERT_EQ(removes.size(), 1u);
  EXPECT_EQ(Str(removes[0]["deletionVector"]["pathOrInlineDv"]), Str(dv["pathOrInlineDv"]));
  EXPECT_TRUE(writer.active_paths().empty());

  EXPECT_TRUE(
      writer.Append({FixtureFile(IdTable(0, 3)).WithDeletedRows({3})}).status().IsInvalid());
}

TEST_F(FixtureWriterTest, InCommitTimestampsAreFirstLineAndIncreasing) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer
                  .Create(schema, {}, {{"delta.enableInCommitTimestamps", "true"}}, 3, 7, {},
                          {"inCommitTimestamp"}, 5000)
                  .ok());
  ASSERT_TRUE(writer.Append({FixtureFile(IdTable(0, 1))}, "WRITE", 4000).ok());
  ASSERT_TRUE(writer.Append({FixtureFile(IdTable(0, 1))}, "WRITE", 9000, 123456).ok());
  const int64_t expected[] = {5000, 5001, 123456};
  for (int64_t v = 0; v <= 2; ++v) {
    CommitLines lines(CommitPath(dir_.str(), v));
    auto info = lines.Action(0, "commitInfo");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(Int((*info)["inCommitTimestamp"]), expected[v]) << "version " << v;
  }

  FixtureTableWriter no_ict(dir_.str() + "/plain");
  ASSERT_TRUE(no_ict.Create(schema).ok());
  CommitLines lines(CommitPath(no_ict.table_root(), 0));
  EXPECT_EQ(lines.Action(0, "commitInfo").value()["inCommitTimestamp"].error(),
            simdjson::NO_SUCH_FIELD);
}

TEST_F(FixtureWriterTest, CommitRawWritesLinesVerbatimAndUpdatesState) {
  FixtureTableWriter writer(dir_.str());
  std::vector<std::string> v0 = {
      R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})",
      R"({"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":1}})",
  };
  ASSERT_EQ(writer.CommitRaw(v0).ValueOrDie(), 0);
  std::vector<std::string> v1 = {
      R"({"add":{"path":"a.parquet","partitionValues":{},"size":10,"modificationTime":2,"dataChange":true}})",
      R"({"add":{"path":"b%20c.parquet","partitionValues":{},"size":11,"modificationTime":2,"dataChange":true}})",
      R"({"txn":{"appId":"app","version":4,"lastUpdated":3}})",
      R"({"domainMetadata":{"domain":"delta.rowTracking","configuration":"{\"rowIdHighWaterMark\":9}","removed":false}})",
      "this line is not JSON",
  };
  ASSERT_EQ(writer.CommitRaw(v1).ValueOrDie(), 1);
  ASSERT_EQ(
      writer
          .CommitRaw({R"({"remove":{"path":"a.parquet","deletionTimestamp":5,"dataChange":true}})"})
          .ValueOrDie(),
      2);
  EXPECT_EQ(ReadText(CommitPath(dir_.str(), 1)),
            v1[0] + "\n" + v1[1] + "\n" + v1[2] + "\n" + v1[3] + "\n" + v1[4] + "\n");
  EXPECT_EQ(writer.active_paths(), std::vector<std::string>{"b%20c.parquet"});
  EXPECT_EQ(writer.state().table_id, "t1");
  EXPECT_EQ(writer.state().txns.at("app").version, 4);
  EXPECT_EQ(writer.state().domains.size(), 1u);
  EXPECT_EQ(writer.state().tombstones.size(), 1u);
}

TEST_F(FixtureWriterTest, CheckpointHoldsReconciledStateInDeltaSparkLayout) {
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("p", arrow::utf8())});
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer.Create(schema, {"p"}).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(writer
                    .Append({FixtureFile(IdTable(i * 10, 10), {{"p", std::to_string(i)}}),
                             FixtureFile(IdTable(i * 10 + 100, 5), {{"p", std::nullopt}})})
                    .ok());
  }
  ASSERT_TRUE(writer.Remove({writer.active_paths()[0]}).ok());
  ASSERT_TRUE(writer.CommitRaw({R"({"txn":{"appId":"app","version":7,"lastUpdated":1}})"}).ok());
  ASSERT_EQ(writer.version(), 5);
  ASSERT_TRUE(writer.WriteCheckpoint().ok());

  const std::string cp = dir_.str() + "/_delta_log/00000000000000000005.checkpoint.parquet";
  ASSERT_TRUE(fs::exists(cp));
  auto table = ReadParquet(cp);
  std::vector<std::string> names;
  for (const auto& f : table->schema()->fields()) names.push_back(f->name());
  EXPECT_EQ(names, (std::vector<std::string>{"txn", "add", "remove", "metaData", "protocol"}));
  EXPECT_EQ(table->num_rows(), 1 + 1 + 1 + 5 + 1);

  auto add = std::static_pointer_cast<arrow::StructArray>(table->GetColumnByName("add")->chunk(0));
  auto add_type = std::static_pointer_cast<arrow::StructType>(add->type());
  EXPECT_EQ(add_type->GetFieldByName("partitionValues")->type()->id(), arrow::Type::MAP);
  EXPECT_EQ(add_type->GetFieldByName("stats")->type()->id(), arrow::Type::STRING);
  auto add_path = std::static_pointer_cast<arrow::StringArray>(add->GetFieldByName("path"));
  auto add_stats = std::static_pointer_cast<arrow::StringArray>(add->GetFieldByName("stats"));
  auto add_change =
      std::static_pointer_cast<arrow::BooleanArray>(add->GetFieldByName("dataChange"));
  std::set<std::string> cp_paths;
  for (int64_t i = 0; i < add->length(); ++i) {
    if (add->IsNull(i)) continue;
    cp_paths.insert(add_path->GetString(i));
    EXPECT_TRUE(add_stats->GetString(i).starts_with("{\"numRecords\":"));
    EXPECT_FALSE(add_change->Value(i));
  }
  auto live = writer.active_paths();
  EXPECT_EQ(cp_paths, std::set<std::string>(live.begin(), live.end()));

  auto remove = table->GetColumnByName("remove")->chunk(0);
  EXPECT_EQ(remove->length() - remove->null_count(), 1);
  auto remove_type = std::static_pointer_cast<arrow::StructType>(remove->type());
  EXPECT_EQ(remove_type->GetFieldByName("stats"), nullptr);
  EXPECT_EQ(remove_type->GetFieldByName("tags"), nullptr);

  auto protocol =
      std::static_pointer_cast<arrow::StructArray>(table->GetColumnByName("protocol")->chunk(0));
  EXPECT_EQ(protocol->length() - protocol->null_count(), 1);
  EXPECT_EQ(protocol->GetFieldByName("readerFeatures")->null_count(), protocol->length());
  auto txn = table->GetColumnByName("txn")->chunk(0);
  EXPECT_EQ(txn->length() - txn->null_count(), 1);
  auto md =
      std::static_pointer_cast<arrow::StructArray>(table->GetColumnByName("metaData")->chunk(0));
  EXPECT_EQ(md->length() - md->null_count(), 1);

  simdjson::dom::parser p;
  simdjson::dom::element last;
  ASSERT_EQ(p.parse(ReadText(dir_.str() + "/_delta_log/_last_checkpoint")).get(last),
            simdjson::SUCCESS);
  EXPECT_EQ(Int(last["version"]), 5);
  EXPECT_EQ(Int(last["size"]), table->num_rows());
  EXPECT_EQ(Int(last["numOfAddFiles"]), 5);
  EXPECT_EQ(Int(last["sizeInBytes"]), static_cast<int64_t>(fs::file_size(cp)));
}

TEST_F(FixtureWriterTest, CheckpointAddsDomainMetadataColumnWhenDomainsAreLive) {
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer
                  .Create(arrow::schema({arrow::field("id", arrow::int64())}), {}, {}, 1, 7, {},
                          {"domainMetadata"})
                  .ok());
  ASSERT_TRUE(
      writer
          .CommitRaw(
              {R"({"domainMetadata":{"domain":"user.x","configuration":"{}","removed":false}})"})
          .ok());
  ASSERT_TRUE(writer.WriteCheckpoint().ok());
  auto table = ReadParquet(dir_.str() + "/_delta_log/00000000000000000001.checkpoint.parquet");
  auto dm = table->GetColumnByName("domainMetadata");
  ASSERT_NE(dm, nullptr);
  EXPECT_EQ(dm->length() - dm->null_count(), 1);
  auto protocol =
      std::static_pointer_cast<arrow::StructArray>(table->GetColumnByName("protocol")->chunk(0));
  auto wf = protocol->GetFieldByName("writerFeatures");
  EXPECT_LT(wf->null_count(), wf->length()) << "writerFeatures must be set for writer version 7";
}

TEST_F(FixtureWriterTest, SetCommitFileTimeChangesTheCommitMtime) {
  FixtureTableWriter writer(dir_.str());
  ASSERT_TRUE(writer.Create(arrow::schema({arrow::field("id", arrow::int64())})).ok());
  ASSERT_TRUE(writer.SetCommitFileTime(0, 1600000000250).ok());
  struct stat st{};
  ASSERT_EQ(::stat(CommitPath(dir_.str(), 0).c_str(), &st), 0);
  EXPECT_EQ(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000,
            1600000000250);
  EXPECT_FALSE(writer.SetCommitFileTime(9, 1).ok());
}

// ---------------------------------------------------------------------------------------------

/// Live add paths after reading `checkpoint` (if any) and replaying the commits above it.
std::set<std::string> ReplayActivePaths(const std::string& root, int64_t checkpoint_version,
                                        int64_t last_version) {
  std::set<std::string> live;
  int64_t first = 0;
  if (checkpoint_version >= 0) {
    char name[64];
    std::snprintf(name, sizeof(name), "%020lld.checkpoint.parquet",
                  static_cast<long long>(checkpoint_version));
    auto table = ReadParquet(root + "/_delta_log/" + name);
    auto add =
        std::static_pointer_cast<arrow::StructArray>(table->GetColumnByName("add")->chunk(0));
    auto path = std::static_pointer_cast<arrow::StringArray>(add->GetFieldByName("path"));
    for (int64_t i = 0; i < add->length(); ++i) {
      if (add->IsValid(i)) live.insert(path->GetString(i));
    }
    first = checkpoint_version + 1;
  }
  for (int64_t v = first; v <= last_version; ++v) {
    CommitLines lines(CommitPath(root, v));
    for (auto a : lines.All("add")) live.insert(Str(a["path"]));
    for (auto r : lines.All("remove")) EXPECT_EQ(live.erase(Str(r["path"])), 1u);
  }
  return live;
}

TEST(FixtureLogOnly, GeneratesCommitsCheckpointsAndActiveFiles) {
  TempDir dir;
  ASSERT_TRUE(GenerateLogOnlyTable(dir.str(), 50, 300, 10).ok());
  int commits = 0;
  std::vector<std::string> checkpoints;
  for (const auto& entry : fs::directory_iterator(dir.str() + "/_delta_log")) {
    std::string name = entry.path().filename().string();
    if (name.size() == 25 && name.ends_with(".json")) ++commits;
    if (name.ends_with(".checkpoint.parquet")) checkpoints.push_back(name.substr(0, 20));
  }
  std::sort(checkpoints.begin(), checkpoints.end());
  EXPECT_EQ(commits, 50);
  EXPECT_EQ(checkpoints,
            (std::vector<std::string>{"00000000000000000010", "00000000000000000020",
                                      "00000000000000000030", "00000000000000000040"}));
  simdjson::dom::parser p;
  simdjson::dom::element last;
  ASSERT_EQ(p.parse(ReadText(dir.str() + "/_delta_log/_last_checkpoint")).get(last),
            simdjson::SUCCESS);
  EXPECT_EQ(Int(last["version"]), 40);

  // Version 0 carries protocol + metaData; later commits carry removes so replay has work.
  CommitLines v0(CommitPath(dir.str(), 0));
  EXPECT_EQ(v0.All("protocol").size(), 1u);
  EXPECT_EQ(v0.All("metaData").size(), 1u);
  int removes = 0;
  for (int64_t v = 1; v < 50; ++v) {
    removes += static_cast<int>(CommitLines(CommitPath(dir.str(), v)).All("remove").size());
  }
  EXPECT_GT(removes, 0);
  CommitLines v5(CommitPath(dir.str(), 5));
  auto adds = v5.All("add");
  ASSERT_FALSE(adds.empty());
  EXPECT_EQ(v5.All("txn").size(), 1u);
  simdjson::dom::parser stats_parser;
  simdjson::dom::element stats;
  ASSERT_EQ(stats_parser.parse(Str(adds[0]["stats"])).get(stats), simdjson::SUCCESS);
  EXPECT_GT(Int(stats["numRecords"]), 0);
  EXPECT_EQ(Str(adds[0]["partitionValues"]["part"]).size(), 1u);

  auto from_checkpoint = ReplayActivePaths(dir.str(), 40, 49);
  EXPECT_EQ(from_checkpoint.size(), 300u);
  auto from_scratch = ReplayActivePaths(dir.str(), -1, 49);
  EXPECT_EQ(from_checkpoint, from_scratch);
  EXPECT_EQ(ReplayActivePaths(dir.str(), 20, 49), from_scratch);

  // The checkpoint's rows: protocol, metaData, txn, the live adds, the removes so far.
  auto table = ReadParquet(dir.str() + "/_delta_log/00000000000000000040.checkpoint.parquet");
  EXPECT_EQ(Int(last["size"]), table->num_rows());
  auto add = table->GetColumnByName("add");
  EXPECT_EQ(Int(last["numOfAddFiles"]), add->length() - add->null_count());

  // Commit files carry increasing modification times for timestamp-based time travel.
  EXPECT_LT(fs::last_write_time(CommitPath(dir.str(), 3)),
            fs::last_write_time(CommitPath(dir.str(), 4)));

  EXPECT_TRUE(GenerateLogOnlyTable(dir.str(), 5, 5, 0).IsAlreadyExists());
}

TEST(FixtureLogOnly, HandlesOneCommitAndNoCheckpoints) {
  TempDir dir;
  ASSERT_TRUE(GenerateLogOnlyTable(dir.str(), 1, 7, 0).ok());
  EXPECT_FALSE(fs::exists(dir.str() + "/_delta_log/_last_checkpoint"));
  EXPECT_EQ(ReplayActivePaths(dir.str(), -1, 0).size(), 7u);
  EXPECT_TRUE(GenerateLogOnlyTable(dir.str() + "/x", 0, 7, 0).IsInvalid());
}

// Run with --gtest_also_run_disabled_tests to time the benchmark-sized log.
}  // namespace
}  // namespace deltacpp::testing
