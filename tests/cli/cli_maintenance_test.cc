// `deltacpp optimize` and `deltacpp fsck`: what they print, what they commit, their refusals.
#include <gtest/gtest.h>

#include <filesystem>

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

// Version 0 creates (id BIGINT), versions 1..3 append one file each.
class CliMaintenance : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    FixtureTableWriter w(table_);
    ASSERT_TRUE(w.Create(Ids({})->schema(), {}, {}, 1, 2, {}, {}, 1'704'067'200'000).ok());
    for (int64_t i = 1; i <= 3; ++i) {
      ASSERT_TRUE(w.Append({FixtureFile(Ids({i, i * 10}))}, "WRITE", 1'704'067'200'000 + i).ok());
    }
    files_ = w.active_paths();
  }
  TempDir dir_;
  std::string table_;
  std::vector<std::string> files_;
};

TEST_F(CliMaintenance, OptimizeCompactsAndSaysWhatItDid) {
  auto out = RunCli("optimize " + table_, dir_);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("committed version 4: 3 files", 0), 0u) << out.out;
  EXPECT_NE(out.out.find("numRemovedFiles: 3\n"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("numAddedFiles: 1\n"), std::string::npos) << out.out;
  auto read = RunCli("read " + table_ + " --format csv --order-by id", dir_);
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out, "id\n1\n2\n3\n10\n20\n30\n");
  auto again = RunCli("optimize " + table_ + " --zorder-by id", dir_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("ordered by (id)"), std::string::npos) << again.out;
  auto nothing = RunCli("optimize " + table_ + " --purge", dir_);
  ASSERT_EQ(nothing.exit_code, 0) << nothing.err;
  EXPECT_NE(nothing.out.find("nothing committed"), std::string::npos) << nothing.out;
  auto history = RunCli("history " + table_ + " --format csv", dir_);
  EXPECT_NE(history.out.find("OPTIMIZE"), std::string::npos) << history.out;
}

TEST_F(CliMaintenance, OptimizeRefusesBadColumnsWithTheirKind) {
  auto unknown = RunCli("optimize " + table_ + " --zorder-by nope", dir_);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("InvalidArgument"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("nope"), std::string::npos) << unknown.err;
  auto where = RunCli("optimize " + table_ + " --where 'id > 1'", dir_);
  EXPECT_NE(where.exit_code, 0);
  EXPECT_NE(where.err.find("partition"), std::string::npos) << where.err;
}

TEST_F(CliMaintenance, FsckListsThenRemovesAMissingFile) {
  fs::remove(fs::path(table_) / files_[1]);
  auto dry = RunCli("fsck " + table_ + " --dry-run", dir_);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("missing\t" + files_[1] + "\t"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("dry run: 1 of 3 live files"), std::string::npos) << dry.out;
  auto read = RunCli("read " + table_, dir_);
  EXPECT_NE(read.exit_code, 0);
  EXPECT_NE(read.err.find("MissingFile"), std::string::npos) << read.err;

  auto repaired = RunCli("fsck " + table_, dir_);
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_NE(repaired.out.find("committed version 4: removed 1 missing file of 3"),
            std::string::npos)
      << repaired.out;
  read = RunCli("read " + table_ + " --format csv --order-by id", dir_);
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out, "id\n1\n3\n10\n30\n");
  auto clean = RunCli("fsck " + table_, dir_);
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_NE(clean.out.find("nothing to do"), std::string::npos) << clean.out;
}

}  // namespace
}  // namespace deltacpp
