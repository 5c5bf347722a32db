// Creating tables and writing to them through the public operations, read back with the
// reader; each failure case checks that the log did not change.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Longs;
using testing::Rows;
using testing::Strings;
using testing::TempDir;

// Rows of a version (the latest by default) as "a|b|..." strings, sorted.
std::multiset<std::string> ReadAll(const std::string& path, std::optional<int64_t> version = {}) {
  return testing::ReadRows(path, version);
}

std::set<std::string> LogFiles(const std::string& path) { return testing::LogListing(path); }

std::shared_ptr<arrow::Schema> IdName() {
  return arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8())});
}

TEST(CreateTable, PlainTableGetsProtocolOneTwoAndSchema) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = *SchemaFromDdl("id long NOT NULL, name string, score BIGINT");
  opts.partition_columns = {"NAME"};
  opts.description = "people";
  auto r = CreateTable(dir.str(), opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 0);
  auto snap = *(*DeltaTable::Open(dir.str()))->Latest();
  EXPECT_EQ(snap->protocol().min_reader_version, 1);
  EXPECT_EQ(snap->protocol().min_writer_version, 2);
  EXPECT_EQ(snap->partition_columns(), std::vector<std::string>{"name"});
  EXPECT_FALSE(snap->schema()->field(0)->nullable());
  EXPECT_EQ(snap->metadata().description, "people");
  ASSERT_TRUE(snap->commit_info());
  EXPECT_EQ(snap->commit_info()->operation, "CREATE TABLE");
}

TEST(CreateTable, FeaturesRaiseTheProtocolOnlyAsFarAsNeeded) {
  TempDir a, b;
  CreateTableOptions with_check;
  with_check.schema = IdName();
  with_check.constraints = {{"positive", "id > 0"}};
  ASSERT_TRUE(CreateTable(a.str(), with_check).ok());
  auto sa = *(*DeltaTable::Open(a.str()))->Latest();
  EXPECT_EQ(sa->protocol().min_writer_version, 3);
  EXPECT_EQ(sa->properties().at("delta.constraints.positive"), "id > 0");
  CreateTableOptions ntz;
  ntz.schema = *SchemaFromDdl("id long, t TIMESTAMP_NTZ");
  ASSERT_TRUE(CreateTable(b.str(), ntz).ok());
  auto sb = *(*DeltaTable::Open(b.str()))->Latest();
  EXPECT_EQ(sb->protocol().min_reader_version, 3);
  EXPECT_EQ(sb->protocol().min_writer_version, 7);
  EXPECT_EQ(*sb->protocol().reader_features, std::vector<std::string>{"timestampNtz"});
}

TEST(CreateTable, ExistingTableModes) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = IdName();
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  auto again = CreateTable(dir.str(), opts);
  EXPECT_TRUE(IsDeltaError(again.status(), DeltaErrorCode::kTableAlreadyExists));
  opts.mode = CreateMode::kIfNotExists;
  auto noop = CreateTable(dir.str(), opts);
  ASSERT_TRUE(noop.ok());
  EXPECT_FALSE(noop->created);
  EXPECT_EQ(LogFiles(dir.str()).size(), 1u);
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  opts.mode = CreateMode::kOrReplace;
  opts.schema = *SchemaFromDdl("k string");
  auto replaced = CreateTable(dir.str(), opts);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(replaced->version, 2);
  auto snap = *(*DeltaTable::Open(dir.str()))->Latest();
  EXPECT_EQ(snap->num_files(), 0);
  EXPECT_EQ(snap->schema()->field(0)->name(), "k");
  EXPECT_EQ(snap->commit_info()->operation, "CREATE OR REPLACE TABLE");
  EXPECT_EQ(ReadAll(dir.str(), 1), (std::multiset<std::string>{"1|a"}));  // history kept
}

TEST(WriteTable, WriteToEmptyPathCreatesTheTable) {
  TempDir dir;
  auto r = WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2}), Strings({"a", std::nullopt})}), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 0);
  EXPECT_EQ(r->num_rows, 2);
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a", "2|null"}));
  auto snap = *(*DeltaTable::Open(dir.str()))->Latest();
  EXPECT_EQ(snap->commit_info()->operation, "WRITE");
}

TEST(WriteTable, AppendOverwriteAndTimeTravel) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({2}), Strings({"b"})}), {}).ok());
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  auto r = WriteTable(dir.str(), Rows(IdName(), {Longs({9}), Strings({"z"})}), overwrite);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_removed_files, 2);
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"9|z"}));
  EXPECT_EQ(ReadAll(dir.str(), 1), (std::multiset<std::string>{"1|a", "2|b"}));
}

TEST(WriteTable, SchemaMismatchAndNullIntoNotNullLeaveTableUnchanged) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  const auto before = LogFiles(dir.str());
  auto wrong_type = arrow::schema({arrow::field("id", arrow::utf8()), arrow::field("name", arrow::utf8())});
  auto r1 = WriteTable(dir.str(), Rows(wrong_type, {Strings({"x"}), Strings({"b"})}), {});
  EXPECT_TRUE(IsDeltaError(r1.status(), DeltaErrorCode::kSchemaMismatch)) << r1.status().ToString();
  EXPECT_NE(r1.status().message().find("'id'"), std::string::npos);
  auto nullable_id = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  auto r2 = WriteTable(dir.str(), Rows(nullable_id, {Longs({std::nullopt}), Strings({"b"})}), {});
  EXPECT_TRUE(IsDeltaError(r2.status(), DeltaErrorCode::kConstraintViolation)) << r2.status().ToString();
  auto extra = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("phone", arrow::utf8())});
  auto r3 = WriteTable(dir.str(), Rows(extra, {Longs({3}), Strings({"555"})}), {});
  EXPECT_TRUE(IsDeltaError(r3.status(), DeltaErrorCode::kSchemaMismatch)) << r3.status().ToString();
  EXPECT_NE(r3.status().message().find("phone"), std::string::npos);
  EXPECT_EQ(LogFiles(dir.str()), before);
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a"}));
}

TEST(WriteTable, InMemoryArrowTablesAreWrittenChunkByChunk) {
  TempDir dir;
  auto first = arrow::RecordBatch::Make(IdName(), 2, {Longs({1, 2}), Strings({"a", "b"})});
  auto second = arrow::RecordBatch::Make(IdName(), 1, {Longs({3}), Strings({"c"})});
  auto table = *arrow::Table::FromRecordBatches(IdName(), {first, second});
  auto created = WriteTable(dir.str(), table, {});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->num_rows, 3);
  auto handle = *DeltaTable::Open(dir.str());
  auto appended = WriteTable(handle, table->Slice(2), {});
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a", "2|b", "3|c", "3|c"}));
  auto null_input = WriteTable(dir.str(), std::shared_ptr<arrow::Table>(), {});
  EXPECT_TRUE(IsDeltaError(null_input.status(), DeltaErrorCode::kInvalidArgument));
}

TEST(WriteTable, ProgressEndsWithTheWrittenTotals) {
  TempDir dir;
  std::vector<WriteProgress> seen;
  WriteOptions options;
  options.partition_by = {"name"};
  options.on_progress = [&](const WriteProgress& p) { seen.push_back(p); };
  auto r = WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2, 3}), Strings({"a", "b", "a"})}),
                      options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].rows, seen[i - 1].rows);
    EXPECT_GE(seen[i].files, seen[i - 1].files);
  }
  const WriteProgress& last = seen.back();
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.rows, 3);
  EXPECT_EQ(last.files, 2);
  EXPECT_EQ(last.files, r->num_files);
  EXPECT_EQ(last.bytes, r->num_bytes);
}

TEST(WriteTable, OverwriteSchemaReplacesSchemaAndRows) {
  TempDir dir;
  WriteOptions partitioned;
  partitioned.partition_by = {"name"};
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2}), Strings({"a", "b"})}),
                         partitioned)
                  .ok());
  auto other = arrow::schema({arrow::field("key", arrow::utf8()),
                              arrow::field("at", arrow::timestamp(arrow::TimeUnit::MICRO))});
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  ASSERT_TRUE(at.Append(1'700'000'000'000'000).ok());
  auto at_array = *at.Finish();

  // Without overwriteSchema the new schema is a mismatch; overwriteSchema needs overwrite mode.
  WriteOptions plain_overwrite;
  plain_overwrite.mode = WriteMode::kOverwrite;
  auto mismatch = WriteTable(dir.str(), Rows(other, {Strings({"k"}), at_array}), plain_overwrite);
  EXPECT_TRUE(IsDeltaError(mismatch.status(), DeltaErrorCode::kSchemaMismatch))
      << mismatch.status().ToString();
  WriteOptions append_with_schema;
  append_with_schema.overwrite_schema = true;
  auto bad_mode = WriteTable(dir.str(), Rows(other, {Strings({"k"}), at_array}), append_with_schema);
  EXPECT_TRUE(IsDeltaError(bad_mode.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_EQ(testing::Latest(dir.str())->version(), 0);

  WriteOptions replace = plain_overwrite;
  replace.overwrite_schema = true;
  auto r = WriteTable(dir.str(), Rows(other, {Strings({"k"}), at_array}), replace);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_removed_files, 2);
  auto snapshot = testing::Latest(dir.str());
  EXPECT_EQ(snapshot->version(), 1);
  EXPECT_TRUE(snapshot->schema()->Equals(*other)) << snapshot->schema()->ToString();
  // Without partition_by the new definition is unpartitioned, as in delta-spark.
  EXPECT_TRUE(snapshot->partition_columns().empty());
  // timestamp_ntz needs its table feature: the protocol was raised with the schema.
  const auto& features = snapshot->protocol().writer_features;
  ASSERT_TRUE(features.has_value());
  EXPECT_NE(std::find(features->begin(), features->end(), "timestampNtz"), features->end());
  EXPECT_EQ(ReadAll(dir.str()).size(), 1u);
}

TEST(WriteTable, MergeSchemaRaisesTheProtocolForANewTimestampNtzColumn) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  EXPECT_EQ(testing::Latest(dir.str())->protocol().min_writer_version, 2);
  auto wider = arrow::schema({arrow::field("id", arrow::int64(), false),
                              arrow::field("at", arrow::timestamp(arrow::TimeUnit::MICRO))});
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  ASSERT_TRUE(at.Append(0).ok());
  WriteOptions merge;
  merge.merge_schema = true;
  auto r = WriteTable(dir.str(), Rows(wider, {Longs({2}), *at.Finish()}), merge);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto protocol = testing::Latest(dir.str())->protocol();
  EXPECT_EQ(protocol.min_reader_version, 3);
  EXPECT_EQ(protocol.min_writer_version, 7);
  ASSERT_TRUE(protocol.reader_features.has_value());
  EXPECT_NE(std::find(protocol.reader_features->begin(), protocol.reader_features->end(),
                      "timestampNtz"),
            protocol.reader_features->end());
  EXPECT_EQ(ReadAll(dir.str()).size(), 2u);
}

TEST(WriteTable, MergeSchemaAddsFieldsInsideStructs) {
  TempDir dir;
  auto a = arrow::field("a", arrow::int32());
  auto b = arrow::field("b", arrow::utf8());
  auto narrow = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("s", arrow::struct_({a}))});
  arrow::Int32Builder a1;
  ASSERT_TRUE(a1.Append(1).ok());
  auto s1 = *arrow::StructArray::Make({*a1.Finish()}, {a});
  ASSERT_TRUE(WriteTable(dir.str(), Rows(narrow, {Longs({1}), s1}), {}).ok());

  auto wide = arrow::schema({arrow::field("id", arrow::int64()),
                             arrow::field("s", arrow::struct_({a, b}))});
  arrow::Int32Builder a2;
  ASSERT_TRUE(a2.Append(2).ok());
  auto s2 = *arrow::StructArray::Make({*a2.Finish(), Strings({"x"})}, {a, b});
  auto without = WriteTable(dir.str(), Rows(wide, {Longs({2}), s2}), {});
  EXPECT_TRUE(IsDeltaError(without.status(), DeltaErrorCode::kSchemaMismatch))
      << without.status().ToString();
  EXPECT_NE(without.status().message().find("'s'"), std::string::npos)
      << without.status().ToString();
  EXPECT_NE(without.status().message().find("b: string"), std::string::npos)
      << without.status().ToString();

  WriteOptions merge;
  merge.merge_schema = true;
  auto merged = WriteTable(dir.str(), Rows(wide, {Longs({2}), s2}), merge);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  auto schema = testing::Latest(dir.str())->schema();
  EXPECT_TRUE(schema->GetFieldByName("s")->type()->Equals(arrow::struct_({a, b})))
      << schema->ToString();
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|{a:int32 = 1, b:string = null}",
                                                     "2|{a:int32 = 2, b:string = x}"}));
}

TEST(WriteTable, NotNullFieldsInsideStructsAreEnforced) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = *SchemaFromDdl("id long, s STRUCT<x: BIGINT, y: BIGINT NOT NULL>");
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  const auto before = LogFiles(dir.str());
  auto x_field = arrow::field("x", arrow::int64());
  auto y_field = arrow::field("y", arrow::int64());
  auto struct_of = [&](const std::vector<std::optional<int64_t>>& ys, std::vector<bool> valid) {
    arrow::BooleanBuilder mask;
    for (bool v : valid) (void)mask.Append(v);
    auto validity = *mask.Finish();
    std::vector<std::optional<int64_t>> xs(ys.size(), 7);
    // The struct's validity bitmap: the mask's value bits (set = valid).
    auto bitmap = static_cast<const arrow::BooleanArray&>(*validity).values();
    return *arrow::StructArray::Make({Longs(xs), Longs(ys)}, {x_field, y_field}, bitmap);
  };
  auto input = arrow::schema(
      {arrow::field("id", arrow::int64()), arrow::field("s", arrow::struct_({x_field, y_field}))});

  // y is null where s is not: refused, naming the nested column.
  auto bad = WriteTable(
      dir.str(), Rows(input, {Longs({1, 2}), struct_of({5, std::nullopt}, {true, true})}), {});
  ASSERT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kConstraintViolation))
      << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("'s.y'"), std::string::npos) << bad.status().ToString();
  // Input without y at all: y would be null in every row.
  auto only_x = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("s", arrow::struct_({x_field}))});
  auto xs = *arrow::StructArray::Make({Longs({7})}, {x_field});
  auto missing = WriteTable(dir.str(), Rows(only_x, {Longs({3}), xs}), {});
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(LogFiles(dir.str()), before);

  // A null struct carries no value for y, so its null y is fine.
  auto good = WriteTable(
      dir.str(), Rows(input, {Longs({4, 5}), struct_of({6, std::nullopt}, {true, false})}), {});
  ASSERT_TRUE(good.ok()) << good.status().ToString();
}

TEST(WriteTable, NarrowerTypesAreWidenedAndMergeSchemaAddsColumns) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), {}).ok());
  arrow::Int32Builder ib;
  (void)ib.Append(2);
  auto narrow = arrow::schema({arrow::field("ID", arrow::int32(), false), arrow::field("phone", arrow::utf8())});
  WriteOptions merge;
  merge.merge_schema = true;
  auto r = WriteTable(dir.str(), Rows(narrow, {*ib.Finish(), Strings({"555"})}), merge);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a|null", "2|null|555"}));
}

TEST(WriteTable, CheckConstraintViolationIsRejected) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = IdName();
  opts.constraints = {{"positive", "id > 0"}};
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  auto bad = WriteTable(dir.str(), Rows(IdName(), {Longs({5, -1}), Strings({"a", "b"})}), {});
  ASSERT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kConstraintViolation)) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("positive"), std::string::npos);
  EXPECT_EQ(LogFiles(dir.str()).size(), 1u);
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({5}), Strings({"a"})}), {}).ok());
}

TEST(WriteTable, ReplaceWhereRewritesOnlyMatchingRows) {
  TempDir dir;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2, 3, 4}), Strings({"a", "b", "c", "d"})}), {}).ok());
  WriteOptions rw;
  rw.mode = WriteMode::kOverwrite;
  rw.replace_where = "id >= 3";
  auto outside = WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"x"})}), rw);
  EXPECT_TRUE(IsDeltaError(outside.status(), DeltaErrorCode::kConstraintViolation));
  auto r = WriteTable(dir.str(), Rows(IdName(), {Longs({30}), Strings({"new"})}), rw);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a", "2|b", "30|new"}));
}

TEST(WriteTable, DynamicPartitionOverwriteReplacesOnlyWrittenPartitions) {
  TempDir dir;
  WriteOptions create;
  create.partition_by = {"name"};
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1, 2, 3}), Strings({"a", "b", "b"})}), create).ok());
  WriteOptions dyn;
  dyn.mode = WriteMode::kOverwrite;
  dyn.dynamic_partition_overwrite = true;
  ASSERT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({7}), Strings({"b"})}), dyn).ok());
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a", "7|b"}));
}

TEST(WriteTable, IdempotentWritesAreSkippedOnceRecorded) {
  TempDir dir;
  WriteOptions txn;
  txn.txn_app_id = "ingest";
  txn.txn_version = 5;
  auto first = WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), txn);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->skipped);
  auto again = WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), txn);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->skipped);
  txn.txn_version = 4;
  EXPECT_TRUE(WriteTable(dir.str(), Rows(IdName(), {Longs({1}), Strings({"a"})}), txn)->skipped);
  txn.txn_version = 6;
  EXPECT_FALSE(WriteTable(dir.str(), Rows(IdName(), {Longs({2}), Strings({"b"})}), txn)->skipped);
  EXPECT_EQ(ReadAll(dir.str()), (std::multiset<std::string>{"1|a", "2|b"}));
  auto snap = *(*DeltaTable::Open(dir.str()))->Latest();
  EXPECT_EQ(snap->txn_version("ingest"), 6);
}

}  // namespace
}  // namespace deltacpp
