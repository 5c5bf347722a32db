// A commit never writes a log line that is not valid UTF-8: whatever a caller staged, text that
// is not valid UTF-8 fails the commit (InvalidArgument naming the action and field) and the log
// stays exactly as it was.
#include <gtest/gtest.h>

#include "deltacpp/error.h"
#include "deltacpp/transaction.h"
#include "txn/txn_test_util.h"

namespace deltacpp {
namespace {

using testing::FakeAdd;
using testing::MakeMetadata;
using testing::MakeProtocol;
using testing::TestSchema;
using testing::TxnTestTable;

const std::string kBad = "caf\xE9";
const std::string kGood = "caf\xC3\xA9 \xF0\x9F\x98\x80";

void ExpectRefused(const arrow::Result<CommitResult>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kInvalidArgument)) << r.status();
  for (const auto& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().message();
  }
}

class CommitUtf8 : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = t_.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema(), {"part"}));
    ASSERT_TRUE(created.ok()) << created.status();
    before_ = t_.LogListing();
  }
  void TearDown() override { EXPECT_EQ(t_.LogListing(), before_); }

  std::unique_ptr<Transaction> Begin(TransactionOptions options = {}) {
    auto txn = t_.Begin(std::move(options));
    EXPECT_TRUE(txn.ok()) << txn.status();
    return txn.ok() ? std::move(*txn) : nullptr;
  }

  TxnTestTable t_;
  std::set<std::string> before_;
};

TEST_F(CommitUtf8, TxnAppId) {
  auto txn = Begin();
  txn->SetTxn(kBad, 1);
  ExpectRefused(txn->Commit("WRITE"), {t_.root(), "the txn action", "appId"});
}

TEST_F(CommitUtf8, PartitionValuesAndStatsOfAddedFiles) {
  auto txn = Begin();
  txn->AddFiles({FakeAdd("part=x/a.parquet", {{"part", kBad}})});
  ExpectRefused(txn->Commit("WRITE"), {"the add action", "partitionValues['part']"});

  txn = Begin();
  auto add = FakeAdd("part=x/b.parquet", {{"part", "x"}});
  add.stats = "{\"numRecords\":1,\"minValues\":{\"value\":\"" + kBad + "\"}}";
  txn->AddFiles({add});
  ExpectRefused(txn->Commit("WRITE"), {"the add action", "stats"});
}

TEST_F(CommitUtf8, MetadataAndCommitInfo) {
  auto txn = Begin();
  auto metadata = MakeMetadata(TestSchema(), {"part"});
  metadata.description = kBad;
  txn->UpdateMetadata(metadata);
  ExpectRefused(txn->Commit("SET TBLPROPERTIES"), {"the metaData action", "description"});

  txn = Begin();
  txn->AddFiles({FakeAdd("part=x/c.parquet", {{"part", "x"}})});
  ExpectRefused(txn->Commit("WRITE", {{"predicate", kBad}}),
                {"the commitInfo action", "operationParameters['predicate']"});

  TransactionOptions options;
  options.user_metadata = kBad;
  auto refused = t_.Begin(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(IsDeltaError(refused.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_NE(refused.status().message().find("user metadata"), std::string::npos);
}

TEST(CommitUtf8Valid, MultibyteTextIsCommittedAndReadBack) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema(), {"part"})).ok());
  TransactionOptions options;
  options.user_metadata = kGood;
  auto txn = t.Begin(options);
  ASSERT_TRUE(txn.ok());
  (*txn)->SetTxn(kGood, 3);
  (*txn)->AddFiles({FakeAdd("part=x/a.parquet", {{"part", kGood}})});
  auto r = (*txn)->Commit("WRITE", {{"mode", "Append"}});
  ASSERT_TRUE(r.ok()) << r.status();
  auto table = t.Open();
  ASSERT_TRUE(table.ok());
  auto snapshot = (*table)->Latest();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->txn_version(kGood), 3);
  ASSERT_TRUE((*snapshot)->commit_info());
  EXPECT_NE((*snapshot)->commit_info()->raw_json.find("\"userMetadata\":\"" + kGood + "\""),
            std::string::npos)
      << (*snapshot)->commit_info()->raw_json;
}

}  // namespace
}  // namespace deltacpp
