#include "deltacpp/transaction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>

#include "deltacpp/version.h"
#include "protocol/action_json_writer.h"
#include "txn/txn_test_util.h"

namespace deltacpp::testing {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> ActionNames(const std::vector<std::string>& lines) {
  std::vector<std::string> names;
  for (const auto& l : lines) names.push_back(ActionName(l));
  return names;
}

Protocol DomainProtocol() { return MakeProtocol(1, 7, {}, {"appendOnly", "invariants", "domainMetadata"}); }

TEST(Transaction, CreatesATableAndReadsItBack) {
  TxnTestTable t;
  auto created = t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema()),
                          {FakeAdd("a.parquet"), FakeAdd("b.parquet")});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->version, 0);
  EXPECT_EQ(created->attempts, 1);
  EXPECT_FALSE(created->checkpointed);

  EXPECT_EQ(ActionNames(t.CommitLines(0)),
            (std::vector<std::string>{"commitInfo", "protocol", "metaData", "add", "add"}));
  auto table = t.Open();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->version(), 0);
  EXPECT_EQ((*snap)->protocol().min_writer_version, 2);
  EXPECT_EQ((*snap)->metadata().id, MakeMetadata(TestSchema()).id);
  EXPECT_EQ(LivePaths(**snap), (std::vector<std::string>{"a.parquet", "b.parquet"}));
}

TEST(Transaction, CommitInfoComesFirstWithTheExpectedFields) {
  TxnTestTable t;
  auto created = t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema()));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto v0 = CommitInfoObject(t.CommitLines(0)[0]);
  EXPECT_STREQ(v0["operation"].GetString(), "CREATE TABLE");
  EXPECT_FALSE(v0.HasMember("readVersion"));  // nothing was read to create the table
  EXPECT_FALSE(v0.HasMember("inCommitTimestamp"));

  TransactionOptions options;
  options.user_metadata = "nightly load";
  auto txn = t.Begin(options);
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  (*txn)->AddFiles({FakeAdd("c.parquet")});
  const int64_t before = NowMs();
  auto committed = (*txn)->Commit("WRITE", {{"mode", "Append"}, {"partitionBy", "[]"}},
                                  {{"numFiles", "1"}, {"numOutputRows", "10"}});
  const int64_t after = NowMs();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->version, 1);

  auto lines = t.CommitLines(1);
  ASSERT_EQ(ActionNames(lines), (std::vector<std::string>{"commitInfo", "add"}));
  auto ci = CommitInfoObject(lines[0]);
  EXPECT_GE(ci["timestamp"].GetInt64(), before);
  EXPECT_LE(ci["timestamp"].GetInt64(), after);
  EXPECT_STREQ(ci["operation"].GetString(), "WRITE");
  EXPECT_STREQ(ci["operationParameters"]["mode"].GetString(), "Append");
  EXPECT_STREQ(ci["operationParameters"]["partitionBy"].GetString(), "[]");
  EXPECT_STREQ(ci["operationMetrics"]["numFiles"].GetString(), "1");
  EXPECT_STREQ(ci["operationMetrics"]["numOutputRows"].GetString(), "10");
  EXPECT_EQ(ci["readVersion"].GetInt64(), 0);
  EXPECT_STREQ(ci["isolationLevel"].GetString(), "Serializable");
  EXPECT_TRUE(ci["isBlindAppend"].GetBool());
  EXPECT_STREQ(ci["engineInfo"].GetString(), kEngineInfo);
  EXPECT_STREQ(ci["userMetadata"].GetString(), "nightly load");
  EXPECT_FALSE(ci.HasMember("inCommitTimestamp"));
  std::string txn_id = ci["txnId"].GetString();
  EXPECT_TRUE(std::regex_match(
      txn_id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << txn_id;
  EXPECT_NE(txn_id, std::string(CommitInfoObject(t.CommitLines(0)[0])["txnId"].GetString()));

  // History sees the same commitInfo.
  auto table = t.Open();
  ASSERT_TRUE(table.ok());
  auto history = (*table)->History();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].operation, "WRITE");
}

TEST(Transaction, OrdersActionsCommitInfoProtocolMetadataTxnDomainRemovesAdds) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(DomainProtocol(), MakeMetadata(TestSchema()), {FakeAdd("old.parquet")}).ok());
  auto txn = t.Begin();
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  (*txn)->AddFiles({FakeAdd("new.parquet")});
  (*txn)->RemoveFiles({FakeRemove("old.parquet")});
  (*txn)->SetDomainMetadata(DomainMetadata{"app.owner", R"({"team":"x"})", false});
  (*txn)->SetTxn("loader", 7);
  Metadata m = MakeMetadata(TestSchema(), {}, {{"owner", "x"}});
  (*txn)->UpdateMetadata(m);
  (*txn)->UpdateProtocol(DomainProtocol());
  (*txn)->ReadWholeTable();
  auto committed = (*txn)->Commit("REPLACE TABLE");
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  auto lines = t.CommitLines(1);
  EXPECT_EQ(ActionNames(lines),
            (std::vector<std::string>{"commitInfo", "protocol", "metaData", "txn", "domainMetadata",
                                      "remove", "add"}));
  auto ci = CommitInfoObject(lines[0]);
  EXPECT_FALSE(ci["isBlindAppend"].GetBool());

  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(LivePaths(**snap), std::vector<std::string>{"new.parquet"});
  EXPECT_EQ((*snap)->txn_version("loader"), 7);
  ASSERT_EQ((*snap)->txns().at("loader").last_updated.has_value(), true);
  EXPECT_EQ((*snap)->domain_metadata().at("app.owner").configuration, R"({"team":"x"})");
  EXPECT_EQ((*snap)->properties().at("owner"), "x");
}

TEST(Transaction, ComputesBlindAppendAndIsolation) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema()),
                       {FakeAdd("a.parquet"), FakeAdd("b.parquet")})
                  .ok());
  {  // A compaction (dataChange=false only) drops to SnapshotIsolation.
    auto txn = t.Begin();
    ASSERT_TRUE(txn.ok());
    (*txn)->ReadFiles({"a.parquet", "b.parquet"});
    (*txn)->RemoveFiles({FakeRemove("a.parquet", {}, false), FakeRemove("b.parquet", {}, false)});
    (*txn)->AddFiles({FakeAdd("ab.parquet", {}, false)});
    auto c = (*txn)->Commit("OPTIMIZE");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto ci = CommitInfoObject(t.CommitLines(c->version)[0]);
    EXPECT_STREQ(ci["isolationLevel"].GetString(), "SnapshotIsolation");
    EXPECT_FALSE(ci["isBlindAppend"].GetBool());
  }
  {  // An append that read something is not blind; WriteSerializable is written as asked.
    TransactionOptions options;
    options.isolation = IsolationLevel::kWriteSerializable;
    auto txn = t.Begin(options);
    ASSERT_TRUE(txn.ok());
    (*txn)->ReadPredicate("id > 3");
    (*txn)->AddFiles({FakeAdd("c.parquet")});
    auto c = (*txn)->Commit("MERGE");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto ci = CommitInfoObject(t.CommitLines(c->version)[0]);
    EXPECT_STREQ(ci["isolationLevel"].GetString(), "WriteSerializable");
    EXPECT_FALSE(ci["isBlindAppend"].GetBool());
  }
  // The isolation level is never stored as a table property.
  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->properties().count("delta.isolationLevel"), 0u);
}

TEST(Transaction, BlindAppendsFromTheSameSnapshotBothCommit) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema())).ok());
  auto first = t.Begin();
  auto second = t.Begin();
  ASSERT_TRUE(first.ok() && second.ok());
  (*first)->AddFiles({FakeAdd("one.parquet")});
  (*second)->AddFiles({FakeAdd("two.parquet")});
  auto c1 = (*first)->Commit("WRITE");
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  auto c2 = (*second)->Commit("WRITE");
  ASSERT_TRUE(c2.ok()) << c2.status().ToString();
  EXPECT_EQ(c1->version, 1);
  EXPECT_EQ(c1->attempts, 1);
  EXPECT_EQ(c2->version, 2);
  EXPECT_EQ(c2->attempts, 2);
  // The retried commit still records the version it read.
  EXPECT_EQ(CommitInfoObject(t.CommitLines(2)[0])["readVersion"].GetInt64(), 0);
  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  auto paths = LivePaths(**snap);
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (std::vector<std::string>{"one.parquet", "two.parquet"}));
}

TEST(Transaction, GivesUpAfterMaxAttemptsAndLeavesNoTrace) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema())).ok());
  TransactionOptions options;
  options.max_attempts = 1;
  auto loser = t.Begin(options);
  ASSERT_TRUE(loser.ok());
  (*loser)->AddFiles({FakeAdd("late.parquet")});
  ASSERT_TRUE(t.Append({FakeAdd("winner.parquet")}).ok());
  auto listing = t.LogListing();
  auto c = (*loser)->Commit("WRITE");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(CodeName(c.status()), "VersionExists") << c.status().ToString();
  EXPECT_NE(c.status().message().find("max_attempts"), std::string::npos);
  EXPECT_NE(c.status().message().find(t.root()), std::string::npos);
  EXPECT_EQ(t.LogListing(), listing);
}

TEST(Transaction, CommitsOnlyOnce) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema())).ok());
  auto txn = t.Begin();
  ASSERT_TRUE(txn.ok());
  (*txn)->AddFiles({FakeAdd("x.parquet")});
  ASSERT_TRUE((*txn)->Commit("WRITE").ok());
  auto again = (*txn)->Commit("WRITE");
  EXPECT_EQ(CodeName(again.status()), "InvalidArgument");
}

TEST(Transaction, RejectsInvalidCommits) {
  TxnTestTable t;
  {  // Version 0 needs protocol and metaData.
    auto txn = Transaction::StartCreate(t.root(), t.store());
    ASSERT_TRUE(txn.ok());
    (*txn)->UpdateMetadata(MakeMetadata(TestSchema()));
    auto c = (*txn)->Commit("CREATE TABLE");
    EXPECT_EQ(CodeName(c.status()), "InvalidArgument") << c.status().ToString();
    EXPECT_TRUE(t.LogListing().empty());
  }
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema(), {"part"})).ok());
  {  // Partition values must name exactly the partition columns.
    auto txn = t.Begin();
    ASSERT_TRUE(txn.ok());
    (*txn)->AddFiles({FakeAdd("no-partition.parquet")});
    auto c = (*txn)->Commit("WRITE");
    EXPECT_EQ(CodeName(c.status()), "InvalidArgument") << c.status().ToString();
    EXPECT_NE(c.status().message().find("no-partition.parquet"), std::string::npos);
  }
  {  // One add per path.
    auto txn = t.Begin();
    ASSERT_TRUE(txn.ok());
    (*txn)->AddFiles({FakeAdd("d.parquet", {{"part", "a"}}), FakeAdd("d.parquet", {{"part", "a"}})});
    EXPECT_EQ(CodeName((*txn)->Commit("WRITE").status()), "InvalidArgument");
  }
  {  // Domains need the domainMetadata feature.
    auto txn = t.Begin();
    ASSERT_TRUE(txn.ok());
    (*txn)->SetDomainMetadata(DomainMetadata{"app.x", "{}", false});
    EXPECT_EQ(CodeName((*txn)->Commit("SET").status()), "InvalidArgument");
  }
  {  // A bad read predicate is reported at commit.
    auto txn = t.Begin();
    ASSERT_TRUE(txn.ok());
    (*txn)->ReadPredicate("no_such_column = 1");
    (*txn)->AddFiles({FakeAdd("e.parquet", {{"part", "a"}})});
    EXPECT_EQ(CodeName((*txn)->Commit("DELETE").status()), "InvalidExpression");
  }
  {  // SnapshotIsolation cannot be requested.
    TransactionOptions options;
    options.isolation = IsolationLevel::kSnapshotIsolation;
    EXPECT_EQ(CodeName(t.Begin(options).status()), "InvalidArgument");
    options = {};
    options.max_attempts = 0;
    EXPECT_EQ(CodeName(t.Begin(options).status()), "InvalidArgument");
  }
}

TEST(Transaction, AppendOnlyTablesRefuseDataChangingRemoves) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema(), {}, {{"delta.appendOnly", "true"}}),
                       {FakeAdd("a.parquet"), FakeAdd("b.parquet")})
                  .ok());
  auto listing = t.LogListing();
  auto txn = t.Begin();
  ASSERT_TRUE(txn.ok());
  (*txn)->ReadFiles({"a.parquet"});
  (*txn)->RemoveFiles({FakeRemove("a.parquet")});
  auto c = (*txn)->Commit("DELETE");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(CodeName(c.status()), "AppendOnlyViolation") << c.status().ToString();
  EXPECT_NE(c.status().message().find("a.parquet"), std::string::npos);
  EXPECT_EQ(t.LogListing(), listing);

  // Rearranging files without changing data is allowed.
  auto compact = t.Begin();
  ASSERT_TRUE(compact.ok());
  (*compact)->ReadFiles({"a.parquet", "b.parquet"});
  (*compact)->RemoveFiles({FakeRemove("a.parquet", {}, false), FakeRemove("b.parquet", {}, false)});
  (*compact)->AddFiles({FakeAdd("ab.parquet", {}, false)});
  auto ok = (*compact)->Commit("OPTIMIZE");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  // And appends are.
  EXPECT_TRUE(t.Append({FakeAdd("c.parquet")}).ok());
}

TEST(Transaction, RefusesTablesWithFeaturesItCannotWrite) {
  {  // An unknown writer feature in a table written by someone else.
    TxnTestTable t;
    const auto protocol = MakeProtocol(1, 7, {}, {"appendOnly", "fancyNewFeature"});
    const auto metadata = MakeMetadata(TestSchema());
    ASSERT_TRUE(t.WriteRawCommit(0, {internal::ProtocolToJson(protocol).ValueOrDie(),
                                     internal::MetadataToJson(metadata).ValueOrDie()})
                    .ok());
    auto table = t.Open();
    ASSERT_TRUE(table.ok());
    auto snap = (*table)->Latest();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();  // readers do not care
    auto txn = Transaction::Start(*table, *snap);
    ASSERT_FALSE(txn.ok());
    EXPECT_EQ(CodeName(txn.status()), "UnsupportedFeature");
    EXPECT_NE(txn.status().message().find("fancyNewFeature"), std::string::npos)
        << txn.status().ToString();
    EXPECT_NE(txn.status().message().find(t.root()), std::string::npos);
  }
  {  // Iceberg compatibility is not implemented: refused by name.
    TxnTestTable t;
    const auto protocol = MakeProtocol(1, 7, {}, {"columnMapping", "icebergCompatV1"});
    const auto metadata = MakeMetadata(TestSchema());
    ASSERT_TRUE(t.WriteRawCommit(0, {internal::ProtocolToJson(protocol).ValueOrDie(),
                                     internal::MetadataToJson(metadata).ValueOrDie()})
                    .ok());
    auto txn = t.Begin();
    ASSERT_FALSE(txn.ok());
    EXPECT_EQ(CodeName(txn.status()), "UnsupportedFeature");
    EXPECT_NE(txn.status().message().find("icebergCompatV1"), std::string::npos);
  }
  {  // Writer version above 7.
    TxnTestTable t;
    auto c = t.Create(MakeProtocol(1, 8), MakeMetadata(TestSchema()));
    EXPECT_EQ(CodeName(c.status()), "UnsupportedFeature") << c.status().ToString();
    EXPECT_TRUE(t.LogListing().empty());
  }
  {  // Creating a table with an unknown feature.
    TxnTestTable t;
    auto c = t.Create(MakeProtocol(3, 7, {"deletionVectors", "someReaderThing"}, {"deletionVectors", "someReaderThing"}),
                      MakeMetadata(TestSchema()));
    EXPECT_EQ(CodeName(c.status()), "UnsupportedFeature");
    EXPECT_NE(c.status().message().find("someReaderThing"), std::string::npos);
  }
  {  // Invariants in use.
    TxnTestTable t;
    auto schema = arrow::schema({arrow::field(
        "id", arrow::int64(), true,
        arrow::key_value_metadata({"delta.invariants"},
                                  {R"({"expression":{"expression":"id > 0"}})"}))});
    auto c = t.Create(MakeProtocol(1, 2), MakeMetadata(schema));
    EXPECT_EQ(CodeName(c.status()), "UnsupportedFeature");
    EXPECT_NE(c.status().message().find("invariants"), std::string::npos);
    // Unless the caller validates the rows itself.
    TransactionOptions options;
    options.enforced_features = {"invariants"};
    auto ok = t.Create(MakeProtocol(1, 2), MakeMetadata(schema), {}, options);
    EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  }
  {  // CHECK constraints in use.
    TxnTestTable t;
    auto c = t.Create(MakeProtocol(1, 3),
                      MakeMetadata(TestSchema(), {}, {{"delta.constraints.positive", "id > 0"}}));
    EXPECT_EQ(CodeName(c.status()), "UnsupportedFeature");
    EXPECT_NE(c.status().message().find("checkConstraints"), std::string::npos);
  }
  {  // Generated columns in use.
    TxnTestTable t;
    auto schema = arrow::schema(
        {arrow::field("id", arrow::int64()),
         arrow::field("id2", arrow::int64(), true,
                      arrow::key_value_metadata({"delta.generationExpression"}, {"\"id * 2\""}))});
    auto c = t.Create(MakeProtocol(1, 4), MakeMetadata(schema));
    EXPECT_EQ(CodeName(c.status()), "UnsupportedFeature");
    EXPECT_NE(c.status().message().find("generatedColumns"), std::string::npos);
  }
  {  // The same metadata on a protocol without the feature is inert.
    TxnTestTable t;
    auto c = t.Create(MakeProtocol(1, 1),
                      MakeMetadata(TestSchema(), {}, {{"delta.constraints.positive", "id > 0"}}));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
  }
  {  // Supported table features are accepted.
    TxnTestTable t;
    auto c = t.Create(MakeProtocol(3, 7, {"deletionVectors", "timestampNtz", "v2Checkpoint"},
                                   {"deletionVectors", "timestampNtz", "v2Checkpoint",
                                    "appendOnly", "changeDataFeed", "domainMetadata",
                                    "inCommitTimestamp", "vacuumProtocolCheck"}),
                      MakeMetadata(TestSchema()));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
  }
}

Protocol IctProtocol() { return MakeProtocol(1, 7, {}, {"inCommitTimestamp"}); }
Metadata IctMetadata() {
  return MakeMetadata(TestSchema(), {}, {{"delta.enableInCommitTimestamps", "true"}});
}

int64_t IctOf(const TxnTestTable& t, int64_t version) {
  auto ci = CommitInfoObject(t.CommitLines(version)[0]);
  EXPECT_TRUE(ci.HasMember("inCommitTimestamp")) << "version " << version;
  return ci.HasMember("inCommitTimestamp") ? ci["inCommitTimestamp"].GetInt64() : -1;
}

TEST(Transaction, InCommitTimestampsStayMonotonicWhenTheClockGoesBackwards) {
  TxnTestTable t;
  const int64_t start = NowMs();
  ASSERT_TRUE(t.Create(IctProtocol(), IctMetadata()).ok());
  // The ICT is the first field of the first line.
  EXPECT_EQ(t.CommitLines(0)[0].rfind(R"({"commitInfo":{"inCommitTimestamp":)", 0), 0u);
  const int64_t ict0 = IctOf(t, 0);
  EXPECT_GE(ict0, start);

  // A transaction reads version 0; meanwhile another writer commits version 1 with an ICT an
  // hour ahead of our clock.
  auto loser = t.Begin();
  ASSERT_TRUE(loser.ok());
  (*loser)->AddFiles({FakeAdd("mine.parquet")});
  const int64_t future = NowMs() + 3600 * 1000;
  internal::CommitInfoFields winner_info;
  winner_info.in_commit_timestamp = future;
  winner_info.timestamp = future;
  winner_info.operation = "WRITE";
  winner_info.is_blind_append = true;
  ASSERT_TRUE(t.WriteRawCommit(1, {internal::CommitInfoToJson(winner_info).ValueOrDie(),
                                   internal::AddFileToJson(FakeAdd("theirs.parquet")).ValueOrDie()})
                  .ok());

  // The retry at version 2 is dated after the winner, not by the (earlier) clock.
  auto c = (*loser)->Commit("WRITE");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->version, 2);
  EXPECT_EQ(c->attempts, 2);
  EXPECT_EQ(IctOf(t, 2), future + 1);

  // A transaction started on the latest snapshot continues from there.
  ASSERT_TRUE(t.Append({FakeAdd("next.parquet")}).ok());
  EXPECT_EQ(IctOf(t, 3), future + 2);
  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->timestamp_ms(), future + 2);
}

TEST(Transaction, EnablingInCommitTimestampsRecordsWhereTheyStart) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(IctProtocol(), MakeMetadata(TestSchema())).ok());
  EXPECT_FALSE(CommitInfoObject(t.CommitLines(0)[0]).HasMember("inCommitTimestamp"));
  auto txn = t.Begin();
  ASSERT_TRUE(txn.ok());
  (*txn)->UpdateMetadata(IctMetadata());
  auto c = (*txn)->Commit("SET TBLPROPERTIES");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const int64_t ict = IctOf(t, 1);
  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->properties().at("delta.inCommitTimestampEnablementVersion"), "1");
  EXPECT_EQ((*snap)->properties().at("delta.inCommitTimestampEnablementTimestamp"),
            std::to_string(ict));
  EXPECT_EQ((*snap)->timestamp_ms(), ict);
}

TEST(Transaction, ReadTxnVersionReturnsTheRecordedVersion) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema())).ok());
  auto first = t.Begin();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->ReadTxnVersion("stream"), std::nullopt);
  (*first)->SetTxn("stream", 3);
  (*first)->AddFiles({FakeAdd("batch-3.parquet")});
  ASSERT_TRUE((*first)->Commit("STREAMING UPDATE").ok());
  auto second = t.Begin();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->ReadTxnVersion("stream"), 3);
}

TEST(Transaction, WritesACheckpointAtTheInterval) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2),
                       MakeMetadata(TestSchema(), {}, {{"delta.checkpointInterval", "3"}}))
                  .ok());
  std::vector<bool> checkpointed;
  for (int i = 1; i <= 4; ++i) {
    auto c = t.Append({FakeAdd(fmt::format("f{}.parquet", i))});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    checkpointed.push_back(c->checkpointed);
  }
  EXPECT_EQ(checkpointed, (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(t.LogListing().count("00000000000000000003.checkpoint.parquet"), 1u);
  auto snap = (*t.Open())->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->num_files(), 4);
}

}  // namespace
}  // namespace deltacpp::testing

namespace deltacpp::testing {
namespace {

TEST(Transaction, WorksOnTheInMemoryStore) {
  auto store = MakeMemoryLogStore();
  const std::string root = "/mem/table";
  auto create = Transaction::StartCreate(root, store);
  ASSERT_TRUE(create.ok()) << create.status().ToString();
  (*create)->UpdateProtocol(MakeProtocol(1, 2));
  (*create)->UpdateMetadata(MakeMetadata(TestSchema()));
  ASSERT_TRUE((*create)->Commit("CREATE TABLE").ok());

  auto table = DeltaTable::Open(root, store);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok());
  auto first = Transaction::Start(*table, *snap);
  auto second = Transaction::Start(*table, *snap);
  ASSERT_TRUE(first.ok() && second.ok());
  (*first)->AddFiles({FakeAdd("one.parquet")});
  (*second)->ReadWholeTable();
  (*second)->AddFiles({FakeAdd("two.parquet")});
  ASSERT_TRUE((*first)->Commit("WRITE").ok());
  auto lost = (*second)->Commit("WRITE");
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(CodeName(lost.status()), "ConcurrentAppend") << lost.status().ToString();
  auto latest = (*table)->Latest();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version(), 1);
  EXPECT_EQ(LivePaths(**latest), std::vector<std::string>{"one.parquet"});
}

}  // namespace
}  // namespace deltacpp::testing
