// Nothing an operation is given can make a table unreadable: strings that are not valid UTF-8,
// in data or in options, are refused before anything is written (the table directory is left
// exactly as it was), with an error naming the column and row or the option. Valid multibyte
// text goes through everywhere and reads back unchanged.
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "deltacpp/api.h"
#include "deltacpp/ops/alter_table.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Code;
using testing::Latest;
using testing::LatestVersion;
using testing::Longs;
using testing::ReadRows;
using testing::Strings;
using testing::TempDir;

const std::string kBad = "caf\xE9";  // Latin-1 é: not UTF-8
const std::string kTwo = "caf\xC3\xA9";
const std::string kThree = "\xE6\x9D\xB1\xE4\xBA\xAC";
const std::string kFour = "\xF0\x9F\x98\x80";

// Regular files only (a refusal after some files were written leaves their directories).
std::map<std::string, int64_t> Files(const std::string& root) {
  auto tree = testing::DirectoryTree(root);
  std::erase_if(tree, [](const auto& entry) { return entry.second < 0; });
  return tree;
}

// `st` is a refusal of kind `code` whose message holds every one of `parts`, without the
// offending bytes.
void ExpectRefused(const arrow::Status& st, DeltaErrorCode code,
                   const std::vector<std::string>& parts) {
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(IsDeltaError(st, code)) << Code(st) << ": " << st.message();
  for (const auto& p : parts) EXPECT_NE(st.message().find(p), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("not valid UTF-8"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find(kBad), std::string::npos) << "raw bytes in the message";
}

std::shared_ptr<arrow::Schema> PeopleSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                        arrow::field("city", arrow::utf8())});
}

std::shared_ptr<arrow::RecordBatch> People(const std::vector<std::string>& names,
                                           const std::vector<std::string>& cities,
                                           int64_t first_id = 0) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> n(names.begin(), names.end());
  std::vector<std::optional<std::string>> c(cities.begin(), cities.end());
  for (size_t i = 0; i < names.size(); ++i) ids.push_back(first_id + static_cast<int64_t>(i));
  return testing::Batch(PeopleSchema(), {Longs(ids), Strings(n), Strings(c)});
}

// A table partitioned by city with one commit of two rows.
std::string MakePeopleTable(const TempDir& dir) {
  const std::string root = (dir.path() / "people").string();
  WriteOptions opts;
  opts.partition_by = {"city"};
  auto r = WriteTable(root, testing::Reader(PeopleSchema(), {People({"a", "b"}, {"x", "y"})}),
                      opts);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return root;
}

arrow::Status Write(const std::string& root, std::vector<std::shared_ptr<arrow::RecordBatch>> b,
                    const WriteOptions& opts = {}) {
  auto schema = b.front()->schema();
  return WriteTable(root, testing::Reader(schema, std::move(b)), opts).status();
}

// ---------------------------------------------------------------------------------------------
// Data

TEST(InvalidUtf8Write, DataStringRefusedNamingColumnAndRowBeforeAnyFile) {
  TempDir dir;
  const auto root = MakePeopleTable(dir);
  const auto before = testing::DirectoryTree(root);
  ExpectRefused(Write(root, {People({"ok", kTwo, kBad}, {"x", "x", "x"})}),
                DeltaErrorCode::kSchemaMismatch, {"column 'name'", "row 3 of the write", root});
  EXPECT_EQ(testing::DirectoryTree(root), before);
  EXPECT_EQ(LatestVersion(root), 0);
  EXPECT_EQ(ReadRows(root).size(), 2u);
}

TEST(InvalidUtf8Write, PartitionValueRefused) {
  TempDir dir;
  const auto root = MakePeopleTable(dir);
  const auto before = testing::DirectoryTree(root);
  ExpectRefused(Write(root, {People({"a", "b"}, {kFour, kBad})}), DeltaErrorCode::kSchemaMismatch,
                {"column 'city'", "row 2 of the write"});
  EXPECT_EQ(testing::DirectoryTree(root), before);
}

TEST(InvalidUtf8Write, BinaryPartitionValueRefused) {
  TempDir dir;
  const std::string root = (dir.path() / "bin").string();
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("b", arrow::binary())});
  arrow::BinaryBuilder b;
  ASSERT_TRUE(b.Append(kTwo).ok());
  ASSERT_TRUE(b.Append(kBad).ok());
  WriteOptions opts;
  opts.partition_by = {"b"};
  ExpectRefused(Write(root, {testing::Batch(schema, {Longs({1, 2}), *b.Finish()})}, opts),
                DeltaErrorCode::kSchemaMismatch, {"column 'b' row 2 of the write"});
  EXPECT_FALSE(std::filesystem::exists(root));
}

TEST(InvalidUtf8Write, RowsCountAcrossBatchesAndWrittenFilesAreDeleted) {
  TempDir dir;
  const auto root = MakePeopleTable(dir);
  const auto before = Files(root);
  // The first batch is written before the second is read; the refusal deletes its files.
  ExpectRefused(Write(root, {People({"a", "b", "c"}, {"x", "new", "z"}),
                             People({"d", kBad}, {"x", "x"}, 3)}),
                DeltaErrorCode::kSchemaMismatch, {"column 'name'", "row 5 of the write"});
  EXPECT_EQ(Files(root), before);
  EXPECT_EQ(LatestVersion(root), 0);
}

TEST(InvalidUtf8Write, NewTableIsNotCreated) {
  TempDir dir;
  const std::string root = (dir.path() / "fresh").string();
  ExpectRefused(Write(root, {People({kBad}, {"x"})}), DeltaErrorCode::kSchemaMismatch,
                {"column 'name'", "row 1 of the write"});
  EXPECT_FALSE(std::filesystem::exists(root));
}

TEST(InvalidUtf8Write, ReplaceWhereRewritesNothingWhenTheFirstBatchIsRefused) {
  TempDir dir;
  const auto root = MakePeopleTable(dir);
  const auto before = testing::DirectoryTree(root);
  WriteOptions opts;
  opts.mode = WriteMode::kOverwrite;
  opts.replace_where = "id = 0";
  ExpectRefused(Write(root, {People({kBad}, {"x"})}, opts), DeltaErrorCode::kSchemaMismatch,
                {"column 'name'", "row 1 of the write"});
  EXPECT_EQ(testing::DirectoryTree(root), before);
}

TEST(InvalidUtf8Write, NestedStringsAreNamedByPath) {
  TempDir dir;
  const std::string root = (dir.path() / "nested").string();
  auto tag_type = arrow::struct_({arrow::field("tag", arrow::utf8())});
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("s", tag_type),
                               arrow::field("tags", arrow::list(arrow::utf8())),
                               arrow::field("attrs", arrow::map(arrow::utf8(), arrow::utf8()))});
  auto make = [&](const std::string& tag, const std::string& element, const std::string& key,
                  const std::string& value) {
    auto s = *arrow::StructArray::Make({Strings({"t", tag})}, tag_type->fields());
    arrow::Int32Builder offsets;
    (void)offsets.AppendValues({0, 1, 2});
    auto offs = *offsets.Finish();
    auto tags = *arrow::ListArray::FromArrays(*offs, *Strings({"e", element}));
    auto attrs = *arrow::MapArray::FromArrays(offs, Strings({"k", key}), Strings({"v", value}));
    return testing::Batch(schema, {Longs({1, 2}), s, tags, attrs});
  };
  ASSERT_TRUE(Write(root, {make(kFour, kThree, kTwo, kFour)}).ok());
  const auto before = testing::DirectoryTree(root);
  ExpectRefused(Write(root, {make(kBad, "e", "k", "v")}), DeltaErrorCode::kSchemaMismatch,
                {"column 's.tag'", "row 2 "});
  ExpectRefused(Write(root, {make("t", kBad, "k", "v")}), DeltaErrorCode::kSchemaMismatch,
                {"column 'tags.element'", "row 2 "});
  ExpectRefused(Write(root, {make("t", "e", kBad, "v")}), DeltaErrorCode::kSchemaMismatch,
                {"column 'attrs.key'", "row 2 "});
  ExpectRefused(Write(root, {make("t", "e", "k", kBad)}), DeltaErrorCode::kSchemaMismatch,
                {"column 'attrs.value'", "row 2 "});
  EXPECT_EQ(testing::DirectoryTree(root), before);
  EXPECT_EQ(ReadRows(root).size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Write options and input schema

TEST(InvalidUtf8Write, OptionsAreRefusedBeforeAnyFile) {
  TempDir dir;
  const auto root = MakePeopleTable(dir);
  const auto before = testing::DirectoryTree(root);
  auto good = [] { return std::vector{People({"a"}, {"x"})}; };

  WriteOptions app;
  app.txn_app_id = kBad;
  app.txn_version = 1;
  ExpectRefused(Write(root, good(), app), DeltaErrorCode::kInvalidArgument, {"txn app id"});

  WriteOptions user;
  user.transaction.user_metadata = kBad;
  ExpectRefused(Write(root, good(), user), DeltaErrorCode::kInvalidArgument, {"user metadata"});

  WriteOptions where;
  where.mode = WriteMode::kOverwrite;
  where.replace_where = "name = '" + kBad + "'";
  ExpectRefused(Write(root, good(), where), DeltaErrorCode::kInvalidArgument,
                {"replaceWhere predicate"});

  WriteOptions partition;
  partition.partition_by = {kBad};
  ExpectRefused(Write(root, good(), partition), DeltaErrorCode::kInvalidArgument,
                {"partition column name"});
  EXPECT_EQ(testing::DirectoryTree(root), before);

  // Properties of a table the write creates: key and value.
  const std::string fresh = (dir.path() / "fresh").string();
  WriteOptions key;
  key.properties = {{"owner" + kBad, "me"}};
  ExpectRefused(Write(fresh, good(), key), DeltaErrorCode::kInvalidArgument,
                {"table property key 'ownercaf\\xE9'"});
  WriteOptions value;
  value.properties = {{"owner", kBad}};
  ExpectRefused(Write(fresh, good(), value), DeltaErrorCode::kInvalidArgument,
                {"value of table property 'owner'"});
  EXPECT_FALSE(std::filesystem::exists(fresh));
}

TEST(InvalidUtf8Write, InputColumnNamesAndMetadataAreRefused) {
  TempDir dir;
  const std::string root = (dir.path() / "t").string();
  auto named = arrow::schema({arrow::field("id" + kBad, arrow::int64())});
  ExpectRefused(Write(root, {testing::Batch(named, {Longs({1})})}),
                DeltaErrorCode::kSchemaMismatch, {"name of input column 'idcaf\\xE9'"});
  auto commented = arrow::schema({arrow::field(
      "id", arrow::int64(), true, arrow::key_value_metadata({"comment"}, {"\"" + kBad + "\""}))});
  ExpectRefused(Write(root, {testing::Batch(commented, {Longs({1})})}),
                DeltaErrorCode::kSchemaMismatch, {"metadata 'comment' of input column 'id'"});
  EXPECT_FALSE(std::filesystem::exists(root));
}

// ---------------------------------------------------------------------------------------------
// CREATE TABLE and ALTER TABLE

TEST(InvalidUtf8Create, EveryTextOptionIsRefused) {
  TempDir dir;
  const std::string root = (dir.path() / "t").string();
  auto base = [] {
    CreateTableOptions o;
    o.schema = *SchemaFromDdl("id BIGINT, name STRING");
    return o;
  };
  auto refused = [&](CreateTableOptions o, DeltaErrorCode code, std::vector<std::string> parts) {
    ExpectRefused(CreateTable(root, o).status(), code, parts);
    EXPECT_FALSE(std::filesystem::exists(root));
  };
  auto o = base();
  o.description = kBad;
  refused(o, DeltaErrorCode::kInvalidArgument, {"table description (comment)"});
  o = base();
  o.name = kBad;
  refused(o, DeltaErrorCode::kInvalidArgument, {"the table name"});
  o = base();
  o.properties = {{kBad, "v"}};
  refused(o, DeltaErrorCode::kInvalidArgument, {"table property key"});
  o = base();
  o.properties = {{"k", kBad}};
  refused(o, DeltaErrorCode::kInvalidArgument, {"value of table property 'k'"});
  o = base();
  o.constraints = {{kBad, "id > 0"}};
  refused(o, DeltaErrorCode::kInvalidArgument, {"CHECK constraint name"});
  o = base();
  o.constraints = {{"named", "name <> '" + kBad + "'"}};
  refused(o, DeltaErrorCode::kInvalidArgument, {"expression of CHECK constraint 'named'"});
  o = base();
  o.schema = arrow::schema(
      {arrow::field("id", arrow::int64()),
       arrow::field("name", arrow::utf8(), true,
                    arrow::key_value_metadata({"comment"}, {"\"" + kBad + "\""}))});
  refused(o, DeltaErrorCode::kInvalidArgument, {"metadata 'comment' of column 'name'"});
  o = base();
  o.schema = arrow::schema(
      {arrow::field("id", arrow::int64()),
       arrow::field("s", arrow::struct_({arrow::field("inner" + kBad, arrow::int32())}))});
  refused(o, DeltaErrorCode::kInvalidArgument, {"name of column 's.innercaf\\xE9'"});
  o = base();
  o.schema = arrow::schema(
      {arrow::field("id", arrow::int64()),
       arrow::field("g", arrow::utf8(), true,
                    arrow::key_value_metadata({"delta.generationExpression"},
                                              {"\"concat('" + kBad + "', id)\""}))});
  refused(o, DeltaErrorCode::kInvalidArgument,
          {"metadata 'delta.generationExpression' of column 'g'"});
  o = base();
  o.transaction.user_metadata = kBad;
  refused(o, DeltaErrorCode::kInvalidArgument, {"user metadata"});
}

TEST(InvalidUtf8Alter, EveryTextOptionIsRefusedAndTheTableIsUnchanged) {
  TempDir dir;
  const auto root = MakePeopleTable(dir);
  const auto before = testing::DirectoryTree(root);
  ExpectRefused(SetTableProperties(root, {{"comment", kBad}}).status(),
                DeltaErrorCode::kInvalidArgument, {"value of table property 'comment'"});
  ExpectRefused(SetTableProperties(root, {{"owner", kBad}}).status(),
                DeltaErrorCode::kInvalidArgument, {"value of table property 'owner'"});
  ExpectRefused(SetTableProperties(root, {{kBad, "v"}}).status(),
                DeltaErrorCode::kInvalidArgument, {"table property key"});
  ExpectRefused(UnsetTableProperties(root, {kBad}, /*if_exists=*/true).status(),
                DeltaErrorCode::kInvalidArgument, {"table property key"});
  ExpectRefused(AddConstraint(root, kBad, "id > 0").status(), DeltaErrorCode::kInvalidArgument,
                {"CHECK constraint name"});
  ExpectRefused(AddConstraint(root, "c", "name <> '" + kBad + "'").status(),
                DeltaErrorCode::kInvalidArgument, {"expression of CHECK constraint 'c'"});
  ExpectRefused(DropConstraint(root, kBad, /*if_exists=*/true).status(),
                DeltaErrorCode::kInvalidArgument, {"CHECK constraint name"});
  ExpectRefused(AddColumns(root, {NewColumn{arrow::field("n" + kBad, arrow::utf8()), ""}})
                    .status(),
                DeltaErrorCode::kInvalidArgument, {"name of new column 'ncaf\\xE9'"});
  auto commented = arrow::field("note", arrow::utf8(), true,
                                arrow::key_value_metadata({"comment"}, {"\"" + kBad + "\""}));
  ExpectRefused(AddColumns(root, {NewColumn{commented, ""}}).status(),
                DeltaErrorCode::kInvalidArgument, {"metadata 'comment' of new column 'note'"});
  TransactionOptions user;
  user.user_metadata = kBad;
  ExpectRefused(SetTableProperties(root, {{"owner", "me"}}, user).status(),
                DeltaErrorCode::kInvalidArgument, {"user metadata"});
  EXPECT_EQ(testing::DirectoryTree(root), before);
}

// ---------------------------------------------------------------------------------------------
// Valid multibyte text everywhere

TEST(InvalidUtf8Write, MultibyteTextGoesThroughEverywhere) {
  TempDir dir;
  const std::string root = (dir.path() / "t").string();
  CreateTableOptions create;
  create.schema = *SchemaFromDdl("id BIGINT, name STRING COMMENT '" + kThree + "', city STRING");
  create.partition_columns = {"city"};
  create.description = kTwo + " " + kFour;
  create.properties = {{"owner." + kThree, kFour}};
  create.constraints = {{"named", "name <> '" + kFour + "'"}};
  ASSERT_TRUE(CreateTable(root, create).ok());

  // 31 ASCII characters and an emoji as the 32nd code point: the stats boundary.
  const std::string at_boundary = std::string(31, 'a') + kFour + kFour + "z";
  WriteOptions write;
  write.txn_app_id = "app-" + kFour;
  write.txn_version = 1;
  write.transaction.user_metadata = "note " + kThree;
  auto r = WriteTable(root, testing::Reader(PeopleSchema(),
                                            {People({at_boundary, kTwo}, {kFour, kThree})}),
                      write);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(SetTableProperties(root, {{"comment", kFour}, {"k" + kTwo, kThree}}).ok());
  ASSERT_TRUE(AddConstraint(root, "c" + kTwo, "id >= 0").ok());

  auto snap = Latest(root);
  EXPECT_EQ(snap->metadata().description, kFour);
  EXPECT_EQ(snap->properties().at("owner." + kThree), kFour);
  EXPECT_EQ(snap->properties().at("k" + kTwo), kThree);
  EXPECT_EQ(snap->txn_version("app-" + kFour), 1);
  const auto rows = ReadRows(root);
  EXPECT_EQ(rows, (std::multiset<std::string>{"0|" + at_boundary + "|" + kFour,
                                              "1|" + kTwo + "|" + kThree}));
  // The emoji keeps data skipping exact: a filter on the boundary value finds its row.
  auto scan = snap->NewScan().Filter("name = '" + at_boundary + "'").Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  auto table = (*scan)->ToTable();
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->num_rows(), 1);
}

}  // namespace
}  // namespace deltacpp
