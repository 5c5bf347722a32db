// Writes through a long-lived DeltaTable handle: the handle's cached snapshot must follow other
// writers' commits, so appends land on top of them and overwrites see every row.
#include <gtest/gtest.h>

#include "ops_test_util.h"

namespace deltacpp {
namespace {

using testing::Longs;
using testing::ReadRows;
using testing::Rows;
using testing::Strings;
using testing::TempDir;

std::shared_ptr<arrow::Schema> TwoColumns() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
}

TEST(WriteThroughHandle, AppendsFollowCommitsMadeThroughOtherHandles) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  auto handle = DeltaTable::Locate(root);
  ASSERT_TRUE(handle.ok()) << handle.status().ToString();
  WriteOptions append;
  // Creates the table through the handle, then appends through it while another writer
  // (a separate handle, as another process would be) commits in between.
  for (int i = 0; i < 12; ++i) {
    auto ours = WriteTable(*handle, Rows(TwoColumns(), {Longs({i}), Strings({"ours"})}), append);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    auto theirs =
        WriteTable(root, Rows(TwoColumns(), {Longs({100 + i}), Strings({"theirs"})}), append);
    ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
    EXPECT_EQ(*theirs->version, *ours->version + 1);
  }
  auto latest = (*handle)->Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version(), 23);
  EXPECT_EQ((*latest)->num_files(), 24);
  EXPECT_EQ(ReadRows(root).size(), 24u);

  // An overwrite through the handle removes every file, those of the other writer included.
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  auto replaced = WriteTable(*handle, Rows(TwoColumns(), {Longs({7}), Strings({"only"})}),
                             overwrite);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(replaced->num_removed_files, 24);
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"7|only"}));
}

TEST(WriteThroughHandle, IdempotentWritesSeeTxnVersionsCommittedElsewhere) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  auto handle = DeltaTable::Locate(root);
  ASSERT_TRUE(handle.ok());
  WriteOptions first;
  ASSERT_TRUE(WriteTable(*handle, Rows(TwoColumns(), {Longs({1}), Strings({"a"})}), first).ok());
  // Another writer records version 5 of app "job" after the handle cached its snapshot.
  WriteOptions other;
  other.txn_app_id = "job";
  other.txn_version = 5;
  ASSERT_TRUE(WriteTable(root, Rows(TwoColumns(), {Longs({2}), Strings({"b"})}), other).ok());
  WriteOptions replay = other;
  auto skipped = WriteTable(*handle, Rows(TwoColumns(), {Longs({2}), Strings({"b"})}), replay);
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_TRUE(skipped->skipped);
  EXPECT_EQ(ReadRows(root), (std::multiset<std::string>{"1|a", "2|b"}));
}

}  // namespace
}  // namespace deltacpp
