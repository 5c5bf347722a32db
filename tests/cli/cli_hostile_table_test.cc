// `deltacpp read` on damaged tables: a non-zero exit and the error kind on stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_runner.h"
#include "support/hostile_tables.h"
#include "support/temp_dir.h"

namespace deltacpp::testing {
namespace {

using ::testing::HasSubstr;

class CliHostileTableTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CliHostileTableTest, ReadExitsNonZeroWithTheKindOnStderr) {
  const HostileCase& c = HostileCaseNamed(GetParam());
  TempDir dir;
  TempDir scratch;
  const std::string root = dir.str();
  ASSERT_TRUE(c.build(root).ok()) << c.name;
  auto r = RunCli("read " + root + " --format csv", scratch);
  EXPECT_NE(r.exit_code, 0) << r.out;
  ASSERT_TRUE(c.kind.has_value());
  EXPECT_THAT(r.err, HasSubstr(std::string(DeltaErrorCodeName(*c.kind)) + ": ")) << r.err;
  EXPECT_THAT(r.err, HasSubstr(root)) << r.err;
}

INSTANTIATE_TEST_SUITE_P(SomeCases, CliHostileTableTest,
                         ::testing::Values("add_path_dotdot", "add_size_beyond_long",
                                           "commit_is_fifo", "data_file_is_fifo",
                                           "checkpoint_truncated_without_commit_0",
                                           "add_twice_in_one_commit"));

}  // namespace
}  // namespace deltacpp::testing
