// UPDATE: new values computed from the old rows, deletion vectors or rewritten files, the rules
// the new rows must keep (NOT NULL, CHECK, generated and identity columns, column types),
// change data, the commit, and conflicts.
#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/update.h"
#include "deltacpp/ops/write.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AppendIdNamePart;
using testing::ChangeDataFiles;
using testing::ChangeRows;
using testing::Code;
using testing::CreateIdNamePart;
using testing::DataFiles;
using testing::DeletionVectorFiles;
using testing::HookedTable;
using testing::LatestVersion;
using testing::LogListing;
using testing::Longs;
using testing::ReadCommitFile;
using testing::ReadRows;
using testing::ReferencedFiles;
using testing::Strings;
using testing::TempDir;

const std::map<std::string, std::string> kWithDv = {{"delta.enableDeletionVectors", "true"}};
const std::map<std::string, std::string> kCopyOnWrite = {};

std::multiset<std::string> Rows(std::initializer_list<std::string> rows) { return rows; }

class UpdateTest : public ::testing::Test {
 protected:
  // Version 1: ids 1-4 in part a (one file); version 2: ids 10-12 in part b.
  std::string MakeTable(const std::map<std::string, std::string>& properties,
                        const std::string& name = "t") {
    std::string root = (dir_.path() / name).string();
    CreateIdNamePart(root, properties, /*partitioned=*/true);
    AppendIdNamePart(root, {1, 2, 3, 4}, {"w", "x", std::nullopt, "z"}, "a");
    AppendIdNamePart(root, {10, 11, 12}, {"p", "q", "r"}, "b");
    return root;
  }

  // A table from DDL with one append of `batch`.
  std::string MakeDdlTable(const std::string& ddl, std::map<std::string, std::string> properties,
                           const std::shared_ptr<arrow::RecordBatch>& batch,
                           const std::string& name) {
    std::string root = (dir_.path() / name).string();
    CreateTableOptions create;
    auto schema = SchemaFromDdl(ddl);
    EXPECT_TRUE(schema.ok()) << schema.status().ToString();
    create.schema = *schema;
    create.properties = std::move(properties);
    create.transaction.enforced_features = {"identityColumns"};
    auto created = CreateTable(root, create);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    auto written = WriteTable(root, testing::Reader(batch->schema(), {batch}), WriteOptions{});
    EXPECT_TRUE(written.ok()) << written.status().ToString();
    return root;
  }

  // Expects `update` to fail with `code` and leave the table as it was.
  void ExpectRefusedCleanly(const std::string& root, const arrow::Result<UpdateMetrics>& update,
                            const std::string& code) {
    ASSERT_FALSE(update.ok());
    EXPECT_EQ(Code(update.status()), code) << update.status().ToString();
    EXPECT_EQ(DataFiles(root), ReferencedFiles(root)) << "files of the failed update remain";
    EXPECT_TRUE(DeletionVectorFiles(root).empty());
    EXPECT_TRUE(ChangeDataFiles(root).empty());
  }

  TempDir dir_;
};

#define ASSERT_UPDATES(result)                                        \
  ASSERT_TRUE((result).ok()) << (result).status().ToString();          \
  ASSERT_TRUE((result)->version.has_value())

TEST_F(UpdateTest, DeletionVectorMarksTheOldRowAndANewFileHoldsTheNewOne) {
  const auto root = MakeTable(kWithDv);
  const auto files_before = DataFiles(root);
  auto updated = UpdateBuilder(root).Set("name", "upper(name)").Where("id = 2").Execute();
  ASSERT_UPDATES(updated);
  EXPECT_EQ(updated->num_updated_rows, 1);
  EXPECT_EQ(updated->num_copied_rows, 0);
  EXPECT_EQ(updated->num_added_files, 1);
  EXPECT_EQ(updated->num_removed_files, 1);  // touched, as delta-spark counts for UPDATE
  EXPECT_EQ(updated->num_deletion_vectors_added, 1);
  EXPECT_EQ(updated->num_deletion_vectors_removed, 0);
  EXPECT_EQ(DataFiles(root).size(), files_before.size() + 1);
  const auto commit = ReadCommitFile(root, *updated->version);
  EXPECT_EQ(commit.operation, "UPDATE");
  EXPECT_EQ(commit.parameters.at("predicate"), R"(["id = 2"])");
  // The table does not set delta.isolationLevel: delta-spark's default level for DML.
  EXPECT_EQ(commit.isolation_level, "WriteSerializable");
  ASSERT_EQ(commit.adds.size(), 2u);  // the new row's file, the old file with its DV
  ASSERT_EQ(commit.removes.size(), 1u);
  EXPECT_EQ(ReadRows(root), Rows({"1|w|a", "2|X|a", "3|null|a", "4|z|a", "10|p|b", "11|q|b",
                                  "12|r|b"}));
  for (const auto& [name, value] : updated->Named()) {
    EXPECT_EQ(commit.metrics.at(name), std::to_string(value)) << name;
  }
}

TEST_F(UpdateTest, CopyOnWriteRewritesTheFileWithEveryRow) {
  const auto root = MakeTable(kCopyOnWrite);
  auto updated = UpdateBuilder(root).Set("name", "'n'").Where("id = 2").Execute();
  ASSERT_UPDATES(updated);
  EXPECT_EQ(updated->num_updated_rows, 1);
  EXPECT_EQ(updated->num_copied_rows, 3);
  EXPECT_EQ(updated->num_removed_files, 1);
  EXPECT_EQ(updated->num_added_files, 1);
  EXPECT_EQ(updated->num_deletion_vectors_added, 0);
  EXPECT_TRUE(DeletionVectorFiles(root).empty());
  EXPECT_EQ(ReadRows(root), Rows({"1|w|a", "2|n|a", "3|null|a", "4|z|a", "10|p|b", "11|q|b",
                                  "12|r|b"}));
}

TEST_F(UpdateTest, ExpressionsSeeTheOldRowAndUnassignedColumnsKeepTheirValues) {
  for (const auto& props : {kCopyOnWrite, kWithDv}) {
    const auto root = MakeTable(props, props.empty() ? "cow" : "dv");
    auto updated = UpdateBuilder(root)
                       .Set("id", "id + 100")
                       .Set("name", "concat(name, cast(id AS STRING))")
                       .Where("part = 'b' AND id <> 11")
                       .Execute();
    ASSERT_UPDATES(updated);
    EXPECT_EQ(updated->num_updated_rows, 2);
    EXPECT_EQ(ReadRows(root), Rows({"1|w|a", "2|x|a", "3|null|a", "4|z|a", "110|p10|b",
                                    "11|q|b", "112|r12|b"}));
  }
}

TEST_F(UpdateTest, SettingThePartitionColumnMovesTheRow) {
  const auto root = MakeTable(kWithDv);
  auto updated = UpdateBuilder(root).Set("part", "'c'").Where("id = 1").Execute();
  ASSERT_UPDATES(updated);
  const auto commit = ReadCommitFile(root, *updated->version);
  bool new_partition = false;
  for (const auto& a : commit.adds) {
    if (a.partition_values.count("part") && a.partition_values.at("part") == "c") {
      new_partition = true;
    }
  }
  EXPECT_TRUE(new_partition);
  EXPECT_EQ(ReadRows(root), Rows({"1|w|c", "2|x|a", "3|null|a", "4|z|a", "10|p|b", "11|q|b",
                                  "12|r|b"}));
}

TEST_F(UpdateTest, WithoutPredicateEveryRowIsUpdated) {
  const auto root = MakeTable(kWithDv);
  auto updated = UpdateBuilder(root).Set("name", "'all'").Execute();
  ASSERT_UPDATES(updated);
  EXPECT_EQ(updated->num_updated_rows, 7);
  EXPECT_EQ(updated->num_removed_files, 2);  // every live row of each file went
  EXPECT_EQ(ReadCommitFile(root, *updated->version).parameters.at("predicate"), "[]");
  EXPECT_EQ(ReadRows(root), Rows({"1|all|a", "2|all|a", "3|all|a", "4|all|a", "10|all|b",
                                  "11|all|b", "12|all|b"}));
}

TEST_F(UpdateTest, RowsWhereThePredicateIsNullAreLeftAlone) {
  const auto root = MakeTable(kCopyOnWrite);
  auto updated = UpdateBuilder(root).Set("id", "0").Where("name <> 'w' AND part = 'a'").Execute();
  ASSERT_UPDATES(updated);
  EXPECT_EQ(updated->num_updated_rows, 2);
  EXPECT_EQ(ReadRows(root), Rows({"1|w|a", "0|x|a", "3|null|a", "0|z|a", "10|p|b", "11|q|b",
                                  "12|r|b"}));
}

TEST_F(UpdateTest, NoMatchingRowCommitsNothing) {
  const auto root = MakeTable(kWithDv);
  const auto log_before = LogListing(root);
  const auto files_before = DataFiles(root);
  auto updated = UpdateBuilder(root).Set("name", "'n'").Where("id = 3 AND id = 4").Execute();
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_FALSE(updated->version.has_value());
  EXPECT_EQ(updated->num_updated_rows, 0);
  EXPECT_EQ(LogListing(root), log_before);
  EXPECT_EQ(DataFiles(root), files_before);
}

TEST_F(UpdateTest, ChangeDataHoldsPreAndPostImages) {
  for (const auto& dv : {"false", "true"}) {
    const auto root = MakeTable({{"delta.enableChangeDataFeed", "true"},
                                 {"delta.enableDeletionVectors", dv}},
                                std::string("cdf-dv-") + dv);
    auto updated = UpdateBuilder(root).Set("name", "'n'").Where("id IN (2, 11)").Execute();
    ASSERT_UPDATES(updated);
    const auto commit = ReadCommitFile(root, *updated->version);
    EXPECT_EQ(updated->num_added_change_files, static_cast<int64_t>(commit.cdc.size()));
    EXPECT_EQ(ChangeRows(root, commit),
              Rows({"2|x|update_preimage", "2|n|update_postimage", "11|q|update_preimage",
                    "11|n|update_postimage"}))
        << "deletion vectors " << dv;
    for (const auto& c : commit.cdc) EXPECT_FALSE(c.data_change);
  }
}

TEST_F(UpdateTest, HistoryRecordsTheMetricNames) {
  const auto root = MakeTable(kCopyOnWrite);
  auto updated = UpdateBuilder(root).Set("name", "'n'").Where("id = 2").Execute();
  ASSERT_UPDATES(updated);
  const auto commit = ReadCommitFile(root, *updated->version);
  std::set<std::string> names;
  for (const auto& [name, value] : commit.metrics) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{
                       "numUpdatedRows", "numCopiedRows", "numAddedFiles", "numRemovedFiles",
                       "numDeletionVectorsAdded", "numDeletionVectorsRemoved",
                       "numDeletionVectorsUpdated", "numAddedChangeFiles", "numAddedBytes",
                       "numRemovedBytes", "executionTimeMs", "scanTimeMs", "rewriteTimeMs"}));
}

// ---------------------------------------------------------------------------------------------
// Rules of the new rows

TEST_F(UpdateTest, CheckConstraintViolationLeavesTheTableUnchanged) {
  // Rows of part b would get negative ids.
  const auto root = (dir_.path() / "checked").string();
  CreateTableOptions create;
  create.schema = arrow::schema({arrow::field("id", arrow::int64()),
                                 arrow::field("name", arrow::utf8()),
                                 arrow::field("part", arrow::utf8())});
  create.partition_columns = {"part"};
  create.properties = {{"delta.enableDeletionVectors", "true"},
                       {"delta.enableChangeDataFeed", "true"}};
  create.constraints = {{"positive", "id > 0"}};
  ASSERT_TRUE(CreateTable(root, create).ok());
  AppendIdNamePart(root, {10, 11}, {"w", "x"}, "a");
  AppendIdNamePart(root, {1, 2}, {"p", "q"}, "b");
  const auto log_before = LogListing(root);
  const auto rows_before = ReadRows(root);
  // Part a's file is updated fine (written) before part b's rows break the constraint.
  auto updated = UpdateBuilder(root).Set("id", "id - 5").Execute();
  ExpectRefusedCleanly(root, updated, "ConstraintViolation");
  EXPECT_NE(updated.status().message().find("positive"), std::string::npos)
      << updated.status().ToString();
  EXPECT_EQ(LogListing(root), log_before);
  EXPECT_EQ(ReadRows(root), rows_before);
}

TEST_F(UpdateTest, NotNullColumnRefusesNull) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false),
                               arrow::field("name", arrow::utf8())});
  const auto root = MakeDdlTable("id BIGINT NOT NULL, name STRING", kWithDv,
                                 testing::Batch(schema, {Longs({1, 2}), Strings({"a", "b"})}),
                                 "notnull");
  auto updated = UpdateBuilder(root).Set("id", "NULL").Where("id = 2").Execute();
  ExpectRefusedCleanly(root, updated, "ConstraintViolation");
  EXPECT_NE(updated.status().message().find("id"), std::string::npos);
  EXPECT_EQ(ReadRows(root), Rows({"1|a", "2|b"}));
}

TEST_F(UpdateTest, ValueThatDoesNotFitTheColumnIsRefusedNamingColumnAndRow) {
  auto schema = arrow::schema(
      {arrow::field("id", arrow::int64()), arrow::field("small", arrow::int32())});
  auto ints = testing::Ints({1, 2});
  const auto root = MakeDdlTable("id BIGINT, small INT", kCopyOnWrite,
                                 testing::Batch(schema, {Longs({1, 2}), ints}), "narrow");
  // 2 + 2147483646 is a BIGINT that does not fit INT (the second row).
  auto updated = UpdateBuilder(root).Set("small", "id + 2147483646").Execute();
  ExpectRefusedCleanly(root, updated, "SchemaMismatch");
  EXPECT_NE(updated.status().message().find("small"), std::string::npos)
      << updated.status().ToString();
  EXPECT_NE(updated.status().message().find("row 2"), std::string::npos)
      << updated.status().ToString();
  EXPECT_EQ(ReadRows(root), Rows({"1|1", "2|2"}));
  // Text is cast as Spark's UPDATE casts it (ANSI): a number in text is stored, anything else
  // fails at run time naming the row, and nothing is committed.
  auto text = UpdateBuilder(root).Set("small", "'abc'").Execute();
  ExpectRefusedCleanly(root, text, "InvalidArgument");
  EXPECT_NE(text.status().message().find("row 1"), std::string::npos) << text.status().ToString();
  auto number_text = UpdateBuilder(root).Set("small", "' 7 '").Where("id = 2").Execute();
  ASSERT_UPDATES(number_text);
  EXPECT_EQ(ReadRows(root), Rows({"1|1", "2|7"}));
}

TEST_F(UpdateTest, GeneratedColumnsAreComputedAgainAndAssignedOnesChecked) {
  auto schema =
      arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::int64())});
  const auto root = MakeDdlTable("a BIGINT, b BIGINT, g BIGINT GENERATED ALWAYS AS (a * 2)",
                                 kWithDv, testing::Batch(schema, {Longs({1, 2}), Longs({5, 6})}),
                                 "generated");
  ASSERT_EQ(ReadRows(root), Rows({"1|5|2", "2|6|4"}));
  auto updated = UpdateBuilder(root).Set("a", "a + 10").Where("a = 1").Execute();
  ASSERT_UPDATES(updated);
  EXPECT_EQ(ReadRows(root), Rows({"11|5|22", "2|6|4"}));
  auto consistent = UpdateBuilder(root).Set("a", "7").Set("g", "14").Where("a = 2").Execute();
  ASSERT_UPDATES(consistent);
  EXPECT_EQ(ReadRows(root), Rows({"11|5|22", "7|6|14"}));
  auto wrong = UpdateBuilder(root).Set("g", "3").Where("a = 7").Execute();
  ExpectRefusedCleanly(root, wrong, "ConstraintViolation");
  EXPECT_EQ(ReadRows(root), Rows({"11|5|22", "7|6|14"}));
}

TEST_F(UpdateTest, IdentityColumnGeneratedAlwaysCannotBeSetByDefaultCan) {
  auto schema = arrow::schema({arrow::field("v", arrow::utf8())});
  const auto always = MakeDdlTable("id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING", kWithDv,
                                   testing::Batch(schema, {Strings({"a", "b"})}), "always");
  auto refused = UpdateBuilder(always).Set("id", "100").Where("v = 'a'").Execute();
  ExpectRefusedCleanly(always, refused, "ConstraintViolation");
  EXPECT_NE(refused.status().message().find("id"), std::string::npos)
      << refused.status().ToString();
  auto other = UpdateBuilder(always).Set("v", "'c'").Where("v = 'a'").Execute();
  ASSERT_UPDATES(other);
  EXPECT_EQ(ReadRows(always), Rows({"1|c", "2|b"}));

  const auto by_default = MakeDdlTable("id BIGINT GENERATED BY DEFAULT AS IDENTITY, v STRING",
                                       kWithDv, testing::Batch(schema, {Strings({"a", "b"})}),
                                       "by_default");
  auto set = UpdateBuilder(by_default).Set("id", "100").Where("v = 'a'").Execute();
  ASSERT_UPDATES(set);
  EXPECT_EQ(ReadRows(by_default), Rows({"100|a", "2|b"}));
}

TEST_F(UpdateTest, ColumnMappingTableIsReadAndWrittenByPhysicalNames) {
  for (const auto& dv : {"false", "true"}) {
    const auto root = MakeTable({{"delta.columnMapping.mode", "name"},
                                 {"delta.enableDeletionVectors", dv},
                                 {"delta.enableChangeDataFeed", "true"}},
                                std::string("mapped-") + dv);
    auto updated = UpdateBuilder(root).Set("name", "'m'").Where("id IN (1, 12)").Execute();
    ASSERT_UPDATES(updated);
    EXPECT_EQ(ReadRows(root), Rows({"1|m|a", "2|x|a", "3|null|a", "4|z|a", "10|p|b", "11|q|b",
                                    "12|m|b"}));
    // The cdc files hold physical column names; their values are the changed rows.
    const auto commit = ReadCommitFile(root, *updated->version);
    EXPECT_EQ(ChangeRows(root, commit).size(), 4u);
  }
}

TEST_F(UpdateTest, UnknownColumnOrNoAssignmentIsRefused) {
  const auto root = MakeTable(kCopyOnWrite);
  auto unknown = UpdateBuilder(root).Set("nope", "1").Execute();
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(Code(unknown.status()), "InvalidExpression");
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos);
  auto twice = UpdateBuilder(root).Set("id", "1").Set("ID", "2").Execute();
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(Code(twice.status()), "InvalidArgument");
  auto none = UpdateBuilder(root).Where("id = 1").Execute();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(Code(none.status()), "InvalidArgument");
}

TEST_F(UpdateTest, ConcurrentRemovalOfTheFileReadFailsTheUpdateAndLeavesNothing) {
  const auto root = MakeTable(kWithDv);
  arrow::Result<DeleteMetrics> winner = arrow::Status::UnknownError("did not run");
  auto table =
      HookedTable(root, [&] { winner = DeleteBuilder(root).Where("part = 'a'").Execute(); });
  auto lost = UpdateBuilder(table).Set("name", "'n'").Where("id = 2").Execute();
  ASSERT_TRUE(winner.ok()) << winner.status().ToString();
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(Code(lost.status()), "ConcurrentDeleteRead") << lost.status().ToString();
  EXPECT_EQ(DataFiles(root), ReferencedFiles(root)) << "the loser's new file is still there";
  EXPECT_EQ(LatestVersion(root), *winner->version);
}

}  // namespace
}  // namespace deltacpp
