// The change data feed reserves _change_type, _commit_version and _commit_timestamp: a table
// with the feed on cannot have such a column, whichever comes first, and a refused change
// leaves the log as it was.
#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "deltacpp/error.h"
#include "deltacpp/ops/alter_table.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::LogListing;
using testing::Longs;
using testing::Rows;
using testing::Strings;
using testing::TempDir;

std::shared_ptr<arrow::Schema> WithColumn(const std::string& name) {
  return arrow::schema(
      {arrow::field("id", arrow::int64(), false), arrow::field(name, arrow::utf8())});
}

void ExpectReservedColumnError(const arrow::Status& status, const std::string& column) {
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(IsDeltaError(status, DeltaErrorCode::kInvalidArgument)) << status.ToString();
  EXPECT_NE(status.message().find(column), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("change data feed"), std::string::npos) << status.ToString();
}

TEST(ChangeDataFeedColumns, CreatingAFeedTableWithAReservedColumnIsRefused) {
  for (const std::string column : {"_change_type", "_commit_version", "_COMMIT_TIMESTAMP"}) {
    TempDir dir;
    CreateTableOptions opts;
    opts.schema = WithColumn(column);
    opts.properties["delta.enableChangeDataFeed"] = "true";
    auto created = CreateTable(dir.str(), opts);
    ExpectReservedColumnError(created.status(), column);
    EXPECT_TRUE(LogListing(dir.str()).empty()) << column;
  }
}

TEST(ChangeDataFeedColumns, SameColumnsAreFineWithoutTheFeed) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = WithColumn("_change_type");
  auto created = CreateTable(dir.str(), opts);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto written =
      WriteTable(dir.str(), Rows(WithColumn("_change_type"), {Longs({1}), Strings({"x"})}), {});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
}

TEST(ChangeDataFeedColumns, EnablingTheFeedOnATableWithAReservedColumnIsRefused) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = WithColumn("_commit_version");
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  const auto before = LogListing(dir.str());
  auto set = SetTableProperties(dir.str(), {{"delta.enableChangeDataFeed", "true"}});
  ExpectReservedColumnError(set.status(), "_commit_version");
  EXPECT_EQ(LogListing(dir.str()), before);
}

TEST(ChangeDataFeedColumns, AddingAReservedColumnToAFeedTableIsRefused) {
  TempDir dir;
  CreateTableOptions opts;
  opts.schema = arrow::schema({arrow::field("id", arrow::int64(), false)});
  opts.properties["delta.enableChangeDataFeed"] = "true";
  ASSERT_TRUE(CreateTable(dir.str(), opts).ok());
  const auto before = LogListing(dir.str());

  auto added = AddColumns(dir.str(), {NewColumn{arrow::field("_change_type", arrow::utf8()), ""}});
  ExpectReservedColumnError(added.status(), "_change_type");
  EXPECT_EQ(LogListing(dir.str()), before);

  WriteOptions merge;
  merge.merge_schema = true;
  auto merged = WriteTable(
      dir.str(), Rows(WithColumn("_commit_timestamp"), {Longs({1}), Strings({"x"})}), merge);
  ExpectReservedColumnError(merged.status(), "_commit_timestamp");
  EXPECT_EQ(LogListing(dir.str()), before);
}

}  // namespace
}  // namespace deltacpp
