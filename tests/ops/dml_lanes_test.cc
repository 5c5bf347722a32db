// DELETE, UPDATE and MERGE changing several files at once (Parallelism(n)): the table, the
// metrics and the change data are those of the same operation done one file at a time, and a
// failure in one lane leaves nothing behind.
#include <gtest/gtest.h>

#include <map>

#include "deltacpp/api.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/merge.h"
#include "deltacpp/ops/update.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AppendIdNamePart;
using testing::ChangeRows;
using testing::CreateIdNamePart;
using testing::DataFiles;
using testing::ReadCommitFile;
using testing::ReadRows;
using testing::ReferencedFiles;
using testing::TempDir;

using Properties = std::map<std::string, std::string>;

const Properties kCopyOnWriteWithFeed = {{"delta.enableChangeDataFeed", "true"}};
const Properties kDvWithFeed = {{"delta.enableDeletionVectors", "true"},
                                {"delta.enableChangeDataFeed", "true"}};

// Eight files: ids 10p..10p+4 in part p0..p3, two appends per part (ids 10p+5.. the second).
std::string MakeTable(const TempDir& dir, const std::string& name, const Properties& properties) {
  const std::string root = (dir.path() / name).string();
  CreateIdNamePart(root, properties, /*partitioned=*/true);
  for (int round = 0; round < 2; ++round) {
    for (int p = 0; p < 4; ++p) {
      std::vector<int64_t> ids;
      std::vector<std::optional<std::string>> names;
      for (int i = 0; i < 5; ++i) {
        ids.push_back(20 * p + 5 * round + i);
        names.push_back("n" + std::to_string(20 * p + 5 * round + i));
      }
      AppendIdNamePart(root, ids, names, "p" + std::to_string(p));
    }
  }
  return root;
}

// The rows of the table as made, after deleting the ids with `id % 5 == 1` (deleted) or
// renaming them to 'u' (updated).
std::multiset<std::string> Expected(bool deleted) {
  std::multiset<std::string> out;
  for (int p = 0; p < 4; ++p) {
    for (int k = 0; k < 10; ++k) {
      const int id = 20 * p + k;
      const std::string part = "p" + std::to_string(p);
      if (id % 5 != 1) {
        out.insert(std::to_string(id) + "|n" + std::to_string(id) + "|" + part);
      } else if (!deleted) {
        out.insert(std::to_string(id) + "|u|" + part);
      }
    }
  }
  return out;
}

// Every file in the table directory is one the log references: live data files and the
// change-data files of the last commit.
void ExpectNoStrayFiles(const std::string& root, int64_t version) {
  auto referenced = ReferencedFiles(root);
  for (const auto& cdc : ReadCommitFile(root, version).cdc) referenced.insert(cdc.path);
  EXPECT_EQ(DataFiles(root), referenced);
}

bool HasFeed(const Properties& properties) {
  return properties.count("delta.enableChangeDataFeed") > 0;
}

class DmlLanesTest : public ::testing::TestWithParam<Properties> {
 protected:
  TempDir dir_;
};

TEST_P(DmlLanesTest, DeleteInLanesEqualsDeleteOneFileAtATime) {
  const auto one = MakeTable(dir_, "one", GetParam());
  const auto lanes = MakeTable(dir_, "lanes", GetParam());
  auto serial = DeleteBuilder(one).Where("id % 5 = 1").Parallelism(1).Execute();
  auto parallel = DeleteBuilder(lanes).Where("id % 5 = 1").Parallelism(3).Execute();
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
  EXPECT_EQ(ReadRows(one), Expected(/*deleted=*/true));
  EXPECT_EQ(ReadRows(lanes), Expected(/*deleted=*/true));
  EXPECT_EQ(parallel->num_deleted_rows, 8);
  EXPECT_EQ(parallel->num_deleted_rows, serial->num_deleted_rows);
  EXPECT_EQ(parallel->num_removed_files, serial->num_removed_files);
  EXPECT_EQ(parallel->num_copied_rows, serial->num_copied_rows);
  EXPECT_EQ(parallel->num_deletion_vectors_added, serial->num_deletion_vectors_added);
  EXPECT_EQ(ChangeRows(lanes, ReadCommitFile(lanes, 9)), ChangeRows(one, ReadCommitFile(one, 9)));
  ExpectNoStrayFiles(lanes, 9);
}

TEST_P(DmlLanesTest, UpdateInLanesEqualsUpdateOneFileAtATime) {
  const auto one = MakeTable(dir_, "one", GetParam());
  const auto lanes = MakeTable(dir_, "lanes", GetParam());
  auto serial = UpdateBuilder(one).Set("name", "'u'").Where("id % 5 = 1").Parallelism(1).Execute();
  auto parallel =
      UpdateBuilder(lanes).Set("name", "'u'").Where("id % 5 = 1").Parallelism(2).Execute();
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
  EXPECT_EQ(ReadRows(one), Expected(/*deleted=*/false));
  EXPECT_EQ(ReadRows(lanes), Expected(/*deleted=*/false));
  EXPECT_EQ(parallel->num_updated_rows, 8);
  EXPECT_EQ(parallel->num_removed_files, serial->num_removed_files);
  EXPECT_EQ(parallel->num_copied_rows, serial->num_copied_rows);
  EXPECT_EQ(parallel->num_deletion_vectors_added, serial->num_deletion_vectors_added);
  // Every update's pre- and post-image, in either lane.
  const auto changes = ChangeRows(lanes, ReadCommitFile(lanes, 9));
  EXPECT_EQ(changes, ChangeRows(one, ReadCommitFile(one, 9)));
  EXPECT_EQ(changes.size(), HasFeed(GetParam()) ? 16u : 0u);
  ExpectNoStrayFiles(lanes, 9);
}

TEST_P(DmlLanesTest, AFailingLaneLeavesNothing) {
  const auto root = MakeTable(dir_, "t", GetParam());
  ASSERT_EQ(testing::SpoilDataFiles(root, "part=p2/"), 2);
  const auto log_before = testing::LogListing(root);
  auto deleted = DeleteBuilder(root).Where("id % 5 = 1").Parallelism(3).Execute();
  ASSERT_FALSE(deleted.ok());
  EXPECT_NE(deleted.status().message().find("part=p2/"), std::string::npos)
      << deleted.status().ToString();
  EXPECT_EQ(testing::LogListing(root), log_before);
  EXPECT_EQ(DataFiles(root), ReferencedFiles(root));
  EXPECT_TRUE(testing::DeletionVectorFiles(root).empty());
  EXPECT_TRUE(testing::ChangeDataFiles(root).empty());
}

// A source for MergeAll: ids with id % 5 = 1 (renamed 'u'), id % 5 = 3 (del = true) and the new
// ids 100..103 in parts p0..p3.
std::shared_ptr<arrow::RecordBatchReader> MergeSource() {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  arrow::StringBuilder parts;
  arrow::BooleanBuilder dels;
  auto add = [&](int64_t id, const std::string& part, bool del) {
    EXPECT_TRUE(ids.Append(id).ok());
    EXPECT_TRUE(names.Append("u").ok());
    EXPECT_TRUE(parts.Append(part).ok());
    EXPECT_TRUE(dels.Append(del).ok());
  };
  // Source rows in an order of their own, not the target's.
  for (int p = 3; p >= 0; --p) {
    for (int k = 9; k >= 0; --k) {
      if (k % 5 == 1 || k % 5 == 3) add(20 * p + k, "p" + std::to_string(p), k % 5 == 3);
    }
    add(100 + p, "p" + std::to_string(p), false);
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8()),
                               arrow::field("part", arrow::utf8()),
                               arrow::field("del", arrow::boolean())});
  const int64_t rows = ids.length();
  auto batch = arrow::RecordBatch::Make(
      schema, rows,
      {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie(), parts.Finish().ValueOrDie(),
       dels.Finish().ValueOrDie()});
  return arrow::RecordBatchReader::Make({batch}, schema).ValueOrDie();
}

// Every kind of clause: matched update and delete, not matched insert, not matched by source
// delete (id % 5 = 4).
arrow::Result<MergeMetrics> MergeAll(const std::string& root, int parallelism) {
  return MergeBuilder(root, MergeSource())
      .TargetAlias("t")
      .SourceAlias("s")
      .On("t.id = s.id")
      .WhenMatchedDelete("s.del")
      .WhenMatchedUpdate(std::nullopt, {{"name", "s.name"}})
      .WhenNotMatchedInsert(std::nullopt, {{"id", "s.id"}, {"name", "'new'"}, {"part", "s.part"}})
      .WhenNotMatchedBySourceDelete("t.id % 5 = 4")
      .Parallelism(parallelism)
      .Execute();
}

std::multiset<std::string> ExpectedAfterMerge() {
  std::multiset<std::string> out;
  for (int p = 0; p < 4; ++p) {
    const std::string part = "p" + std::to_string(p);
    for (int k = 0; k < 10; ++k) {
      const int id = 20 * p + k;
      if (k % 5 == 3 || k % 5 == 4) continue;
      out.insert(std::to_string(id) + (k % 5 == 1 ? "|u|" : "|n" + std::to_string(id) + "|") +
                 part);
    }
    out.insert(std::to_string(100 + p) + "|new|" + part);
  }
  return out;
}

TEST_P(DmlLanesTest, MergeInLanesEqualsMergeOneFileAtATime) {
  const auto one = MakeTable(dir_, "one", GetParam());
  const auto lanes = MakeTable(dir_, "lanes", GetParam());
  auto serial = MergeAll(one, 1);
  auto parallel = MergeAll(lanes, 3);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
  EXPECT_EQ(ReadRows(one), ExpectedAfterMerge());
  EXPECT_EQ(ReadRows(lanes), ExpectedAfterMerge());
  EXPECT_EQ(parallel->num_target_rows_matched_updated, 8);
  EXPECT_EQ(parallel->num_target_rows_matched_deleted, 8);
  EXPECT_EQ(parallel->num_target_rows_not_matched_by_source_deleted, 8);
  EXPECT_EQ(parallel->num_target_rows_inserted, 4);
  EXPECT_EQ(parallel->num_source_rows, serial->num_source_rows);
  EXPECT_EQ(parallel->num_target_rows_updated, serial->num_target_rows_updated);
  EXPECT_EQ(parallel->num_target_rows_deleted, serial->num_target_rows_deleted);
  EXPECT_EQ(parallel->num_target_rows_copied, serial->num_target_rows_copied);
  EXPECT_EQ(parallel->num_target_files_removed, serial->num_target_files_removed);
  EXPECT_EQ(parallel->num_target_deletion_vectors_added,
            serial->num_target_deletion_vectors_added);
  const auto changes = ChangeRows(lanes, ReadCommitFile(lanes, 9));
  EXPECT_EQ(changes, ChangeRows(one, ReadCommitFile(one, 9)));
  // Pre- and post-images of 8 updates, 16 deletes, 4 inserts.
  EXPECT_EQ(changes.size(), HasFeed(GetParam()) ? 36u : 0u);
  ExpectNoStrayFiles(lanes, 9);
}

TEST_P(DmlLanesTest, AFailingMergeLaneLeavesNothing) {
  const auto root = MakeTable(dir_, "t", GetParam());
  ASSERT_EQ(testing::SpoilDataFiles(root, "part=p1/"), 2);
  const auto log_before = testing::LogListing(root);
  auto merged = MergeAll(root, 3);
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("part=p1/"), std::string::npos)
      << merged.status().ToString();
  EXPECT_EQ(testing::LogListing(root), log_before);
  EXPECT_EQ(DataFiles(root), ReferencedFiles(root));
  EXPECT_TRUE(testing::DeletionVectorFiles(root).empty());
  EXPECT_TRUE(testing::ChangeDataFiles(root).empty());
}

INSTANTIATE_TEST_SUITE_P(Modes, DmlLanesTest,
                         ::testing::Values(Properties{}, kCopyOnWriteWithFeed, kDvWithFeed),
                         [](const auto& info) {
                           return info.index == 0   ? std::string("CopyOnWrite")
                                  : info.index == 1 ? std::string("CopyOnWriteWithFeed")
                                                    : std::string("DeletionVectorsWithFeed");
                         });

}  // namespace
}  // namespace deltacpp
