// RESTORE: the latest version gets an earlier version's rows (deletion vectors included) and
// metadata in one commit with delta-spark's metrics; files VACUUM removed make it fail with
// nothing committed; time travel by timestamp; bad requests.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>

#include "deltacpp/api.h"
#include "deltacpp/ops/alter_table.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/restore.h"
#include "deltacpp/ops/update.h"
#include "deltacpp/ops/vacuum.h"
#include "deltacpp/ops/write.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::TempDir;

int64_t Metric(const RestoreMetrics& m, const std::string& name) {
  for (const auto& [n, v] : m.Named()) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

std::set<std::string> Files(const std::string& root, int64_t version) {
  return testing::LiveFiles(root, version);
}

int64_t TotalSize(const std::string& root, const std::set<std::string>& files) {
  int64_t n = 0;
  for (const auto& f : files) n += static_cast<int64_t>(fs::file_size(fs::path(root) / f));
  return n;
}

TEST(Restore, BringsBackAnEarlierVersionsRowsInOneCommitWithDeltaSparksMetrics) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1, 2, 3}, {"a", "b", "c"}, "x");   // v1
  testing::AppendIdNamePart(root, {4, 5}, {"d", "e"}, "y");           // v2
  const auto rows_v2 = testing::ReadRows(root, 2);
  ASSERT_TRUE(DeleteBuilder(root).Where("id = 2").Execute().ok());   // v3 rewrites part=x
  ASSERT_TRUE(UpdateBuilder(root).Set("name", "'z'").Where("id = 5").Execute().ok());  // v4
  testing::AppendIdNamePart(root, {6}, {"f"}, "z");                   // v5
  ASSERT_NE(testing::ReadRows(root), rows_v2);
  const auto files_v2 = Files(root, 2);
  const auto files_v5 = Files(root, 5);

  auto restored = RestoreBuilder(root).ToVersion(2).Execute();
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->version, 6);
  EXPECT_EQ(restored->restored_version, 2);
  EXPECT_EQ(testing::ReadRows(root), rows_v2);
  EXPECT_EQ(Files(root, 6), files_v2);
  // Every version stays readable as it was.
  EXPECT_EQ(testing::ReadRows(root, 5).size(), 5u);

  const auto removed = testing::Minus(files_v5, files_v2);
  const auto added = testing::Minus(files_v2, files_v5);
  EXPECT_EQ(Metric(*restored, "numRemovedFiles"), static_cast<int64_t>(removed.size()));
  EXPECT_EQ(Metric(*restored, "numRestoredFiles"), static_cast<int64_t>(added.size()));
  EXPECT_EQ(Metric(*restored, "numOfFilesAfterRestore"), static_cast<int64_t>(files_v2.size()));
  EXPECT_EQ(Metric(*restored, "tableSizeAfterRestore"), TotalSize(root, files_v2));
  EXPECT_EQ(Metric(*restored, "removedFilesSize"), TotalSize(root, removed));
  EXPECT_EQ(Metric(*restored, "restoredFilesSize"), TotalSize(root, added));

  const auto commit = testing::ReadCommitFile(root, 6);
  EXPECT_EQ(commit.operation, "RESTORE");
  EXPECT_EQ(commit.parameters.at("version"), "2");
  EXPECT_EQ(commit.metrics.at("numRestoredFiles"), std::to_string(added.size()));
  EXPECT_EQ(commit.adds.size(), added.size());
  EXPECT_EQ(commit.removes.size(), removed.size());
}

TEST(Restore, DeletionVectorsComeBackWithTheirFiles) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {{"delta.enableDeletionVectors", "true"}}, false);
  testing::AppendIdNamePart(root, {1, 2, 3, 4, 5, 6}, {"a", "b", "c", "d", "e", "f"}, "x");
  ASSERT_TRUE(DeleteBuilder(root).Where("id = 1").Execute().ok());  // v2: a DV on the file
  const auto rows_v2 = testing::ReadRows(root);
  ASSERT_EQ(rows_v2.size(), 5u);
  ASSERT_TRUE(DeleteBuilder(root).Where("id IN (2, 3)").Execute().ok());  // v3: a larger DV

  auto restored = RestoreBuilder(root).ToVersion(2).Execute();
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(testing::ReadRows(root), rows_v2);
  // The same file, its deletion vector swapped back: one remove and one add of one path.
  EXPECT_EQ(restored->num_removed_files, 1);
  EXPECT_EQ(restored->num_restored_files, 1);
  const auto commit = testing::ReadCommitFile(root, restored->version);
  ASSERT_EQ(commit.adds.size(), 1u);
  ASSERT_EQ(commit.removes.size(), 1u);
  EXPECT_EQ(commit.adds[0].path, commit.removes[0].path);
  EXPECT_EQ(commit.adds[0].dv_cardinality, 1);
  EXPECT_EQ(commit.removes[0].dv_cardinality, 3);
}

TEST(Restore, ToAVersionWhoseFilesWereVacuumedFailsAndChangesNothing) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, true);
  testing::AppendIdNamePart(root, {1, 2}, {"a", "b"}, "x");  // v1
  ASSERT_TRUE(DeleteBuilder(root).Where("part = 'x'").Execute().ok());  // v2
  testing::AppendIdNamePart(root, {3}, {"c"}, "y");  // v3
  auto vacuumed = VacuumBuilder(root).RetentionHours(0).RetentionDurationCheck(false).Execute();
  ASSERT_TRUE(vacuumed.ok()) << vacuumed.status().ToString();
  ASSERT_EQ(vacuumed->num_files, 1);
  const auto version = testing::LatestVersion(root);
  const auto rows = testing::ReadRows(root);

  auto restored = RestoreBuilder(root).ToVersion(1).Execute();
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(testing::Code(restored.status()), "MissingFile") << restored.status().ToString();
  EXPECT_NE(restored.status().message().find(vacuumed->files[0].path), std::string::npos)
      << restored.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root), version);
  EXPECT_EQ(testing::ReadRows(root), rows);
}

TEST(Restore, TheEarlierSchemaAndPropertiesComeBackToo) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, false);
  testing::AppendIdNamePart(root, {1}, {"a"}, "x");  // v1
  auto altered = SetTableProperties(root, {{"owner", "team"}});
  ASSERT_TRUE(altered.ok()) << altered.status().ToString();
  auto added = AddColumns(root, {NewColumn{arrow::field("extra", arrow::int32()), ""}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  ASSERT_EQ(testing::Latest(root)->schema()->num_fields(), 4);

  auto restored = RestoreBuilder(root).ToVersion(1).Execute();
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  auto latest = testing::Latest(root);
  EXPECT_EQ(latest->schema()->num_fields(), 3);
  EXPECT_EQ(latest->properties().count("owner"), 0u);
  EXPECT_EQ(restored->num_removed_files, 0);
  EXPECT_EQ(restored->num_restored_files, 0);
  EXPECT_EQ(testing::ReadRows(root), testing::ReadRows(root, 1));
}

TEST(Restore, ByTimestampAndBadRequests) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, false);
  testing::AppendIdNamePart(root, {1}, {"a"}, "x");  // v1
  testing::AppendIdNamePart(root, {2}, {"b"}, "x");  // v2
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto v1 = (*table)->SnapshotAt(1);
  ASSERT_TRUE(v1.ok());
  const int64_t t1 = (*v1)->timestamp_ms();

  auto restored = RestoreBuilder(root).ToTimestamp(t1, "the time of version 1").Execute();
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->restored_version, 1);
  EXPECT_EQ(testing::ReadRows(root), testing::ReadRows(root, 1));
  EXPECT_EQ(testing::ReadCommitFile(root, restored->version).parameters.at("timestamp"),
            "the time of version 1");

  auto future = RestoreBuilder(root).ToVersion(99).Execute();
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(testing::Code(future.status()), "VersionNotFound");
  auto neither = RestoreBuilder(root).Execute();
  ASSERT_FALSE(neither.ok());
  EXPECT_EQ(testing::Code(neither.status()), "InvalidArgument");
  auto before = RestoreBuilder(root).ToTimestamp(t1 - 10 * 24 * 3600 * 1000LL, "x").Execute();
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(testing::Code(before.status()), "TimestampOutOfRange");
}

}  // namespace
}  // namespace deltacpp
