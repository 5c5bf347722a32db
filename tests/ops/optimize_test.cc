// OPTIMIZE: bin-packing per partition and its size rules, WHERE over partitions, deletion
// vectors rewritten away (by ratio and by purge), Z-ORDER's effect on file skipping, clustered
// tables, conflicts with concurrent writers, and a failed run leaving nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "deltacpp/api.h"
#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/optimize.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/schema.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::TempDir;

int64_t Metric(const OptimizeMetrics& m, const std::string& name) {
  for (const auto& [n, v] : m.Named()) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

std::string Decoded(const std::string& log_path) {
  auto decoded = internal::PercentDecodeStrict(log_path);
  EXPECT_TRUE(decoded.ok()) << log_path;
  return decoded.ok() ? *decoded : log_path;
}

int64_t SizeOnDisk(const std::string& root, const std::string& log_path) {
  return static_cast<int64_t>(fs::file_size(fs::path(root) / log_path));
}

// Rows of every version from 0 to the latest.
std::vector<std::multiset<std::string>> EveryVersion(const std::string& root) {
  std::vector<std::multiset<std::string>> out;
  const auto latest = testing::LatestVersion(root);
  for (int64_t v = 0; latest && v <= *latest; ++v) out.push_back(testing::ReadRows(root, v));
  return out;
}

TEST(Optimize, BinPacksTheSmallFilesOfEachPartitionWithoutChangingAnyRow) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  for (int i = 0; i < 4; ++i) {
    testing::AppendIdNamePart(root, {i}, {"a"}, "x");
    testing::AppendIdNamePart(root, {10 + i, 20 + i}, {"b", "c"}, "y");
  }
  const auto before = EveryVersion(root);
  ASSERT_EQ(testing::LiveFiles(root, 8).size(), 8u);

  auto result = OptimizeBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->version, std::optional<int64_t>(9));
  auto after = EveryVersion(root);
  ASSERT_EQ(after.size(), 10u);
  EXPECT_EQ(after.back(), before.back());
  after.pop_back();
  EXPECT_EQ(after, before) << "every earlier version still reads as it did";
  const auto live = testing::LiveFiles(root, 9);
  EXPECT_EQ(live.size(), 2u) << "one file per partition";

  const auto commit = testing::ReadCommitFile(root, 9);
  EXPECT_EQ(commit.operation, "OPTIMIZE");
  EXPECT_EQ(commit.isolation_level, "SnapshotIsolation");
  EXPECT_EQ(commit.parameters.at("predicate"), "[]");
  EXPECT_EQ(commit.parameters.at("zOrderBy"), "[]");
  ASSERT_EQ(commit.removes.size(), 8u);
  ASSERT_EQ(commit.adds.size(), 2u);
  int64_t removed_bytes = 0;
  for (const auto& r : commit.removes) {
    EXPECT_FALSE(r.data_change);
    removed_bytes += SizeOnDisk(root, Decoded(r.path));
  }
  std::vector<int64_t> added;
  for (const auto& a : commit.adds) {
    EXPECT_FALSE(a.data_change);
    ASSERT_TRUE(a.stats.has_value());
    EXPECT_NE(a.stats->find("\"numRecords\""), std::string::npos);
    added.push_back(SizeOnDisk(root, Decoded(a.path)));
  }
  std::sort(added.begin(), added.end());
  EXPECT_EQ(commit.metrics.at("numRemovedFiles"), "8");
  EXPECT_EQ(commit.metrics.at("numAddedFiles"), "2");
  EXPECT_EQ(commit.metrics.at("numRemovedBytes"), std::to_string(removed_bytes));
  EXPECT_EQ(commit.metrics.at("numAddedBytes"), std::to_string(added[0] + added[1]));
  EXPECT_EQ(commit.metrics.at("minFileSize"), std::to_string(added[0]));
  EXPECT_EQ(commit.metrics.at("maxFileSize"), std::to_string(added[1]));
  for (const auto& [name, value] : commit.metrics) {
    EXPECT_EQ(value, std::to_string(Metric(*result, name))) << "the commit records " << name;
  }
  EXPECT_EQ(result->partitions_optimized, 2);
  EXPECT_EQ(result->num_rows, 12);
  EXPECT_EQ(result->total_considered_files, 8);
  EXPECT_EQ(result->total_files_skipped, 0);

  // Nothing left to compact: nothing is committed.
  auto again = OptimizeBuilder(root).Execute();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->version.has_value());
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(9));
}

TEST(Optimize, WhereSelectsPartitionsAndRefusesDataColumns) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  for (int i = 0; i < 3; ++i) {
    testing::AppendIdNamePart(root, {i}, {"a"}, "x");
    testing::AppendIdNamePart(root, {10 + i}, {"b"}, "y");
  }
  auto data_column = OptimizeBuilder(root).Where("id > 1").Execute();
  ASSERT_FALSE(data_column.ok());
  EXPECT_TRUE(IsDeltaError(data_column.status(), DeltaErrorCode::kInvalidExpression))
      << data_column.status().ToString();
  EXPECT_NE(data_column.status().message().find("id"), std::string::npos);

  auto result = OptimizeBuilder(root).Where("part = 'x'").Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const auto commit = testing::ReadCommitFile(root, *result->version);
  ASSERT_EQ(commit.removes.size(), 3u);
  for (const auto& r : commit.removes) EXPECT_EQ(r.partition_values.at("part"), "x");
  EXPECT_EQ(commit.parameters.at("predicate"), "[\"part = 'x'\"]");
  EXPECT_EQ(result->total_considered_files, 3) << "only partition x is in scope";
  EXPECT_EQ(testing::LiveFiles(root, *result->version).size(), 4u);
}

TEST(Optimize, BinsHoldAtMostTheTargetSizeAndLargeFilesStay) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/false);
  for (int i = 0; i < 6; ++i) testing::AppendIdNamePart(root, {i}, {"a"}, "x");
  std::vector<int64_t> sizes;
  for (const auto& f : testing::LiveFiles(root, 6)) sizes.push_back(SizeOnDisk(root, f));
  const int64_t largest = *std::max_element(sizes.begin(), sizes.end());

  // Files at or above the minimum size are left alone.
  auto none = OptimizeBuilder(root).MinFileSize(1).Execute();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->version.has_value());
  EXPECT_EQ(none->total_files_skipped, 6);

  // Room for two of the files per bin (not three): three bins of two.
  auto result = OptimizeBuilder(root).TargetFileSize(largest * 2 + largest / 2).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_batches, 3);
  EXPECT_EQ(result->num_files_removed, 6);
  EXPECT_EQ(result->num_files_added, 3);
  EXPECT_EQ(testing::ReadRows(root), testing::ReadRows(root, 6));

  auto bad = OptimizeBuilder(root).TargetFileSize(0).Execute();
  EXPECT_TRUE(IsDeltaError(bad.status(), DeltaErrorCode::kInvalidArgument)) << bad.status();
}

TEST(Optimize, RewritesFilesWithManyDeletedRowsAndPurgeRewritesEveryDeletionVector) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {{"delta.enableDeletionVectors", "true"}}, false);
  std::vector<int64_t> ids;
  std::vector<std::optional<std::string>> names;
  for (int i = 0; i < 100; ++i) {
    ids.push_back(i);
    names.push_back("n" + std::to_string(i));
  }
  testing::AppendIdNamePart(root, ids, names, "x");  // v1
  ASSERT_TRUE(DeleteBuilder(root).Where("id = 7").Execute().ok());  // v2: 1% deleted
  {
    const auto commit = testing::ReadCommitFile(root, 2);
    ASSERT_EQ(commit.adds.size(), 1u);
    ASSERT_TRUE(commit.adds[0].dv_unique_id.has_value()) << "the delete wrote a deletion vector";
  }
  const auto rows = testing::ReadRows(root);

  // 1 of 100 rows deleted is below the 5% ratio: a large file with it stays.
  auto below = OptimizeBuilder(root).MinFileSize(0).Execute();
  ASSERT_TRUE(below.ok()) << below.status().ToString();
  EXPECT_FALSE(below->version.has_value());
  // A lower ratio makes the same file due.
  auto due = OptimizeBuilder(root).MinFileSize(0).MaxDeletedRowsRatio(0.005).Execute();
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  ASSERT_EQ(due->version, std::optional<int64_t>(3));
  EXPECT_EQ(due->num_deletion_vectors_removed, 1);
  EXPECT_EQ(due->num_deletion_vector_rows_removed, 1);
  EXPECT_EQ(due->num_rows, 99);
  EXPECT_EQ(testing::ReadRows(root), rows);
  auto commit = testing::ReadCommitFile(root, 3);
  ASSERT_EQ(commit.adds.size(), 1u);
  EXPECT_FALSE(commit.adds[0].dv_unique_id.has_value()) << "the new file has no deletion vector";
  ASSERT_EQ(commit.removes.size(), 1u);
  EXPECT_TRUE(commit.removes[0].dv_unique_id.has_value()) << "the remove names the old DV";
  EXPECT_EQ(commit.metrics.at("numDeletionVectorsRemoved"), "1");

  // Purge: every file with a deletion vector, whatever its share of deleted rows.
  ASSERT_TRUE(DeleteBuilder(root).Where("id = 8").Execute().ok());  // v4
  const auto rows4 = testing::ReadRows(root);
  auto purged = OptimizeBuilder(root).Purge().Execute();
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  ASSERT_EQ(purged->version, std::optional<int64_t>(5));
  EXPECT_EQ(testing::ReadRows(root), rows4);
  commit = testing::ReadCommitFile(root, 5);
  EXPECT_EQ(commit.operation, "REORG");
  EXPECT_EQ(commit.parameters.at("applyPurge"), "true");
  ASSERT_EQ(commit.adds.size(), 1u);
  EXPECT_FALSE(commit.adds[0].dv_unique_id.has_value());
  auto snapshot = testing::Latest(root);
  ASSERT_TRUE(snapshot);
  auto scan = snapshot->NewScan().Build();
  ASSERT_TRUE(scan.ok());
  for (const auto& f : (*scan)->files()) EXPECT_FALSE(f.deletion_vector.has_value()) << f.path;

  // Nothing left to purge.
  auto again = OptimizeBuilder(root).Purge().Execute();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->version.has_value());
}

// A table (x BIGINT, y BIGINT) of `files` appends of `rows` rows, x and y uniform in 0..999.
void CreateXY(const std::string& root, int files, int rows, uint32_t seed) {
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("y", arrow::int64())});
  CreateTableOptions create;
  create.schema = schema;
  ASSERT_TRUE(CreateTable(root, create).ok());
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> value(0, 999);
  for (int f = 0; f < files; ++f) {
    std::vector<std::optional<int64_t>> xs, ys;
    for (int r = 0; r < rows; ++r) {
      xs.push_back(value(gen));
      ys.push_back(value(gen));
    }
    auto written = WriteTable(root, testing::Rows(schema, {testing::Longs(xs), testing::Longs(ys)}),
                              WriteOptions{});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
}

size_t FilesRead(const std::string& root, const std::string& filter) {
  auto snapshot = testing::Latest(root);
  if (!snapshot) return 0;
  auto scan = snapshot->NewScan().Filter(filter).Build();
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  return scan.ok() ? (*scan)->files().size() : 0;
}

TEST(Optimize, ZOrderLetsRangeFiltersOnEveryColumnSkipMostFiles) {
  TempDir dir;
  const std::string root = dir.str();
  CreateXY(root, 16, 2000, 42);
  const auto rows = testing::ReadRows(root);
  // Random rows: every file spans nearly the whole range of both columns.
  EXPECT_EQ(FilesRead(root, "x < 100"), 16u);
  EXPECT_EQ(FilesRead(root, "y < 100"), 16u);
  const int64_t total = testing::Latest(root)->total_size_bytes();

  auto result = OptimizeBuilder(root).ZOrderBy({"X", "y"}).TargetFileSize(total / 40).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->version.has_value());
  EXPECT_EQ(testing::ReadRows(root), rows);
  EXPECT_EQ(result->clustering_columns, (std::vector<std::string>{"x", "y"}));
  const size_t files = testing::LiveFiles(root, *result->version).size();
  ASSERT_GE(files, 16u);
  const size_t x_read = FilesRead(root, "x < 100");
  const size_t y_read = FilesRead(root, "y < 100");
  // A tenth of each range: Z-order keeps it to a fraction of the files for both columns.
  EXPECT_LE(x_read * 2, files) << x_read << " of " << files;
  EXPECT_LE(y_read * 2, files) << y_read << " of " << files;
  EXPECT_LE(FilesRead(root, "x < 100 AND y < 100") * 4, files);
  const auto commit = testing::ReadCommitFile(root, *result->version);
  EXPECT_EQ(commit.parameters.at("zOrderBy"), "[\"x\",\"y\"]");
  // delta-spark's zOrderStats: the 16 input files, in no Z-cube, all merged into one cube of
  // the one (unpartitioned) partition.
  ASSERT_TRUE(result->zorder_stats.has_value());
  const ZOrderStats& z = *result->zorder_stats;
  EXPECT_EQ(z.strategy_name, "all");
  EXPECT_EQ(z.input_cube_files.num, 0);
  EXPECT_EQ(z.input_other_files.num, 16);
  EXPECT_EQ(z.input_other_files.size, total);
  EXPECT_EQ(z.merged_files.num, 16);
  EXPECT_EQ(z.merged_files.size, total);
  EXPECT_EQ(z.input_num_cubes, 0);
  EXPECT_EQ(z.num_output_cubes, 1);
  auto packed = OptimizeBuilder(root).TargetFileSize(total * 2).Execute();
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  EXPECT_FALSE(packed->zorder_stats.has_value()) << "bin-packing has no zOrderStats";

  auto unknown = OptimizeBuilder(root).ZOrderBy({"z"}).Execute();
  EXPECT_TRUE(IsDeltaError(unknown.status(), DeltaErrorCode::kInvalidArgument)) << unknown.status();
  auto twice = OptimizeBuilder(root).ZOrderBy({"x", "X"}).Execute();
  EXPECT_TRUE(IsDeltaError(twice.status(), DeltaErrorCode::kInvalidArgument)) << twice.status();
}

TEST(Optimize, ZOrderByAPartitionColumnIsRefused) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  testing::AppendIdNamePart(root, {1}, {"a"}, "x");
  auto result = OptimizeBuilder(root).ZOrderBy({"part"}).Execute();
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_NE(result.status().message().find("partition"), std::string::npos);
}

// Version 0 of a table (x BIGINT, y BIGINT) clustered by y, written as delta-spark writes it.
void CreateClusteredXY(const std::string& root) {
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("y", arrow::int64())});
  auto schema_json = *SchemaToDeltaJson(*schema);
  std::string escaped;
  for (char c : schema_json) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
  fs::create_directories(fs::path(root) / "_delta_log");
  std::ofstream out(fs::path(root) / "_delta_log" / "00000000000000000000.json");
  out << R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["domainMetadata","clustering"]}})"
      << "\n"
      << R"({"metaData":{"id":"c-1","format":{"provider":"parquet","options":{}},"schemaString":")"
      << escaped << R"(","partitionColumns":[],"configuration":{},"createdTime":1}})" << "\n"
      << R"({"domainMetadata":{"domain":"delta.clustering","configuration":"{\"clusteringColumns\":[[\"y\"]]}","removed":false}})"
      << "\n";
}

TEST(Optimize, ClusteredTableIsClusteredByItsColumnsAndOnlyNewFilesAreReclustered) {
  TempDir dir;
  const std::string root = dir.str();
  CreateClusteredXY(root);
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("y", arrow::int64())});
  auto append = [&](int64_t base) {
    std::vector<std::optional<int64_t>> xs, ys;
    for (int64_t i = 0; i < 50; ++i) {
      xs.push_back(i);
      ys.push_back((base + i * 37) % 1000);
    }
    ASSERT_TRUE(WriteTable(root, testing::Rows(schema, {testing::Longs(xs), testing::Longs(ys)}),
                           WriteOptions{})
                    .ok());
  };
  for (int i = 0; i < 4; ++i) append(i * 11);  // v1..v4
  const auto rows = testing::ReadRows(root);

  auto zorder = OptimizeBuilder(root).ZOrderBy({"x"}).Execute();
  EXPECT_TRUE(IsDeltaError(zorder.status(), DeltaErrorCode::kInvalidArgument)) << zorder.status();

  auto result = OptimizeBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->version, std::optional<int64_t>(5));
  EXPECT_EQ(testing::ReadRows(root), rows);
  EXPECT_EQ(result->clustering_columns, (std::vector<std::string>{"y"}));
  auto commit = testing::ReadCommitFile(root, 5);
  EXPECT_EQ(commit.operation, "OPTIMIZE");
  EXPECT_EQ(commit.parameters.at("clusterBy"), "[\"y\"]");
  EXPECT_EQ(commit.parameters.at("zOrderBy"), "[]");
  EXPECT_EQ(commit.parameters.at("isFull"), "false");
  ASSERT_EQ(commit.adds.size(), 1u);
  {
    std::ifstream in(fs::path(root) / "_delta_log" / testing::CommitName(5));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"clusteringProvider\":\"liquid\""), std::string::npos) << text;
    EXPECT_NE(text.find("ZCUBE_ZORDER_BY"), std::string::npos) << text;
  }

  // Everything is clustered: nothing to do. A new file is clustered alone.
  auto again = OptimizeBuilder(root).Execute();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->version.has_value());
  append(500);  // v6
  auto incremental = OptimizeBuilder(root).Execute();
  ASSERT_TRUE(incremental.ok()) << incremental.status().ToString();
  ASSERT_EQ(incremental->version, std::optional<int64_t>(7));
  EXPECT_EQ(incremental->num_files_removed, 1);
  EXPECT_EQ(incremental->total_considered_files, 2);
  auto full = OptimizeBuilder(root).Full().Execute();
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->num_files_removed, 2);
  EXPECT_EQ(testing::ReadCommitFile(root, *full->version).parameters.at("isFull"), "true");
  EXPECT_EQ(testing::ReadRows(root), testing::ReadRows(root, 6));
}

TEST(Optimize, ConcurrentAppendDoesNotConflict) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/false);
  for (int i = 0; i < 3; ++i) testing::AppendIdNamePart(root, {i}, {"a"}, "x");
  auto table = testing::HookedTable(root, [&] { testing::AppendIdNamePart(root, {99}, {"z"}, "x"); });
  ASSERT_TRUE(table);
  auto result = OptimizeBuilder(table).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->version, std::optional<int64_t>(5)) << "committed after the append (v4)";
  EXPECT_EQ(result->num_files_removed, 3);
  EXPECT_EQ(testing::ReadRows(root), testing::ReadRows(root, 4));
  EXPECT_EQ(testing::LiveFiles(root, 5).size(), 2u) << "the appended file and the compacted one";
}

TEST(Optimize, ConcurrentDeleteOfARewrittenFileConflictsAndLeavesNothingBehind) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/false);
  for (int i = 0; i < 3; ++i) testing::AppendIdNamePart(root, {i}, {"a"}, "x");
  // The hook runs when the OPTIMIZE has written its files and is about to commit.
  std::set<std::string> expected = testing::DataFiles(root);
  auto table = testing::HookedTable(root, [&] {
    const auto before_delete = testing::DataFiles(root);
    ASSERT_TRUE(DeleteBuilder(root).Where("id = 1").Execute().ok());  // v4
    for (const auto& f : testing::DataFiles(root)) {
      if (!before_delete.count(f)) expected.insert(f);
    }
  });
  ASSERT_TRUE(table);
  auto result = OptimizeBuilder(table).Execute();
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(IsDeltaError(result.status(), DeltaErrorCode::kConcurrentDeleteRead) ||
              IsDeltaError(result.status(), DeltaErrorCode::kConcurrentDeleteDelete))
      << result.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(4));
  EXPECT_EQ(testing::DataFiles(root), expected) << "the OPTIMIZE's files are deleted";
  EXPECT_EQ(testing::ReadRows(root).size(), 2u);
}

TEST(Optimize, DeleteThatReadFilesAnOptimizeRemovedConflicts) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/false);
  for (int i = 0; i < 3; ++i) testing::AppendIdNamePart(root, {i}, {"a"}, "x");
  auto table = testing::HookedTable(root, [&] {
    auto optimized = OptimizeBuilder(root).Execute();  // v4
    ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  });
  ASSERT_TRUE(table);
  auto deleted = DeleteBuilder(table).Where("id = 1").Execute();
  ASSERT_FALSE(deleted.ok());
  EXPECT_TRUE(IsDeltaError(deleted.status(), DeltaErrorCode::kConcurrentDeleteRead))
      << deleted.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(4));
  EXPECT_EQ(testing::ReadRows(root).size(), 3u);
}

TEST(Optimize, FailedReadLeavesTheTableAndStorageAsTheyWere) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, /*partitioned=*/true);
  for (int i = 0; i < 3; ++i) {
    testing::AppendIdNamePart(root, {i}, {"a"}, "x");
    testing::AppendIdNamePart(root, {10 + i}, {"b"}, "y");
  }
  ASSERT_GT(testing::SpoilDataFiles(root, "part=y/"), 0);
  const auto files = testing::DataFiles(root);
  auto result = OptimizeBuilder(root).Parallelism(2).Execute();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("part=y/"), std::string::npos)
      << "the error names the file: " << result.status().ToString();
  EXPECT_EQ(testing::LatestVersion(root), std::optional<int64_t>(6));
  EXPECT_EQ(testing::DataFiles(root), files) << "files written for partition x are deleted";
}

}  // namespace
}  // namespace deltacpp
