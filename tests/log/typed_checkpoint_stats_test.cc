#include <gtest/gtest.h>

#include <filesystem>

#include "deltacpp/api.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

// A multi-part checkpoint written with typed stats (stats_parsed) and no JSON stats column:
// its files still carry usable statistics, so a filter on `id` skips the other files.
TEST(TypedCheckpointStats, StatsParsedOnlyCheckpointStillSkipsFiles) {
  testing::TempDir dir;
  const std::string source =
      testing::ConformanceDir() + "/tables/kernel-rs-v1-multi-part-partitioned-struct-stats-only";
  ASSERT_TRUE(std::filesystem::exists(source)) << source;
  std::filesystem::copy(source, dir.path() / "t", std::filesystem::copy_options::recursive);
  auto table = DeltaTable::Open((dir.path() / "t").string());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ((*snap)->num_files(), 5);
  const auto& stats =
      static_cast<const arrow::StringArray&>(*(*snap)->files()->GetColumnByName("stats"));
  EXPECT_EQ(stats.null_count(), 0);
  auto scan = (*snap)->NewScan().Filter("id = 4").Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ((*scan)->files().size(), 1u);
  EXPECT_EQ((*scan)->num_skipped_files(), 4);
  auto rows = (*scan)->ToTable();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)->num_rows(), 1);
}

}  // namespace
}  // namespace deltacpp
