// FSCK: missing data files and deletion vector files are listed by a dry run and removed by a
// repair, after which the latest version reads; a complete table is left alone; a concurrent
// removal of the same file conflicts.
#include <gtest/gtest.h>

#include <filesystem>

#include "deltacpp/api.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/fsck.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::TempDir;

TEST(Fsck, DryRunListsMissingFilesAndRepairMakesTheLatestVersionReadAgain) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2}, {"a", "b"}, "x");  // v1
  testing::AppendIdNamePart(root, {3}, {"c"}, "y");          // v2
  testing::AppendIdNamePart(root, {4}, {"d"}, "z");          // v3
  std::string lost;
  for (const auto& f : testing::LiveFiles(root, 3)) {
    if (f.rfind("part=y/", 0) == 0) lost = f;
  }
  ASSERT_FALSE(lost.empty());
  fs::remove(fs::path(root) / lost);
  auto unreadable = testing::ReadTable(root, std::nullopt);
  ASSERT_FALSE(unreadable.ok());
  EXPECT_TRUE(IsDeltaError(unreadable.status(), DeltaErrorCode::kMissingFile));

  auto dry = FsckBuilder(root).DryRun().Execute();
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(dry->num_files_checked, 3);
  ASSERT_EQ(dry->missing.size(), 1u);
  EXPECT_EQ(dry->missing[0].path, lost);
  EXPECT_TRUE(dry->missing[0].data_file_missing);
  EXPECT_FALSE(dry->version.has_value());
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(3)) << "a dry run commits nothing";

  auto repaired = FsckBuilder(root).Execute();
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  ASSERT_EQ(repaired->version, std::optional<int64_t>(4));
  EXPECT_EQ(testing::ReadRows(root),
            (std::multiset<std::string>{"1|a|x", "2|b|x", "4|d|z"}));
  const auto commit = testing::ReadCommitFile(root, 4);
  EXPECT_EQ(commit.operation, "FSCK");
  ASSERT_EQ(commit.removes.size(), 1u);
  EXPECT_EQ(commit.removes[0].path, lost);
  EXPECT_TRUE(commit.removes[0].data_change) << "the rows are gone: a data change";
  EXPECT_TRUE(commit.adds.empty());
  EXPECT_EQ(commit.metrics.at("numRemovedFiles"), "1");
  EXPECT_EQ(commit.metrics.at("numMissingDataFiles"), "1");

  auto again = FsckBuilder(root).Execute();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->missing.empty());
  EXPECT_FALSE(again->version.has_value()) << "nothing missing: nothing committed";
}

TEST(Fsck, MissingDeletionVectorFileIsFoundAndItsDataFileRemoved) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {{"delta.enableDeletionVectors", "true"}}, false);
  std::vector<int64_t> ids;
  std::vector<std::optional<std::string>> names;
  for (int i = 0; i < 5000; ++i) {
    ids.push_back(i);
    names.push_back("n");
  }
  testing::AppendIdNamePart(root, ids, names, "x");                      // v1
  ASSERT_TRUE(DeleteBuilder(root).Where("id % 2 = 0").Execute().ok());  // v2: DV file
  const auto dvs = testing::DeletionVectorFiles(root);
  ASSERT_EQ(dvs.size(), 1u) << "a deletion vector this large is stored in a file";
  fs::remove(fs::path(root) / *dvs.begin());

  auto dry = FsckBuilder(root).DryRun().Execute();
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  ASSERT_EQ(dry->missing.size(), 1u);
  EXPECT_FALSE(dry->missing[0].data_file_missing);
  EXPECT_TRUE(dry->missing[0].deletion_vector_missing);
  EXPECT_NE(dry->missing[0].detail.find(".bin"), std::string::npos) << dry->missing[0].detail;

  auto repaired = FsckBuilder(root).Execute();
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_TRUE(testing::ReadRows(root).empty());
  EXPECT_EQ(testing::ReadCommitFile(root, *repaired->version).metrics.at(
                "numMissingDeletionVectors"),
            "1");
}

TEST(Fsck, ConcurrentRemovalOfTheSameFileConflicts) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1}, {"a"}, "x");
  testing::AppendIdNamePart(root, {2}, {"b"}, "y");
  for (const auto& f : testing::LiveFiles(root, 2)) {
    if (f.rfind("part=y/", 0) == 0) fs::remove(fs::path(root) / f);
  }
  auto table = testing::HookedTable(root, [&] {
    ASSERT_TRUE(DeleteBuilder(root).Where("part = 'y'").Execute().ok());  // v3, whole file
  });
  ASSERT_TRUE(table);
  auto repaired = FsckBuilder(table).Execute();
  ASSERT_FALSE(repaired.ok());
  EXPECT_TRUE(IsDeltaError(repaired.status(), DeltaErrorCode::kConcurrentDeleteDelete) ||
              IsDeltaError(repaired.status(), DeltaErrorCode::kConcurrentDeleteRead))
      << repaired.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(3));
}

}  // namespace
}  // namespace deltacpp
