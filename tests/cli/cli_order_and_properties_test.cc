// Runs the real `deltacpp` binary: `--order-by` sorts what a query prints (ascending NULLs
// first, descending NULLs last, several keys, case-insensitive names) and refuses what it cannot
// sort by; `write --property` sets properties of the table the write creates, and is refused on
// a table that exists.
#include <gtest/gtest.h>

#include <fstream>

#include "deltacpp/api.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::RunCli;
using testing::TempDir;

class CliOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    const std::string rows = dir_.str() + "/rows.json";
    std::ofstream(rows) << "{\"id\":3,\"g\":\"x\"}\n{\"id\":1,\"g\":\"y\"}\n"
                           "{\"id\":null,\"g\":\"x\"}\n{\"id\":2,\"g\":\"x\"}\n";
    auto written = RunCli("write " + table_ + " " + rows + " --schema 'id long, g string'", dir_);
    ASSERT_EQ(written.exit_code, 0) << written.err;
  }

  std::string Csv(const std::string& order_by) {
    auto r = RunCli("read " + table_ + " --format csv --order-by '" + order_by + "'", dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  TempDir dir_;
  std::string table_;
};

TEST_F(CliOrderTest, AscendingPutsNullsFirst) {
  EXPECT_EQ(Csv("id"), "id,g\n,x\n1,y\n2,x\n3,x\n");
  EXPECT_EQ(Csv("ID asc"), "id,g\n,x\n1,y\n2,x\n3,x\n");
}

TEST_F(CliOrderTest, DescendingPutsNullsLast) {
  EXPECT_EQ(Csv("id DESC"), "id,g\n3,x\n2,x\n1,y\n,x\n");
}

TEST_F(CliOrderTest, LaterKeysBreakTies) {
  EXPECT_EQ(Csv("g, id desc"), "id,g\n3,x\n2,x\n,x\n1,y\n");
}

TEST_F(CliOrderTest, UnknownColumnsAndStrayWordsAreRefused) {
  auto unknown = RunCli("read " + table_ + " --order-by nope", dir_);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("no column 'nope'; columns are id, g"), std::string::npos)
      << unknown.err;
  auto stray = RunCli("read " + table_ + " --order-by 'id sideways'", dir_);
  EXPECT_NE(stray.exit_code, 0);
  EXPECT_NE(stray.err.find("not a column followed by ASC or DESC"), std::string::npos)
      << stray.err;
}

TEST_F(CliOrderTest, WritePropertySetsThePropertiesOfANewTableOnly) {
  const std::string other = dir_.str() + "/other";
  const std::string rows = dir_.str() + "/one.json";
  std::ofstream(rows) << "{\"id\":1}\n";
  auto created = RunCli("write " + other + " " + rows +
                            " --property delta.enableChangeDataFeed=true --property owner=ops",
                        dir_);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  auto table = DeltaTable::Open(other);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->properties().at("owner"), "ops");
  EXPECT_TRUE((*snap)->config().change_data_feed);

  auto again = RunCli("write " + other + " " + rows + " --property owner=someone", dir_);
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  auto after = (*table)->Latest();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)->version(), 0) << "a refused write commits nothing";
}

}  // namespace
}  // namespace deltacpp
