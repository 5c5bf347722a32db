// MERGE: the classic upsert with deletion vectors and by rewriting files, clause order and
// conditions, deletes, not-matched-by-source clauses, duplicate matches, insert-only merges,
// candidate-file pruning, the commit and the change data feed.
#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/merge.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/table_changes.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::ChangeDataFiles;
using testing::Code;
using testing::DataFiles;
using testing::DeletionVectorFiles;
using testing::HookedTable;
using testing::LatestVersion;
using testing::Longs;
using testing::ReadCommitFile;
using testing::ReadRows;
using testing::ReferencedFiles;
using testing::Strings;
using testing::TempDir;

const std::map<std::string, std::string> kWithDv = {{"delta.enableDeletionVectors", "true"}};
const std::map<std::string, std::string> kCopyOnWrite = {};

std::multiset<std::string> Rows(std::initializer_list<std::string> rows) { return rows; }

std::shared_ptr<arrow::Schema> ScoreSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("nama", arrow::utf8()),
                        arrow::field("nilai", arrow::int64())});
}

// Rows (id, nama, nilai) as a source.
std::shared_ptr<arrow::RecordBatchReader> Scores(
    const std::vector<std::optional<int64_t>>& ids,
    const std::vector<std::optional<std::string>>& names,
    const std::vector<std::optional<int64_t>>& scores) {
  return testing::Rows(ScoreSchema(), {Longs(ids), Strings(names), Longs(scores)});
}

class MergeTest : public ::testing::Test {
 protected:
  // (id BIGINT, nama STRING, nilai BIGINT) holding (1,Ali,85), (2,Budi,90), (3,Citra,78) in
  // one file, at version 1.
  std::string MakeScores(const std::map<std::string, std::string>& properties,
                         const std::string& name = "t") {
    std::string root = (dir_.path() / name).string();
    CreateTableOptions create;
    create.schema = ScoreSchema();
    create.properties = properties;
    auto created = CreateTable(root, create);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    auto written = WriteTable(root, Scores({1, 2, 3}, {"Ali", "Budi", "Citra"}, {85, 90, 78}),
                              WriteOptions{});
    EXPECT_TRUE(written.ok()) << written.status().ToString();
    return root;
  }

  // The upsert of the tutorial: matched rows take the source's score, new ids are inserted.
  MergeBuilder Upsert(const std::string& root) {
    MergeBuilder merge(root, Scores({2, 4}, {"Budi", "Dewi"}, {95, 92}));
    merge.TargetAlias("t")
        .SourceAlias("s")
        .On("t.id = s.id")
        .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
        .WhenNotMatchedInsertAll();
    return merge;
  }

  // Expects `merge` to fail with `code` and leave the table as it was.
  void ExpectRefusedCleanly(const std::string& root, const arrow::Result<MergeMetrics>& merge,
                            const std::string& code, int64_t version) {
    ASSERT_FALSE(merge.ok());
    EXPECT_EQ(Code(merge.status()), code) << merge.status().ToString();
    EXPECT_EQ(LatestVersion(root), version);
    EXPECT_EQ(DataFiles(root), ReferencedFiles(root)) << "files of the failed merge remain";
    EXPECT_TRUE(DeletionVectorFiles(root).empty());
    EXPECT_TRUE(ChangeDataFiles(root).empty());
  }

  TempDir dir_;
};

#define ASSERT_MERGES(result)                                \
  ASSERT_TRUE((result).ok()) << (result).status().ToString(); \
  ASSERT_TRUE((result)->version.has_value())

const std::multiset<std::string> kUpserted = {"1|Ali|85", "2|Budi|95", "3|Citra|78",
                                              "4|Dewi|92"};

TEST_F(MergeTest, UpsertByRewritingFiles) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = Upsert(root).Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(*merged->version, 2);
  EXPECT_EQ(ReadRows(root), kUpserted);
  EXPECT_EQ(merged->num_source_rows, 2);
  EXPECT_EQ(merged->num_target_rows_inserted, 1);
  EXPECT_EQ(merged->num_target_rows_updated, 1);
  EXPECT_EQ(merged->num_target_rows_matched_updated, 1);
  EXPECT_EQ(merged->num_target_rows_deleted, 0);
  EXPECT_EQ(merged->num_target_rows_copied, 2);  // Ali and Citra moved to the new file
  EXPECT_EQ(merged->num_output_rows, 4);
  EXPECT_EQ(merged->num_target_files_removed, 1);
  EXPECT_EQ(merged->num_target_files_added, 2);  // the rewritten file, the inserted row's file
  EXPECT_EQ(merged->num_target_deletion_vectors_added, 0);
  EXPECT_EQ(merged->num_target_change_files_added, 0);
  const auto commit = ReadCommitFile(root, 2);
  EXPECT_EQ(commit.operation, "MERGE");
  EXPECT_EQ(commit.parameters.at("predicate"), R"(["t.id = s.id"])");
  EXPECT_EQ(commit.parameters.at("matchedPredicates"), R"([{"actionType":"update"}])");
  EXPECT_EQ(commit.parameters.at("notMatchedPredicates"), R"([{"actionType":"insert"}])");
  EXPECT_EQ(commit.parameters.at("notMatchedBySourcePredicates"), "[]");
  EXPECT_EQ(commit.removes.size(), 1u);
  EXPECT_EQ(commit.adds.size(), 2u);
  for (const auto& [name, value] : merged->Named()) {
    EXPECT_EQ(commit.metrics.at(name), std::to_string(value)) << name;
  }
}

TEST_F(MergeTest, AnIdempotentMergeRunsOncePerAppVersion) {
  const auto root = MakeScores(kCopyOnWrite);
  auto first = Upsert(root).Txn("ingest", 5).Execute();
  ASSERT_MERGES(first);
  EXPECT_FALSE(first->skipped);
  EXPECT_EQ(testing::Latest(root)->txn_version("ingest"), std::optional<int64_t>(5));
  for (int64_t version : {5, 4}) {
    auto again = Upsert(root).Txn("ingest", version).Execute();
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_TRUE(again->skipped) << version;
    EXPECT_FALSE(again->version.has_value());
  }
  EXPECT_EQ(LatestVersion(root), 2) << "skipped merges commit nothing";
  MergeBuilder later(root, Scores({2}, {"Budi"}, {99}));
  later.TargetAlias("t").SourceAlias("s").On("t.id = s.id")
      .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}}).Txn("ingest", 6);
  auto next = later.Execute();
  ASSERT_MERGES(next);
  EXPECT_EQ(ReadRows(root),
            (std::multiset<std::string>{"1|Ali|85", "2|Budi|99", "3|Citra|78", "4|Dewi|92"}));
  auto bad = Upsert(root).Txn("bad\xff", 7).Execute();
  ExpectRefusedCleanly(root, bad, "InvalidArgument", 3);
}

TEST_F(MergeTest, UpsertWithDeletionVectors) {
  const auto root = MakeScores(kWithDv);
  const auto files_before = DataFiles(root);
  auto merged = Upsert(root).Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), kUpserted);
  EXPECT_EQ(merged->num_target_rows_updated, 1);
  EXPECT_EQ(merged->num_target_rows_inserted, 1);
  EXPECT_EQ(merged->num_target_rows_copied, 0);
  EXPECT_EQ(merged->num_output_rows, 2);
  EXPECT_EQ(merged->num_target_deletion_vectors_added, 1);
  EXPECT_EQ(merged->num_target_files_removed, 0);  // the old file stays, with a DV
  EXPECT_EQ(merged->num_target_files_added, 2);    // the updated row's file, the inserted one's
  // The old file is still there and still referenced.
  const auto referenced = ReferencedFiles(root, 2);
  for (const auto& f : files_before) EXPECT_TRUE(referenced.count(f)) << f;
  const auto commit = ReadCommitFile(root, 2);
  ASSERT_EQ(commit.removes.size(), 1u);
  ASSERT_EQ(commit.adds.size(), 3u);
  int with_dv = 0;
  for (const auto& a : commit.adds) with_dv += a.dv_cardinality.value_or(0) == 1;
  EXPECT_EQ(with_dv, 1);
}

TEST_F(MergeTest, MatchedClausesAreTriedInOrderAndTheFirstTrueActs) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = MergeBuilder(root, Scores({1, 2, 3}, {"x", "y", "z"}, {60, 20, 5}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedUpdate("s.nilai > 50", {{"nama", "'first'"}})
                    .WhenMatchedUpdate("s.nilai > 10", {{"nama", "'second'"}})
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|first|85", "2|second|90", "3|Citra|78"}));
  EXPECT_EQ(merged->num_target_rows_matched_updated, 2);
  EXPECT_EQ(merged->num_target_rows_copied, 1);
  EXPECT_EQ(ReadCommitFile(root, 2).parameters.at("matchedPredicates"),
            R"([{"predicate":"s.nilai > 50","actionType":"update"},)"
            R"({"predicate":"s.nilai > 10","actionType":"update"}])");
}

TEST_F(MergeTest, DeleteAndUpdateClausesInOneFile) {
  for (const auto& properties : {kCopyOnWrite, kWithDv}) {
    const std::string name = properties.empty() ? "cow" : "dv";
    const auto root = MakeScores(properties, name);
    auto merged = MergeBuilder(root, Scores({1, 2, 3}, {"x", "y", "z"}, {150, -5, 80}))
                      .TargetAlias("t")
                      .SourceAlias("s")
                      .On("t.id = s.id")
                      .WhenMatchedUpdate("s.nilai > 100", {{"nilai", "100"}})
                      .WhenMatchedDelete("s.nilai < 0")
                      .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}, {"nama", "s.nama"}})
                      .Execute();
    ASSERT_MERGES(merged);
    EXPECT_EQ(ReadRows(root), Rows({"1|Ali|100", "3|z|80"})) << name;
    EXPECT_EQ(merged->num_target_rows_matched_updated, 2) << name;
    EXPECT_EQ(merged->num_target_rows_matched_deleted, 1) << name;
    EXPECT_EQ(merged->num_target_rows_deleted, 1) << name;
    EXPECT_EQ(merged->num_target_rows_copied, 0) << name;
  }
}

TEST_F(MergeTest, UnconditionalMatchedDelete) {
  const auto root = MakeScores(kWithDv);
  auto merged = MergeBuilder(root, Scores({3, 9}, {"x", "y"}, {0, 0}))
                    .On("target.id = source.id")
                    .WhenMatchedDelete()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|85", "2|Budi|90"}));
  EXPECT_EQ(merged->num_target_rows_matched_deleted, 1);
  EXPECT_EQ(merged->num_target_rows_inserted, 0);
  EXPECT_EQ(ReadCommitFile(root, 2).parameters.at("matchedPredicates"),
            R"([{"actionType":"delete"}])");
}

TEST_F(MergeTest, NotMatchedBySourceClausesUpdateAndDeleteTargetRowsWithoutMatch) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = MergeBuilder(root, Scores({2}, {"Budi"}, {99}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                    .WhenNotMatchedBySourceDelete("t.nilai < 80")
                    .WhenNotMatchedBySourceUpdate(std::nullopt, {{"nilai", "nilai - 80"}})
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|5", "2|Budi|99"}));
  EXPECT_EQ(merged->num_target_rows_matched_updated, 1);
  EXPECT_EQ(merged->num_target_rows_not_matched_by_source_updated, 1);
  EXPECT_EQ(merged->num_target_rows_not_matched_by_source_deleted, 1);
  EXPECT_EQ(merged->num_target_rows_updated, 2);
  EXPECT_EQ(merged->num_target_rows_deleted, 1);
  EXPECT_EQ(ReadCommitFile(root, 2).parameters.at("notMatchedBySourcePredicates"),
            R"([{"predicate":"t.nilai < 80","actionType":"delete"},{"actionType":"update"}])");
}

TEST_F(MergeTest, NotMatchedBySourceClauseCannotNameTheSource) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = MergeBuilder(root, Scores({2}, {"Budi"}, {99}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenNotMatchedBySourceUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                    .Execute();
  ExpectRefusedCleanly(root, merged, "InvalidExpression", 1);
}

TEST_F(MergeTest, SeveralSourceRowsMatchingOneTargetRowIsAnError) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = MergeBuilder(root, Scores({2, 2}, {"a", "b"}, {1, 2}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                    .Execute();
  ExpectRefusedCleanly(root, merged, "InvalidArgument", 1);
  EXPECT_NE(merged.status().message().find("MERGE"), std::string::npos);
  EXPECT_NE(merged.status().message().find("t.id = s.id"), std::string::npos);
  EXPECT_NE(merged.status().message().find("multiple source rows"), std::string::npos);
}

TEST_F(MergeTest, SeveralSourceRowsMayMatchWhenTheOnlyMatchedClauseDeletes) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = MergeBuilder(root, Scores({2, 2}, {"a", "b"}, {1, 2}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedDelete()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|85", "3|Citra|78"}));
  EXPECT_EQ(merged->num_target_rows_deleted, 1);
}

TEST_F(MergeTest, InsertOnlyMergeNeverRemovesFiles) {
  for (const auto& properties : {kCopyOnWrite, kWithDv}) {
    const std::string name = properties.empty() ? "cow" : "dv";
    const auto root = MakeScores(properties, name);
    auto merged = MergeBuilder(root, Scores({2, 4}, {"Budi", "Dewi"}, {95, 92}))
                      .TargetAlias("t")
                      .SourceAlias("s")
                      .On("t.id = s.id")
                      .WhenNotMatchedInsertAll()
                      .Execute();
    ASSERT_MERGES(merged);
    EXPECT_EQ(ReadRows(root), Rows({"1|Ali|85", "2|Budi|90", "3|Citra|78", "4|Dewi|92"}));
    const auto commit = ReadCommitFile(root, 2);
    EXPECT_TRUE(commit.removes.empty()) << name;
    EXPECT_EQ(commit.adds.size(), 1u) << name;
    EXPECT_EQ(merged->num_target_rows_inserted, 1) << name;
    EXPECT_EQ(merged->num_target_files_removed, 0) << name;
  }
}

TEST_F(MergeTest, SourceWithoutMatchCommitsAnAppendOnly) {
  const auto root = MakeScores(kCopyOnWrite);
  const auto files_before = DataFiles(root);
  auto merged = MergeBuilder(root, Scores({4, 5}, {"Dewi", "Eka"}, {92, 70}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                    .WhenNotMatchedInsert(std::nullopt, {{"id", "s.id"}, {"nama", "upper(s.nama)"}})
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|85", "2|Budi|90", "3|Citra|78", "4|DEWI|null",
                                  "5|EKA|null"}));
  const auto commit = ReadCommitFile(root, 2);
  EXPECT_TRUE(commit.removes.empty());
  EXPECT_EQ(commit.adds.size(), 1u);
  EXPECT_EQ(merged->num_target_rows_updated, 0);
  EXPECT_EQ(merged->num_target_rows_inserted, 2);
  const auto referenced = ReferencedFiles(root, 2);
  for (const auto& f : files_before) EXPECT_TRUE(referenced.count(f)) << f;
}

TEST_F(MergeTest, NothingToDoCommitsNothing) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = MergeBuilder(root, Scores({2}, {"x"}, {1}))
                    .On("target.id = source.id")
                    .WhenMatchedUpdate("source.nilai > 1000", {{"nilai", "source.nilai"}})
                    .Execute();
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_FALSE(merged->version.has_value());
  EXPECT_EQ(LatestVersion(root), 1);
  EXPECT_EQ(DataFiles(root), ReferencedFiles(root));
}

TEST_F(MergeTest, OnlyTheLastClauseOfAKindMayOmitItsCondition) {
  const auto root = MakeScores(kCopyOnWrite);
  auto merged = Upsert(root).WhenMatchedDelete("s.nilai < 0").Execute();
  ExpectRefusedCleanly(root, merged, "InvalidArgument", 1);
  EXPECT_NE(merged.status().message().find("WHEN MATCHED clause 1 (UPDATE)"), std::string::npos)
      << merged.status().ToString();
  auto not_matched = MergeBuilder(root, Scores({4}, {"x"}, {1}))
                         .On("target.id = source.id")
                         .WhenNotMatchedInsertAll()
                         .WhenNotMatchedInsertAll("source.nilai > 0")
                         .Execute();
  ExpectRefusedCleanly(root, not_matched, "InvalidArgument", 1);
  EXPECT_NE(not_matched.status().message().find("WHEN NOT MATCHED clause 1 (INSERT *)"),
            std::string::npos)
      << not_matched.status().ToString();
}

TEST_F(MergeTest, BareColumnsResolveToTheOneSideThatHasThem) {
  const auto root = MakeScores(kCopyOnWrite);
  auto source = testing::Rows(
      arrow::schema({arrow::field("key", arrow::int64()), arrow::field("score", arrow::int64())}),
      {Longs({1}), Longs({50})});
  auto merged = MergeBuilder(root, source)
                    .On("id = key")
                    .WhenMatchedUpdate("score < nilai", {{"nilai", "score + 1"}})
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|51", "2|Budi|90", "3|Citra|78"}));
  // A column both sides have must be qualified.
  auto ambiguous = MergeBuilder(root, Scores({1}, {"x"}, {1}))
                       .On("id = source.id")
                       .WhenMatchedDelete()
                       .Execute();
  ExpectRefusedCleanly(root, ambiguous, "InvalidExpression", 2);
  EXPECT_NE(ambiguous.status().message().find("ambiguous"), std::string::npos);
}

TEST_F(MergeTest, UpdatedAndInsertedRowsKeepNotNullAndCheckConstraints) {
  const std::string root = (dir_.path() / "c").string();
  CreateTableOptions create;
  create.schema = arrow::schema({arrow::field("id", arrow::int64(), /*nullable=*/false),
                                 arrow::field("nama", arrow::utf8()),
                                 arrow::field("nilai", arrow::int64())});
  create.properties = {{"delta.constraints.valid_score", "nilai <= 100"}};
  ASSERT_TRUE(CreateTable(root, create).ok());
  ASSERT_TRUE(WriteTable(root, Scores({1, 2}, {"a", "b"}, {10, 20}), WriteOptions{}).ok());
  auto too_high = MergeBuilder(root, Scores({1}, {"a"}, {500}))
                      .On("target.id = source.id")
                      .WhenMatchedUpdateAll()
                      .Execute();
  ExpectRefusedCleanly(root, too_high, "ConstraintViolation", 1);
  auto null_id = MergeBuilder(root, Scores({std::nullopt}, {"a"}, {5}))
                     .On("target.id = source.id")
                     .WhenNotMatchedInsertAll()
                     .Execute();
  ExpectRefusedCleanly(root, null_id, "ConstraintViolation", 1);
}

TEST_F(MergeTest, TargetFilesOutsideTheSourceKeyRangeAreNotRead) {
  const std::string root = (dir_.path() / "p").string();
  testing::CreateIdNamePart(root, kCopyOnWrite, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2, 3, 4}, {"w", "x", "y", "z"}, "a");
  testing::AppendIdNamePart(root, {10, 11, 12}, {"p", "q", "r"}, "b");
  ASSERT_EQ(testing::SpoilDataFiles(root, "part=b"), 1);
  auto source = [] {
    return testing::Rows(arrow::schema({arrow::field("id", arrow::int64()),
                                        arrow::field("name", arrow::utf8()),
                                        arrow::field("part", arrow::utf8())}),
                         {Longs({2, 5}), Strings({"X", "new"}), Strings({"a", "a"})});
  };
  auto merged = MergeBuilder(root, source())
                    .On("target.id = source.id")
                    .WhenMatchedUpdate(std::nullopt, {{"name", "source.name"}})
                    .WhenNotMatchedInsertAll()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(merged->num_target_rows_updated, 1);
  EXPECT_EQ(merged->num_target_rows_inserted, 1);
  // With a NOT MATCHED BY SOURCE clause every target file is read, the spoiled one too.
  auto by_source = MergeBuilder(root, source())
                       .On("target.id = source.id")
                       .WhenNotMatchedBySourceDelete()
                       .Execute();
  ASSERT_FALSE(by_source.ok());
  EXPECT_NE(by_source.status().message().find("part=b"), std::string::npos)
      << by_source.status().ToString();
}

TEST_F(MergeTest, ChangeDataFeedOfAMerge) {
  for (const auto& dv : {false, true}) {
    const std::string name = dv ? "dv" : "cow";
    std::map<std::string, std::string> properties = {{"delta.enableChangeDataFeed", "true"}};
    if (dv) properties["delta.enableDeletionVectors"] = "true";
    const auto root = MakeScores(properties, name);
    auto merged = MergeBuilder(root, Scores({2, 3, 4}, {"Budi", "Citra", "Dewi"}, {95, -1, 92}))
                      .TargetAlias("t")
                      .SourceAlias("s")
                      .On("t.id = s.id")
                      .WhenMatchedDelete("s.nilai < 0")
                      .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                      .WhenNotMatchedInsertAll()
                      .Execute();
    ASSERT_MERGES(merged);
    EXPECT_GT(merged->num_target_change_files_added, 0) << name;
    auto table = DeltaTable::Open(root);
    ASSERT_TRUE(table.ok());
    auto changes = TableChangesBuilder(*table).StartingVersion(2).EndingVersion(2).Build();
    ASSERT_TRUE(changes.ok()) << changes.status().ToString();
    auto read = (*changes)->ToTable();
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    auto rows = testing::RowStrings(
        *(*read)->SelectColumns({0, 1, 2, (*read)->schema()->GetFieldIndex("_change_type")})
             .ValueOrDie());
    EXPECT_EQ(rows, Rows({"2|Budi|90|update_preimage", "2|Budi|95|update_postimage",
                          "3|Citra|78|delete", "4|Dewi|92|insert"}))
        << name;
  }
}

TEST_F(MergeTest, GeneratedColumnsAreComputedForUpdatedAndInsertedRows) {
  const std::string root = (dir_.path() / "g").string();
  CreateTableOptions create;
  auto schema = SchemaFromDdl("a BIGINT, b BIGINT, g BIGINT GENERATED ALWAYS AS (a * 2)");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  create.schema = *schema;
  create.properties = kWithDv;
  ASSERT_TRUE(CreateTable(root, create).ok());
  auto ab = arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::int64())});
  ASSERT_TRUE(WriteTable(root, testing::Rows(ab, {Longs({1, 2}), Longs({5, 6})}), WriteOptions{})
                  .ok());
  auto merged = MergeBuilder(root, testing::Rows(ab, {Longs({2, 3}), Longs({60, 70})}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.b * 10 = s.b")
                    .WhenMatchedUpdate(std::nullopt, {{"a", "s.a + 10"}})
                    .WhenNotMatchedInsertAll()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|5|2", "12|6|24", "3|70|6"}));
  // An assigned generated column must equal its expression.
  auto wrong = MergeBuilder(root, testing::Rows(ab, {Longs({1}), Longs({5})}))
                   .TargetAlias("t")
                   .SourceAlias("s")
                   .On("t.b = s.b")
                   .WhenMatchedUpdate(std::nullopt, {{"g", "99"}})
                   .Execute();
  ExpectRefusedCleanly(root, wrong, "ConstraintViolation", 2);
}

TEST_F(MergeTest, InsertedRowsGetIdentityValuesAndTheHighWaterMarkMoves) {
  const std::string root = (dir_.path() / "i").string();
  CreateTableOptions create;
  auto schema = SchemaFromDdl("id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING");
  ASSERT_TRUE(schema.ok());
  create.schema = *schema;
  create.transaction.enforced_features = {"identityColumns"};
  ASSERT_TRUE(CreateTable(root, create).ok());
  auto v = arrow::schema({arrow::field("v", arrow::utf8())});
  ASSERT_TRUE(WriteTable(root, testing::Rows(v, {Strings({"a", "b"})}), WriteOptions{}).ok());
  auto merge = [&](std::vector<std::optional<std::string>> values) {
    return MergeBuilder(root, testing::Rows(v, {Strings(values)}))
        .On("target.v = source.v")
        .WhenMatchedUpdate(std::nullopt, {{"v", "upper(source.v)"}})
        .WhenNotMatchedInsert("source.v = 'x'", {{"v", "'ex'"}})
        .WhenNotMatchedInsertAll()
        .Execute();
  };
  auto first = merge({"b", "c", "x"});
  ASSERT_MERGES(first);
  // The two inserted rows take the next two values, in no promised order (as Spark).
  const auto after_first = ReadRows(root);
  EXPECT_TRUE(after_first == Rows({"1|a", "2|B", "3|c", "4|ex"}) ||
              after_first == Rows({"1|a", "2|B", "3|ex", "4|c"}))
      << ::testing::PrintToString(after_first);
  auto second = merge({"d"});
  ASSERT_MERGES(second);
  auto after_second = ReadRows(root);
  EXPECT_EQ(after_second.count("5|d"), 1u) << ::testing::PrintToString(after_second);
  EXPECT_EQ(after_second.size(), 5u);
  // A GENERATED ALWAYS identity column cannot be given a value.
  auto explicit_id = MergeBuilder(root, testing::Rows(v, {Strings({"e"})}))
                         .On("target.v = source.v")
                         .WhenNotMatchedInsert(std::nullopt, {{"id", "100"}, {"v", "source.v"}})
                         .Execute();
  ExpectRefusedCleanly(root, explicit_id, "ConstraintViolation", *second->version);
}

TEST_F(MergeTest, ColumnMappingTableIsMerged) {
  for (const auto& dv : {"false", "true"}) {
    const auto root = MakeScores({{"delta.columnMapping.mode", "name"},
                                  {"delta.enableDeletionVectors", dv},
                                  {"delta.enableChangeDataFeed", "true"}},
                                 std::string("mapped-") + dv);
    auto merged = Upsert(root).Execute();
    ASSERT_MERGES(merged);
    EXPECT_EQ(ReadRows(root), kUpserted) << dv;
  }
}

TEST_F(MergeTest, ConcurrentRemovalOfACandidateFileFailsTheMergeAndLeavesNothing) {
  const std::string root = (dir_.path() / "p").string();
  testing::CreateIdNamePart(root, kWithDv, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2}, {"w", "x"}, "a");
  arrow::Result<DeleteMetrics> winner = arrow::Status::UnknownError("did not run");
  auto table =
      HookedTable(root, [&] { winner = DeleteBuilder(root).Where("part = 'a'").Execute(); });
  auto source = testing::Rows(arrow::schema({arrow::field("id", arrow::int64()),
                                             arrow::field("name", arrow::utf8()),
                                             arrow::field("part", arrow::utf8())}),
                              {Longs({2, 3}), Strings({"X", "y"}), Strings({"a", "a"})});
  auto lost = MergeBuilder(table, source)
                  .On("target.id = source.id")
                  .WhenMatchedUpdateAll()
                  .WhenNotMatchedInsertAll()
                  .Execute();
  ASSERT_TRUE(winner.ok()) << winner.status().ToString();
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(Code(lost.status()), "ConcurrentDeleteRead") << lost.status().ToString();
  EXPECT_EQ(DataFiles(root), ReferencedFiles(root)) << "the loser's new files are still there";
  EXPECT_EQ(LatestVersion(root), *winner->version);
}

TEST_F(MergeTest, InsertOnlyMergeAfterAConcurrentBlindAppendOutsideItsRangeCommits) {
  const std::string root = (dir_.path() / "p").string();
  testing::CreateIdNamePart(root, kCopyOnWrite, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2}, {"w", "x"}, "a");
  auto table = HookedTable(root, [&] { testing::AppendIdNamePart(root, {50}, {"late"}, "b"); });
  auto source = testing::Rows(arrow::schema({arrow::field("id", arrow::int64()),
                                             arrow::field("name", arrow::utf8()),
                                             arrow::field("part", arrow::utf8())}),
                              {Longs({2, 3}), Strings({"X", "y"}), Strings({"a", "a"})});
  auto merged = MergeBuilder(table, source)
                    .On("target.id = source.id AND target.part = 'a'")
                    .WhenNotMatchedInsertAll()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(*merged->version, 3);
  EXPECT_EQ(ReadRows(root), Rows({"1|w|a", "2|x|a", "3|y|a", "50|late|b"}));
}

TEST_F(MergeTest, ConditionWithoutEqualitiesJoinsEveryPair) {
  const auto root = MakeScores(kWithDv);
  auto source = testing::Rows(
      arrow::schema({arrow::field("lo", arrow::int64()), arrow::field("hi", arrow::int64()),
                     arrow::field("bonus", arrow::int64())}),
      {Longs({1, 7}), Longs({2, 9}), Longs({10, 1})});
  auto merged = MergeBuilder(root, source)
                    .On("id BETWEEN lo AND hi")
                    .WhenMatchedUpdate(std::nullopt, {{"nilai", "nilai + bonus"}})
                    .WhenNotMatchedInsert(std::nullopt, {{"id", "lo"}, {"nilai", "bonus"}})
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|95", "2|Budi|100", "3|Citra|78", "7|null|1"}));
}

TEST_F(MergeTest, OnlyPairsWhereTheWholeConditionHoldsMatch) {
  const auto root = MakeScores(kCopyOnWrite);
  // Both source rows have id 2, but only one satisfies the rest of the condition: no duplicate.
  auto merged = MergeBuilder(root, Scores({2, 2}, {"neg", "pos"}, {-1, 5}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id AND s.nilai > 0")
                    .WhenMatchedUpdate(std::nullopt, {{"nama", "s.nama"}})
                    .WhenNotMatchedInsertAll()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(ReadRows(root), Rows({"1|Ali|85", "2|pos|90", "3|Citra|78", "2|neg|-1"}));
  EXPECT_EQ(merged->num_target_rows_updated, 1);
  EXPECT_EQ(merged->num_target_rows_inserted, 1);
}

TEST_F(MergeTest, UpdateMayMoveARowToAnotherPartition) {
  for (const auto& properties : {kCopyOnWrite, kWithDv}) {
    const std::string root = (dir_.path() / (properties.empty() ? "cow" : "dv")).string();
    testing::CreateIdNamePart(root, properties, /*partitioned=*/true);
    testing::AppendIdNamePart(root, {1, 2}, {"w", "x"}, "a");
    auto source = testing::Rows(
        arrow::schema({arrow::field("id", arrow::int64()), arrow::field("part", arrow::utf8())}),
        {Longs({2}), Strings({"b"})});
    auto merged = MergeBuilder(root, source)
                      .On("target.id = source.id")
                      .WhenMatchedUpdate(std::nullopt, {{"part", "source.part"}})
                      .Execute();
    ASSERT_MERGES(merged);
    EXPECT_EQ(ReadRows(root), Rows({"1|w|a", "2|x|b"}));
  }
}

TEST_F(MergeTest, ChangeDataFeedOfInsertsAndDeletesThatReadersDerive) {
  // With deletion vectors, deletes and inserts alone need no cdc file: the feed comes from the
  // DV and the new file.
  const auto root =
      MakeScores({{"delta.enableChangeDataFeed", "true"}, {"delta.enableDeletionVectors", "true"}});
  auto merged = MergeBuilder(root, Scores({1, 4}, {"x", "Dewi"}, {0, 92}))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedDelete()
                    .WhenNotMatchedInsertAll()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(merged->num_target_change_files_added, 0);
  EXPECT_TRUE(ReadCommitFile(root, 2).cdc.empty());
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto changes = TableChangesBuilder(*table).StartingVersion(2).EndingVersion(2).Build();
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  auto read = (*changes)->ToTable();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto rows = testing::RowStrings(
      *(*read)->SelectColumns({0, 1, 2, (*read)->schema()->GetFieldIndex("_change_type")})
           .ValueOrDie());
  EXPECT_EQ(rows, Rows({"1|Ali|85|delete", "4|Dewi|92|insert"}));
}

TEST_F(MergeTest, SourceIsAVersionOfADeltaTable) {
  const auto root = MakeScores(kWithDv);
  // The source table's version 1 holds the tutorial's source rows; version 2 does not.
  const auto source_root = MakeScores(kCopyOnWrite, "source");
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  ASSERT_TRUE(WriteTable(source_root, Scores({2, 4}, {"Budi", "Dewi"}, {95, 92}), overwrite).ok());
  ASSERT_TRUE(WriteTable(source_root, Scores({3}, {"Citra"}, {1}), overwrite).ok());
  auto source_table = DeltaTable::Open(source_root);
  ASSERT_TRUE(source_table.ok());
  auto version_2 = (*source_table)->SnapshotAt(2);
  ASSERT_TRUE(version_2.ok()) << version_2.status().ToString();
  auto merged = MergeBuilder(root, std::shared_ptr<const Snapshot>(*version_2))
                    .TargetAlias("t")
                    .SourceAlias("s")
                    .On("t.id = s.id")
                    .WhenMatchedUpdate(std::nullopt, {{"nilai", "s.nilai"}})
                    .WhenNotMatchedInsertAll()
                    .Execute();
  ASSERT_MERGES(merged);
  EXPECT_EQ(merged->num_source_rows, 2);
  EXPECT_EQ(ReadRows(root), kUpserted);
  // The target's own version 1 as the source: UPDATE SET * brings back Budi's old score and
  // NOT MATCHED BY SOURCE DELETE removes Dewi, whom version 1 lacks.
  auto target = DeltaTable::Open(root);
  ASSERT_TRUE(target.ok());
  auto original = (*target)->SnapshotAt(1);
  ASSERT_TRUE(original.ok());
  auto restored = MergeBuilder(*target, std::shared_ptr<const Snapshot>(*original))
                      .TargetAlias("t")
                      .SourceAlias("s")
                      .On("t.id = s.id")
                      .WhenMatchedUpdateAll()
                      .WhenNotMatchedBySourceDelete()
                      .Execute();
  ASSERT_MERGES(restored);
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|Ali|85", "2|Budi|90", "3|Citra|78"}));
}

// (id, nama, nilai, kelas): the scores with a column the table lacks.
std::shared_ptr<arrow::RecordBatchReader> ScoresWithClass(
    const std::vector<std::optional<int64_t>>& ids,
    const std::vector<std::optional<std::string>>& names,
    const std::vector<std::optional<int64_t>>& scores,
    const std::vector<std::optional<std::string>>& classes) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("nama", arrow::utf8()),
                               arrow::field("nilai", arrow::int64()),
                               arrow::field("kelas", arrow::utf8())});
  return testing::Rows(schema, {Longs(ids), Strings(names), Longs(scores), Strings(classes)});
}

MergeBuilder UpsertAll(const std::string& root, std::shared_ptr<arrow::RecordBatchReader> source) {
  MergeBuilder merge(root, std::move(source));
  merge.TargetAlias("t").SourceAlias("s").On("t.id = s.id").WhenMatchedUpdateAll()
      .WhenNotMatchedInsertAll();
  return merge;
}

std::vector<std::string> ColumnNames(const std::string& root) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok());
  auto latest = (*table)->Latest();
  EXPECT_TRUE(latest.ok());
  return (*latest)->schema()->field_names();
}

TEST_F(MergeTest, SchemaEvolutionAddsTheSourcesNewColumnsInTheMergesCommit) {
  for (const auto& properties : {kCopyOnWrite, kWithDv}) {
    const std::string name = properties.empty() ? "cow" : "dv";
    const auto root = MakeScores(properties, name);
    // Without schema evolution the extra source column is not written anywhere.
    auto plain = UpsertAll(root, ScoresWithClass({2}, {"Budi"}, {91}, {"B"})).Execute();
    ASSERT_MERGES(plain);
    EXPECT_EQ(ColumnNames(root), (std::vector<std::string>{"id", "nama", "nilai"})) << name;
    EXPECT_FALSE(ReadCommitFile(root, 2).has_metadata) << name;

    auto evolved = UpsertAll(root, ScoresWithClass({2, 4}, {"Budi", "Dewi"}, {95, 92},
                                                   {"B", "A"}))
                       .WithSchemaEvolution()
                       .Execute();
    ASSERT_MERGES(evolved);
    EXPECT_EQ(*evolved->version, 3);
    EXPECT_TRUE(ReadCommitFile(root, 3).has_metadata) << name;
    EXPECT_EQ(ColumnNames(root), (std::vector<std::string>{"id", "nama", "nilai", "kelas"}))
        << name;
    // Rows the merge did not write read NULL for the new column.
    EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|Ali|85|null", "2|Budi|95|B",
                                                          "3|Citra|78|null", "4|Dewi|92|A"}))
        << name;
    // The version before the merge still reads in its own schema.
    EXPECT_EQ(ReadRows(root, 2),
              (std::multiset<std::string>{"1|Ali|85", "2|Budi|91", "3|Citra|78"}))
        << name;
  }
}

TEST_F(MergeTest, UnderSchemaEvolutionStarClausesToleratePartialSources) {
  const auto root = MakeScores(kWithDv);
  auto merged = UpsertAll(root, ScoresWithClass({2, 4}, {"Budi", "Dewi"}, {95, 92}, {"B", "A"}))
                    .WithSchemaEvolution()
                    .Execute();
  ASSERT_MERGES(merged);
  // A source lacking target columns: UPDATE SET * keeps their values, INSERT * leaves NULL.
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("kelas", arrow::utf8())});
  auto partial = UpsertAll(root, testing::Rows(schema, {Longs({1, 5}), Strings({"C", "D"})}))
                     .WithSchemaEvolution()
                     .Execute();
  ASSERT_MERGES(partial);
  EXPECT_EQ(ReadRows(root),
            (std::multiset<std::string>{"1|Ali|85|C", "2|Budi|95|B", "3|Citra|78|null",
                                        "4|Dewi|92|A", "5|null|null|D"}));
  // Without schema evolution the missing column is an error naming it.
  auto refused = UpsertAll(root, testing::Rows(schema, {Longs({1}), Strings({"E"})})).Execute();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no column 'nama'"), std::string::npos)
      << refused.status().ToString();
}

TEST_F(MergeTest, SchemaEvolutionAddsFieldsInsideStructs) {
  const std::string root = (dir_.path() / "nested").string();
  auto inner = arrow::struct_({arrow::field("a", arrow::int64())});
  auto wider =
      arrow::struct_({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8())});
  CreateTableOptions create;
  create.schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("info", inner)});
  ASSERT_TRUE(CreateTable(root, create).ok());
  auto old_struct = std::make_shared<arrow::StructArray>(
      inner, 2, arrow::ArrayVector{Longs({10, 30})});
  ASSERT_TRUE(WriteTable(root, testing::Rows(create.schema, {Longs({1, 3}), old_struct}),
                         WriteOptions{})
                  .ok());
  auto source_schema = arrow::schema({arrow::field("id", arrow::int64()),
                                      arrow::field("info", wider)});
  auto new_struct = std::make_shared<arrow::StructArray>(
      wider, 2, arrow::ArrayVector{Longs({11, 20}), Strings({"x", "y"})});
  auto merged = UpsertAll(root, testing::Rows(source_schema, {Longs({1, 2}), new_struct}))
                    .WithSchemaEvolution()
                    .Execute();
  ASSERT_MERGES(merged);
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto latest = (*table)->Latest();
  ASSERT_TRUE(latest.ok());
  EXPECT_TRUE((*latest)->schema()->field(1)->type()->Equals(*wider))
      << (*latest)->schema()->ToString();
  // The row the merge did not write reads NULL for the new field.
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|{a:int64 = 11, b:string = x}",
                                                        "2|{a:int64 = 20, b:string = y}",
                                                        "3|{a:int64 = 30, b:string = null}"}));
}

TEST_F(MergeTest, SchemaEvolutionOfAColumnMappedTableIsRefused) {
  const auto root = MakeScores({{"delta.columnMapping.mode", "name"}});
  auto refused = UpsertAll(root, ScoresWithClass({2}, {"Budi"}, {95}, {"B"}))
                     .WithSchemaEvolution()
                     .Execute();
  ExpectRefusedCleanly(root, refused, "UnsupportedFeature", 1);
}

}  // namespace
}  // namespace deltacpp
