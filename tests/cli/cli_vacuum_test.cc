// `deltacpp vacuum`: a dry run lists what a real run then deletes, the retention check refuses
// a short retention with a message saying how to proceed, LITE leaves unnamed files, and the
// START / END commits show in history.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "deltacpp/api.h"
#include "support/cli_runner.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::RunCli;
using testing::TempDir;

std::shared_ptr<arrow::Table> Ids(std::vector<int64_t> ids) {
  arrow::Int64Builder b;
  (void)b.AppendValues(ids);
  return arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}),
                            {b.Finish().ValueOrDie()});
}

void AgeBy(const fs::path& path, int days) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(24 * days));
}

// Version 0 creates the table, 1 appends id 1, 2 appends ids 2 and 3, 3 removes the file of
// version 1; every commit (and so the remove's deletionTimestamp) is in January 2024, and every
// data file is 60 days old. An untracked old file sits beside them.
class CliVacuum : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    FixtureTableWriter w(table_);
    ASSERT_TRUE(w.Create(Ids({})->schema(), {}, {}, 1, 2, {}, {}, kBaseMs).ok());
    ASSERT_TRUE(w.Append({FixtureFile(Ids({1}))}, "WRITE", kBaseMs + 1).ok());
    removed_ = w.active_paths().at(0);
    ASSERT_TRUE(w.Append({FixtureFile(Ids({2, 3}))}, "WRITE", kBaseMs + 2).ok());
    ASSERT_TRUE(w.Remove({removed_}, {}, "DELETE", kBaseMs + 3).ok());
    std::ofstream(fs::path(table_) / "orphan.parquet") << "not parquet";
    for (const auto& e : fs::directory_iterator(table_)) {
      if (e.is_regular_file()) AgeBy(e.path(), 60);
    }
  }
  static constexpr int64_t kBaseMs = 1'704'067'200'000;  // 2024-01-01T00:00:00Z
  TempDir dir_;
  std::string table_;
  std::string removed_;
};

TEST_F(CliVacuum, DryRunListsWhatTheRealRunDeletes) {
  auto dry = RunCli("vacuum " + table_ + " --dry-run", dir_);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find(removed_ + "\t"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("orphan.parquet\t11\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("dry run: 2 files"), std::string::npos) << dry.out;
  EXPECT_TRUE(fs::exists(fs::path(table_) / removed_));

  auto real = RunCli("vacuum " + table_, dir_);
  ASSERT_EQ(real.exit_code, 0) << real.err;
  EXPECT_NE(real.out.find("deleted 2 files"), std::string::npos) << real.out;
  EXPECT_FALSE(fs::exists(fs::path(table_) / removed_));
  EXPECT_FALSE(fs::exists(fs::path(table_) / "orphan.parquet"));
  auto read = RunCli("read " + table_ + " --format csv --order-by id", dir_);
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out, "id\n2\n3\n");
  auto history = RunCli("history " + table_ + " --format csv", dir_);
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_NE(history.out.find("VACUUM END"), std::string::npos) << history.out;
  EXPECT_NE(history.out.find("VACUUM START"), std::string::npos) << history.out;
}

TEST_F(CliVacuum, AShortRetentionNeedsTheCheckTurnedOff) {
  auto refused = RunCli("vacuum " + table_ + " --retain 1", dir_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--no-retention-check"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::exists(fs::path(table_) / "orphan.parquet"));
  auto allowed = RunCli("vacuum " + table_ + " --retain 1 --no-retention-check", dir_);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_FALSE(fs::exists(fs::path(table_) / "orphan.parquet"));
}

TEST_F(CliVacuum, LiteLeavesFilesTheLogDoesNotName) {
  auto lite = RunCli("vacuum " + table_ + " --lite", dir_);
  ASSERT_EQ(lite.exit_code, 0) << lite.err;
  EXPECT_NE(lite.out.find("deleted 1 file "), std::string::npos) << lite.out;
  EXPECT_FALSE(fs::exists(fs::path(table_) / removed_));
  EXPECT_TRUE(fs::exists(fs::path(table_) / "orphan.parquet"));
}

}  // namespace
}  // namespace deltacpp
