// Change data feed reads (TableChangesBuilder): which rows each kind of commit contributes, the
// change columns, range and timestamp resolution, the feed having to be on across the range, and
// schema changes inside it. Tables come from the writer (CreateTable / WriteTable / table
// properties) and from hand-made commits (deletion vectors, cdc actions, dataChange=false); the
// expected changes are derived from the rows the test wrote.
#include <arrow/io/file.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <filesystem>
#include <set>

#include "deltacpp/api.h"
#include "deltacpp/ops/alter_table.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "protocol/deletion_vector.h"
#include "scan/scan_test_util.h"

namespace deltacpp {
namespace {

using scantest::AppendOne;
using scantest::Int64s;
using scantest::MakeTable;
using scantest::Range;
using scantest::Strings;
using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::TempDir;

std::shared_ptr<arrow::Schema> IdName() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
}

std::shared_ptr<arrow::RecordBatchReader> Rows(const std::shared_ptr<arrow::Schema>& schema,
                                               std::vector<std::shared_ptr<arrow::Array>> cols) {
  const int64_t rows = cols[0]->length();
  auto batch = arrow::RecordBatch::Make(schema, rows, std::move(cols));
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

void Write(const std::string& root, std::shared_ptr<arrow::RecordBatchReader> rows,
           WriteOptions options = {}) {
  auto r = WriteTable(root, std::move(rows), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

void CreateFeedTable(const std::string& root, const std::shared_ptr<arrow::Schema>& schema,
                     std::vector<std::string> partition_columns = {},
                     std::map<std::string, std::string> properties = {}) {
  CreateTableOptions opts;
  opts.schema = schema;
  opts.partition_columns = std::move(partition_columns);
  opts.properties = std::move(properties);
  if (!opts.properties.count("delta.enableChangeDataFeed")) {
    opts.properties["delta.enableChangeDataFeed"] = "true";
  }
  auto created = CreateTable(root, opts);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
}

arrow::Result<std::shared_ptr<arrow::Table>> ReadChanges(const std::string& root,
                                                         TableChangesOptions options) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(root));
  ARROW_ASSIGN_OR_RAISE(auto changes, TableChangesBuilder(table).Options(options).Build());
  return changes->ToTable();
}

TableChangesOptions Versions(int64_t start, std::optional<int64_t> end = std::nullopt) {
  TableChangesOptions o;
  o.starting_version = start;
  o.ending_version = end;
  return o;
}

// Rows as "col1|col2|..." (null as "null") over the given columns.
std::multiset<std::string> RowStrings(const arrow::Table& table,
                                      const std::vector<std::string>& columns) {
  std::multiset<std::string> out;
  for (int64_t r = 0; r < table.num_rows(); ++r) {
    std::string row;
    for (size_t c = 0; c < columns.size(); ++c) {
      auto col = table.GetColumnByName(columns[c]);
      EXPECT_NE(col, nullptr) << columns[c];
      if (!col) return {};
      auto s = *col->GetScalar(r);
      row += (c ? "|" : "") + (s->is_valid ? s->ToString() : std::string("null"));
    }
    out.insert(std::move(row));
  }
  return out;
}

// Changes over id, name, _change_type and _commit_version.
std::multiset<std::string> Changes(const std::string& root, TableChangesOptions options) {
  auto t = ReadChanges(root, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  return RowStrings(**t, {"id", "name", "_change_type", "_commit_version"});
}

arrow::Status ChangesStatus(const std::string& root, TableChangesOptions options) {
  return ReadChanges(root, options).status();
}

// ---------------------------------------------------------------------------------------------
// Tables written by deltacpp

TEST(TableChanges, AppendsAreInsertsAndReplaceWhereServesItsCdcFiles) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName());                                                  // v0
  Write(root, Rows(IdName(), {Int64s({1, 2, 3, 4}), Strings({"a", "b", "c", "d"})}));  // v1
  Write(root, Rows(IdName(), {Int64s({5, 6}), Strings({"e", "f"})}));               // v2
  WriteOptions replace;
  replace.mode = WriteMode::kOverwrite;
  replace.replace_where = "id >= 3";
  Write(root, Rows(IdName(), {Int64s({3, 9}), Strings({"C", "I"})}), replace);      // v3

  const std::multiset<std::string> v1 = {"1|a|insert|1", "2|b|insert|1", "3|c|insert|1",
                                         "4|d|insert|1"};
  const std::multiset<std::string> v2 = {"5|e|insert|2", "6|f|insert|2"};
  // The rewritten file's copied rows (1, 2) are no change.
  const std::multiset<std::string> v3 = {"3|c|delete|3", "4|d|delete|3", "5|e|delete|3",
                                         "6|f|delete|3", "3|C|insert|3", "9|I|insert|3"};
  auto all = v1;
  all.insert(v2.begin(), v2.end());
  all.insert(v3.begin(), v3.end());
  EXPECT_EQ(Changes(root, Versions(0)), all);
  EXPECT_EQ(Changes(root, Versions(0, 3)), all);
  EXPECT_EQ(Changes(root, Versions(2, 2)), v2);
  EXPECT_EQ(Changes(root, Versions(3)), v3);
  // An ending version beyond the latest reads to the latest.
  EXPECT_EQ(Changes(root, Versions(3, 40)), v3);
  EXPECT_TRUE(Changes(root, Versions(0, 0)).empty());
}

TEST(TableChanges, OutputColumnsHaveSparksTypesAndCommitTimestamps) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName());
  Write(root, Rows(IdName(), {Int64s({1}), Strings({"a"})}));
  Write(root, Rows(IdName(), {Int64s({2}), Strings({"b"})}));
  auto t = ReadChanges(root, Versions(1));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto& schema = *(*t)->schema();
  ASSERT_EQ(schema.num_fields(), 5);
  EXPECT_EQ(schema.field(0)->name(), "id");
  EXPECT_EQ(schema.field(1)->name(), "name");
  EXPECT_EQ(schema.field(2)->name(), "_change_type");
  EXPECT_TRUE(schema.field(2)->type()->Equals(arrow::utf8()));
  EXPECT_EQ(schema.field(3)->name(), "_commit_version");
  EXPECT_TRUE(schema.field(3)->type()->Equals(arrow::int64()));
  EXPECT_EQ(schema.field(4)->name(), "_commit_timestamp");
  EXPECT_TRUE(schema.field(4)->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));

  // Each row carries its commit's timestamp as history reports it.
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto history = (*table)->History();
  ASSERT_TRUE(history.ok());
  std::map<int64_t, int64_t> ts_us;
  for (const auto& e : *history) ts_us[e.version] = e.timestamp_ms * 1000;
  auto combined = (*t)->CombineChunksToBatch();
  ASSERT_TRUE(combined.ok());
  const auto& versions = static_cast<const arrow::Int64Array&>(*(*combined)->column(3));
  const auto& stamps = static_cast<const arrow::TimestampArray&>(*(*combined)->column(4));
  ASSERT_EQ(versions.length(), 2);
  for (int64_t i = 0; i < versions.length(); ++i) {
    EXPECT_EQ(stamps.Value(i), ts_us[versions.Value(i)]) << "version " << versions.Value(i);
  }
}

TEST(TableChanges, ColumnsAndFilterSelectOverTableAndChangeColumns) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName());
  Write(root, Rows(IdName(), {Int64s({1, 2, 3}), Strings({"a", "b", "c"})}));
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  Write(root, Rows(IdName(), {Int64s({7}), Strings({"g"})}), overwrite);

  TableChangesOptions o = Versions(1);
  o.columns = {"_CHANGE_TYPE", "id"};
  o.filter = "_change_type = 'delete' AND id > 1";
  auto t = ReadChanges(root, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ((*t)->num_columns(), 2);
  EXPECT_EQ((*t)->schema()->field(0)->name(), "_change_type");
  EXPECT_EQ(RowStrings(**t, {"_change_type", "id"}),
            (std::multiset<std::string>{"delete|2", "delete|3"}));

  o.columns = {"nope"};
  EXPECT_TRUE(IsDeltaError(ChangesStatus(root, o), DeltaErrorCode::kInvalidArgument));
  o.columns = {};
  o.filter = "nope = 1";
  EXPECT_TRUE(IsDeltaError(ChangesStatus(root, o), DeltaErrorCode::kInvalidExpression));
}

TEST(TableChanges, OverwriteDeletesTheRemovedFilesRowsAndInsertsTheNewOnes) {
  TempDir dir;
  const std::string root = dir.str();
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8()),
                               arrow::field("part", arrow::utf8())});
  CreateFeedTable(root, schema, {"part"});
  Write(root, Rows(schema, {Int64s({1, 2, 3}), Strings({"a", "b", "c"}),
                            Strings({"x", "y", "y"})}));
  // Replaces partition y wholly: no cdc files, the removes describe the deletes.
  WriteOptions replace;
  replace.mode = WriteMode::kOverwrite;
  replace.replace_where = "part = 'y'";
  Write(root, Rows(schema, {Int64s({4}), Strings({"d"}), Strings({"y"})}), replace);
  auto t = ReadChanges(root, Versions(2));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(RowStrings(**t, {"id", "name", "part", "_change_type"}),
            (std::multiset<std::string>{"2|b|y|delete", "3|c|y|delete", "4|d|y|insert"}));
}

TEST(TableChanges, PartitionedCdcFilesTakeTheirPartitionValuesFromTheAction) {
  TempDir dir;
  const std::string root = dir.str();
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8()),
                               arrow::field("part", arrow::utf8())});
  CreateFeedTable(root, schema, {"part"});
  Write(root, Rows(schema, {Int64s({1, 2, 3}), Strings({"a", "b", "c"}),
                            Strings({"x", "x", "y"})}));
  WriteOptions replace;
  replace.mode = WriteMode::kOverwrite;
  replace.replace_where = "id = 2";
  Write(root, Rows(schema, {Int64s({2}), Strings({"B"}), Strings({"x"})}), replace);
  auto t = ReadChanges(root, Versions(2));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(RowStrings(**t, {"id", "name", "part", "_change_type"}),
            (std::multiset<std::string>{"2|b|x|delete", "2|B|x|insert"}));
}

// ---------------------------------------------------------------------------------------------
// The feed being on, range checks

TEST(TableChanges, VersionsWithoutTheFeedAreRefusedNamingTheVersion) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName(), {}, {{"delta.enableChangeDataFeed", "false"}});  // v0
  Write(root, Rows(IdName(), {Int64s({1}), Strings({"a"})}));                      // v1
  auto on = SetTableProperties(root, {{"delta.enableChangeDataFeed", "true"}});    // v2
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  Write(root, Rows(IdName(), {Int64s({2}), Strings({"b"})}));                      // v3
  auto off = SetTableProperties(root, {{"delta.enableChangeDataFeed", "false"}});  // v4
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  Write(root, Rows(IdName(), {Int64s({3}), Strings({"c"})}));                      // v5

  auto st = ChangesStatus(root, Versions(0, 3));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kVersionNotFound)) << st.ToString();
  EXPECT_NE(st.message().find("range [0, 3]"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("not recorded for version [0]"), std::string::npos)
      << st.message();
  EXPECT_EQ(Changes(root, Versions(2, 3)), (std::multiset<std::string>{"2|b|insert|3"}));
  st = ChangesStatus(root, Versions(2, 5));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kVersionNotFound)) << st.ToString();
  EXPECT_NE(st.message().find("not recorded for version [4]"), std::string::npos)
      << st.message();
  st = ChangesStatus(root, Versions(5));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kVersionNotFound)) << st.ToString();
}

TEST(TableChanges, RangeErrors) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName());
  Write(root, Rows(IdName(), {Int64s({1}), Strings({"a"})}));
  auto st = ChangesStatus(root, Versions(2));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kVersionNotFound)) << st.ToString();
  EXPECT_NE(st.message().find("start version 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("latest table version 1"), std::string::npos) << st.message();
  st = ChangesStatus(root, Versions(1, 0));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument)) << st.ToString();
  EXPECT_TRUE(IsDeltaError(ChangesStatus(root, TableChangesOptions{}),
                           DeltaErrorCode::kInvalidArgument));
  EXPECT_TRUE(IsDeltaError(ChangesStatus(root, Versions(-1)), DeltaErrorCode::kInvalidArgument));
  TableChangesOptions both = Versions(0);
  both.starting_timestamp_ms = 0;
  EXPECT_TRUE(IsDeltaError(ChangesStatus(root, both), DeltaErrorCode::kInvalidArgument));
}

// ---------------------------------------------------------------------------------------------
// Hand-made commits

// A fixture table with the feed and deletion vectors on, id 0..4 in one file at version 1.
class HandMadeChanges : public ::testing::Test {
 protected:
  void SetUp() override {
    auto schema = arrow::schema({arrow::field("id", arrow::int64())});
    ASSERT_TRUE(writer_
                    .Create(schema, {},
                            {{"delta.enableDeletionVectors", "true"},
                             {"delta.enableChangeDataFeed", "true"}},
                            3, 7, {"deletionVectors"}, {"deletionVectors", "changeDataFeed"},
                            /*commit_timestamp_ms=*/1'000'000)
                    .ok());
    path_ = AppendOne(writer_, FixtureFile(MakeTable({{"id", Range(0, 5)}})));
    ASSERT_FALSE(path_.empty());
    size_ = writer_.state().live.begin()->second.size;
  }

  static std::string DvJson(const std::vector<uint64_t>& rows) {
    if (rows.empty()) return "";
    auto dv = internal::MakeInlineDeletionVector(rows);
    EXPECT_TRUE(dv.ok());
    return fmt::format(
        R"(,"deletionVector":{{"storageType":"i","pathOrInlineDv":"{}","sizeInBytes":{},"cardinality":{}}})",
        dv->path_or_inline_dv, dv->size_in_bytes, dv->cardinality);
  }
  std::string RemoveLine(const std::vector<uint64_t>& dv, bool data_change = true) const {
    return fmt::format(
        R"({{"remove":{{"path":"{}","deletionTimestamp":5,"dataChange":{},"extendedFileMetadata":true,"partitionValues":{{}},"size":{}{}}}}})",
        path_, data_change ? "true" : "false", size_, DvJson(dv));
  }
  std::string AddLine(const std::vector<uint64_t>& dv, bool data_change = true) const {
    return fmt::format(
        R"({{"add":{{"path":"{}","partitionValues":{{}},"size":{},"modificationTime":5,"dataChange":{}{}}}}})",
        path_, size_, data_change ? "true" : "false", DvJson(dv));
  }
  static std::string CommitInfo(const std::string& op, const std::string& metrics = "{}") {
    return fmt::format(
        R"({{"commitInfo":{{"timestamp":5,"operation":"{}","operationParameters":{{}},"operationMetrics":{}}}}})",
        op, metrics);
  }
  std::multiset<std::string> Ids(TableChangesOptions options) const {
    auto t = ReadChanges(writer_.table_root(), options);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return {};
    return RowStrings(**t, {"id", "_change_type", "_commit_version"});
  }

  TempDir dir_;
  FixtureTableWriter writer_{dir_.str()};
  std::string path_;
  int64_t size_ = 0;
};

TEST_F(HandMadeChanges, DeletionVectorReAddsGiveOnlyTheRowsWhoseDeletionChanged) {
  // v2: DELETE marks rows 1 and 3; v3: rows 1, 3 and 4; v4: a restore back to only row 1.
  ASSERT_TRUE(writer_.CommitRaw({CommitInfo("DELETE"), RemoveLine({}), AddLine({1, 3})}).ok());
  ASSERT_TRUE(
      writer_.CommitRaw({CommitInfo("DELETE"), RemoveLine({1, 3}), AddLine({1, 3, 4})}).ok());
  ASSERT_TRUE(
      writer_.CommitRaw({CommitInfo("RESTORE"), RemoveLine({1, 3, 4}), AddLine({1})}).ok());
  EXPECT_EQ(Ids(Versions(2, 2)), (std::multiset<std::string>{"1|delete|2", "3|delete|2"}));
  EXPECT_EQ(Ids(Versions(3, 3)), (std::multiset<std::string>{"4|delete|3"}));
  EXPECT_EQ(Ids(Versions(4, 4)), (std::multiset<std::string>{"3|insert|4", "4|insert|4"}));
  EXPECT_EQ(Ids(Versions(1)),
            (std::multiset<std::string>{"0|insert|1", "1|insert|1", "2|insert|1", "3|insert|1",
                                        "4|insert|1", "1|delete|2", "3|delete|2", "4|delete|3",
                                        "3|insert|4", "4|insert|4"}));
}

TEST_F(HandMadeChanges, ARemovedFileIsReadAsItWasBeforeTheRemove) {
  ASSERT_TRUE(writer_.CommitRaw({CommitInfo("DELETE"), RemoveLine({}), AddLine({0, 2})}).ok());
  ASSERT_TRUE(writer_.CommitRaw({CommitInfo("DELETE"), RemoveLine({0, 2})}).ok());
  EXPECT_EQ(Ids(Versions(3)),
            (std::multiset<std::string>{"1|delete|3", "3|delete|3", "4|delete|3"}));
}

TEST_F(HandMadeChanges, CommitsWithoutDataChangeContributeNothing) {
  // An OPTIMIZE-like rewrite: remove and add with dataChange=false.
  auto rewritten = writer_.Append({FixtureFile(MakeTable({{"id", Range(0, 5)}}))
                                       .WithDataChange(false)},
                                  "OPTIMIZE");
  ASSERT_TRUE(rewritten.ok());
  ASSERT_TRUE(writer_.CommitRaw({CommitInfo("OPTIMIZE"), RemoveLine({}, false)}).ok());
  EXPECT_TRUE(Ids(Versions(2)).empty());
}

TEST_F(HandMadeChanges, AMergeThatChangedNoRowContributesNothing) {
  ASSERT_TRUE(writer_
                  .CommitRaw({CommitInfo("MERGE",
                                         R"({"numTargetRowsInserted":"0","numTargetRowsUpdated":"0","numTargetRowsDeleted":"0"})"),
                              RemoveLine({}), AddLine({0})})
                  .ok());
  EXPECT_TRUE(Ids(Versions(2)).empty());
  // The same commit reporting a deleted row is read from its actions.
  ASSERT_TRUE(writer_
                  .CommitRaw({CommitInfo("MERGE",
                                         R"({"numTargetRowsInserted":"0","numTargetRowsUpdated":"0","numTargetRowsDeleted":"1"})"),
                              RemoveLine({0}), AddLine({0, 1})})
                  .ok());
  EXPECT_EQ(Ids(Versions(3)), (std::multiset<std::string>{"1|delete|3"}));
}

TEST_F(HandMadeChanges, ACommitWithCdcFilesIsReadOnlyFromThem) {
  // A cdc file holding an update of id 2, committed with a remove of the data file, which
  // alone would read as 5 deletes.
  std::filesystem::create_directories(dir_.path() / "_change_data");
  auto cdc = MakeTable({{"id", Int64s({2, 2})},
                        {"_change_type", Strings({"update_preimage", "update_postimage"})}});
  const auto cdc_path = dir_.path() / "_change_data" / "cdc-00000-test.c000.snappy.parquet";
  auto out = arrow::io::FileOutputStream::Open(cdc_path.string());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(parquet::arrow::WriteTable(*cdc, arrow::default_memory_pool(), *out, 1024).ok());
  ASSERT_TRUE((*out)->Close().ok());
  const auto cdc_size = std::filesystem::file_size(cdc_path);
  ASSERT_TRUE(
      writer_
          .CommitRaw({CommitInfo("UPDATE"), RemoveLine({}),
                      fmt::format(
                          R"({{"cdc":{{"path":"_change_data/cdc-00000-test.c000.snappy.parquet","partitionValues":{{}},"size":{},"dataChange":false}}}})",
                          cdc_size)})
          .ok());
  EXPECT_EQ(Ids(Versions(2)), (std::multiset<std::string>{"2|update_preimage|2",
                                                          "2|update_postimage|2"}));
}

TEST_F(HandMadeChanges, AReaderFeatureDeltacppDoesNotSupportIsRefused) {
  ASSERT_TRUE(writer_
                  .CommitRaw({CommitInfo("SET TBLPROPERTIES"),
                              R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","madeUpFeature"],"writerFeatures":["deletionVectors","changeDataFeed","madeUpFeature"]}})"})
                  .ok());
  auto st = ChangesStatus(writer_.table_root(), Versions(1, 1));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kUnsupportedFeature)) << st.ToString();
}

// ---------------------------------------------------------------------------------------------
// Timestamps

class TimestampRanges : public ::testing::Test {
 protected:
  // Versions 0..3 committed at 1000 s, 2000 s, 3000 s and 4000 s.
  void SetUp() override {
    auto schema = arrow::schema({arrow::field("id", arrow::int64())});
    ASSERT_TRUE(
        writer_.Create(schema, {}, {{"delta.enableChangeDataFeed", "true"}}, 1, 4).ok());
    for (int64_t i = 1; i <= 3; ++i) {
      ASSERT_TRUE(writer_.Append({FixtureFile(MakeTable({{"id", Int64s({i})}}))}).ok());
    }
    for (int64_t v = 0; v <= 3; ++v) {
      ASSERT_TRUE(writer_.SetCommitFileTime(v, (v + 1) * 1'000'000).ok());
    }
  }
  std::multiset<std::string> Ids(TableChangesOptions options) const {
    auto t = ReadChanges(writer_.table_root(), options);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return {};
    return RowStrings(**t, {"id", "_commit_version", "_commit_timestamp"});
  }
  static TableChangesOptions Times(std::optional<int64_t> start_ms,
                                   std::optional<int64_t> end_ms) {
    TableChangesOptions o;
    o.starting_timestamp_ms = start_ms;
    o.ending_timestamp_ms = end_ms;
    return o;
  }

  TempDir dir_;
  FixtureTableWriter writer_{dir_.str()};
};

TEST_F(TimestampRanges, StartIsTheFirstCommitAtOrAfterAndEndTheLastAtOrBefore) {
  const std::multiset<std::string> v2 = {"2|2|1970-01-01 00:50:00.000000Z"};
  const std::multiset<std::string> v3 = {"3|3|1970-01-01 01:06:40.000000Z"};
  auto both = v2;
  both.insert(v3.begin(), v3.end());
  EXPECT_EQ(Ids(Times(2'500'000, std::nullopt)), both);
  EXPECT_EQ(Ids(Times(3'000'000, 3'000'000)), v2);
  EXPECT_EQ(Ids(Times(2'000'001, 3'999'999)), v2);
  TableChangesOptions mixed = Times(std::nullopt, 3'500'000);
  mixed.starting_version = 2;
  EXPECT_EQ(Ids(mixed), v2);
  // Before the first commit: from version 0 (which has no data).
  EXPECT_EQ(Ids(Times(1, 1'000'000)), std::multiset<std::string>{});
}

TEST_F(TimestampRanges, TwoTimestampsBetweenTheSameCommitsGiveNoRows) {
  auto t = ReadChanges(writer_.table_root(), Times(2'100'000, 2'900'000));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->num_rows(), 0);
}

TEST_F(TimestampRanges, OutOfRangeTimestampsAreRefused) {
  auto st = ReadChanges(writer_.table_root(), Times(4'000'001, std::nullopt)).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kTimestampOutOfRange)) << st.ToString();
  st = ReadChanges(writer_.table_root(), Times(1'000'000, 4'000'001)).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kTimestampOutOfRange)) << st.ToString();
  st = ReadChanges(writer_.table_root(), Times(1, 999'999)).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kTimestampOutOfRange)) << st.ToString();
  // Start after end with no commit between them is an invalid range.
  st = ReadChanges(writer_.table_root(), Times(2'900'000, 2'100'000)).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument)) << st.ToString();
}

TEST(TableChangesInCommitTimestamps, CommitsAreDatedAndFoundByTheirInCommitTimestamps) {
  TempDir dir;
  FixtureTableWriter writer(dir.str());
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  ASSERT_TRUE(writer
                  .Create(schema, {},
                          {{"delta.enableChangeDataFeed", "true"},
                           {"delta.enableInCommitTimestamps", "true"}},
                          1, 7, {}, {"inCommitTimestamp", "changeDataFeed"}, 1'000'000)
                  .ok());
  // The commit files are dated now; the in-commit timestamps are far in the past.
  ASSERT_TRUE(writer.Append({FixtureFile(MakeTable({{"id", Int64s({1})}}))}, "WRITE",
                            std::nullopt, 5'000'000)
                  .ok());
  ASSERT_TRUE(writer.Append({FixtureFile(MakeTable({{"id", Int64s({2})}}))}, "WRITE",
                            std::nullopt, 9'000'000)
                  .ok());
  TableChangesOptions o;
  o.starting_timestamp_ms = 4'000'000;
  o.ending_timestamp_ms = 6'000'000;
  auto t = ReadChanges(dir.str(), o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ((*t)->num_rows(), 1);
  EXPECT_EQ(RowStrings(**t, {"id", "_commit_version"}), (std::multiset<std::string>{"1|1"}));
  auto stamp = (*t)->GetColumnByName("_commit_timestamp")->GetScalar(0);
  ASSERT_TRUE(stamp.ok());
  EXPECT_EQ(std::static_pointer_cast<arrow::TimestampScalar>(*stamp)->value, 5'000'000'000);
}

// ---------------------------------------------------------------------------------------------
// Schema changes inside the range

TEST(TableChanges, AnAddedColumnReadsAsNullForEarlierRows) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName());
  Write(root, Rows(IdName(), {Int64s({1}), Strings({"a"})}));
  auto added = AddColumns(root, {NewColumn{arrow::field("extra", arrow::int64()), ""}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  auto wide = arrow::schema({arrow::field("id", arrow::int64()),
                             arrow::field("name", arrow::utf8()),
                             arrow::field("extra", arrow::int64())});
  Write(root, Rows(wide, {Int64s({2}), Strings({"b"}), Int64s({20})}));
  auto t = ReadChanges(root, Versions(1));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(RowStrings(**t, {"id", "extra", "_change_type"}),
            (std::multiset<std::string>{"1|null|insert", "2|20|insert"}));
}

TEST(TableChanges, ATypeChangeInTheRangeIsRefused) {
  TempDir dir;
  const std::string root = dir.str();
  CreateFeedTable(root, IdName());
  Write(root, Rows(IdName(), {Int64s({1}), Strings({"a"})}));  // v1
  auto text_ids = arrow::schema({arrow::field("id", arrow::utf8()),
                                 arrow::field("name", arrow::utf8())});
  WriteOptions replace_schema;
  replace_schema.mode = WriteMode::kOverwrite;
  replace_schema.overwrite_schema = true;
  Write(root, Rows(text_ids, {Strings({"x"}), Strings({"b"})}), replace_schema);  // v2
  auto st = ChangesStatus(root, Versions(1));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kSchemaMismatch)) << st.ToString();
  EXPECT_NE(st.message().find("version 1"), std::string::npos) << st.message();
}


// A column-mapped table (name mode) whose columns `id` and `name` are stored as `col-a` and
// `col-b`; version 1 holds ids 1 and 2.
class MappedChanges : public ::testing::Test {
 protected:
  static std::string Field(const std::string& name, const std::string& type, int id,
                           const std::string& physical) {
    return fmt::format(
        R"({{"name":"{}","type":"{}","nullable":true,"metadata":{{"delta.columnMapping.id":{},"delta.columnMapping.physicalName":"{}"}}}})",
        name, type, id, physical);
  }
  static std::string Schema(const std::vector<std::string>& fields) {
    std::string out = R"({"type":"struct","fields":[)";
    for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
    return out + "]}";
  }
  void SetUp() override {
    ASSERT_TRUE(writer_
                    .CreateWithSchemaString(Schema({Field("id", "long", 1, "col-a"),
                                                    Field("name", "string", 2, "col-b")}),
                                            {}, Config(), 2, 5)
                    .ok());
    ASSERT_TRUE(writer_
                    .Append({FixtureFile(MakeTable({{"col-a", Int64s({1, 2})},
                                                    {"col-b", Strings({"a", "b"})}}))})
                    .ok());
  }
  static std::map<std::string, std::string> Config() {
    return {{"delta.enableChangeDataFeed", "true"},
            {"delta.columnMapping.mode", "name"},
            {"delta.columnMapping.maxColumnId", "2"}};
  }
  // Commits a metaData action with `schema_string` (same id and configuration).
  void CommitSchema(const std::string& schema_string) {
    std::string escaped;
    for (char c : schema_string) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    auto line = fmt::format(
        R"({{"metaData":{{"id":"{}","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{}","partitionColumns":[],"configuration":{{"delta.enableChangeDataFeed":"true","delta.columnMapping.mode":"name","delta.columnMapping.maxColumnId":"3"}},"createdTime":1}}}})",
        writer_.state().table_id, escaped);
    ASSERT_TRUE(writer_.CommitRaw({line}).ok());
  }
  void AppendRow(int64_t id) {
    ASSERT_TRUE(writer_
                    .Append({FixtureFile(MakeTable({{"col-a", Int64s({id})},
                                                    {"col-b", Strings({"n"})}}))})
                    .ok());
  }

  TempDir dir_;
  FixtureTableWriter writer_{dir_.str()};
};

TEST_F(MappedChanges, ARenameInsideTheRangeIsRefusedAndReadsFromItUseTheNewName) {
  CommitSchema(Schema({Field("id", "long", 1, "col-a"), Field("label", "string", 2, "col-b")}));
  AppendRow(3);  // v3
  auto st = ChangesStatus(dir_.str(), Versions(1, 3));
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kSchemaMismatch)) << st.ToString();
  // As in delta-spark: the renamed schema of version 2 is the read schema's, so the data of the
  // start version is what cannot be read with it.
  EXPECT_NE(st.message().find("incompatible data schema at version 1"), std::string::npos)
      << st.message();
  auto t = ReadChanges(dir_.str(), Versions(2, 3));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(RowStrings(**t, {"id", "label", "_change_type"}),
            (std::multiset<std::string>{"3|n|insert"}));
  // A range that ends before the rename is read in its own (ending version's) schema.
  t = ReadChanges(dir_.str(), Versions(1, 1));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(RowStrings(**t, {"id", "name", "_change_type"}),
            (std::multiset<std::string>{"1|a|insert", "2|b|insert"}));
}

TEST_F(MappedChanges, ADropInsideTheRangeIsRefusedAndAnAddIsNot) {
  CommitSchema(Schema({Field("id", "long", 1, "col-a"), Field("name", "string", 2, "col-b"),
                       Field("extra", "long", 3, "col-c")}));  // v2: added column
  AppendRow(3);                                                  // v3
  auto t = ReadChanges(dir_.str(), Versions(1, 3));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(RowStrings(**t, {"id", "name", "extra"}),
            (std::multiset<std::string>{"1|a|null", "2|b|null", "3|n|null"}));
  CommitSchema(Schema({Field("id", "long", 1, "col-a"), Field("extra", "long", 3, "col-c")}));
  auto st = ChangesStatus(dir_.str(), Versions(1, 4));  // v4 drops `name`
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kSchemaMismatch)) << st.ToString();
}

}  // namespace
}  // namespace deltacpp
