// The conflict matrix: a losing transaction and a winning commit made from the same snapshot.
#include <gtest/gtest.h>

#include <functional>

#include "protocol/action_json_writer.h"
#include "txn/txn_test_util.h"

namespace deltacpp::testing {
namespace {

using Step = std::function<void(Transaction&)>;

// A partitioned table (part = a | b) with files a1, a2 in part=a and b1 in part=b.
class ConflictTest : public ::testing::Test {
 protected:
  void SetUp() override { Create(MakeProtocol(1, 2), MakeMetadata(TestSchema(), {"part"})); }

  void Create(const Protocol& protocol, const Metadata& metadata) {
    auto c = t_.Create(protocol, metadata,
                       {FakeAdd("part=a/a1.parquet", {{"part", "a"}}),
                        FakeAdd("part=a/a2.parquet", {{"part", "a"}}),
                        FakeAdd("part=b/b1.parquet", {{"part", "b"}})});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
  }

  // Starts the loser on the current snapshot, commits the winner, then the loser. Returns the
  // loser's outcome; when it fails, checks that it left the log as the winner left it.
  arrow::Result<CommitResult> Race(const Step& loser_step, const Step& winner_step,
                                   TransactionOptions loser_options = {}) {
    ARROW_ASSIGN_OR_RAISE(auto loser, t_.Begin(loser_options));
    ARROW_ASSIGN_OR_RAISE(auto winner, t_.Begin());
    winner_step(*winner);
    auto won = winner->Commit("WINNER");
    EXPECT_TRUE(won.ok()) << won.status().ToString();
    loser_step(*loser);
    auto listing = t_.LogListing();
    auto lost = loser->Commit("LOSER");
    if (!lost.ok()) {
      EXPECT_EQ(t_.LogListing(), listing) << "a failed commit changed the log";
      EXPECT_NE(lost.status().message().find(t_.root()), std::string::npos)
          << lost.status().ToString();
    }
    return lost;
  }

  static AddFile A(const std::string& name) { return FakeAdd("part=a/" + name, {{"part", "a"}}); }
  static AddFile B(const std::string& name) { return FakeAdd("part=b/" + name, {{"part", "b"}}); }
  static RemoveFile RemoveA(const std::string& name, bool data_change = true) {
    return FakeRemove("part=a/" + name, {{"part", "a"}}, data_change);
  }

  static Step BlindAppendA() {
    return [](Transaction& t) { t.AddFiles({A("new-a.parquet")}); };
  }
  static Step BlindAppendB() {
    return [](Transaction& t) { t.AddFiles({B("new-b.parquet")}); };
  }
  // An UPDATE of part=a: reads a1, rewrites it.
  static Step RewriteA1() {
    return [](Transaction& t) {
      t.ReadPredicate("part = 'a'");
      t.ReadFiles({"part=a/a1.parquet"});
      t.RemoveFiles({RemoveA("a1.parquet")});
      t.AddFiles({A("a1-rewritten.parquet")});
    };
  }
  // A non-blind write into part=a that read a2 (its adds are not a blind append).
  static Step RewriteA2() {
    return [](Transaction& t) {
      t.ReadPredicate("part = 'a' AND id > 5");
      t.ReadFiles({"part=a/a2.parquet"});
      t.RemoveFiles({RemoveA("a2.parquet")});
      t.AddFiles({A("a2-rewritten.parquet")});
    };
  }
  static Step DeleteA1() {
    return [](Transaction& t) {
      t.ReadFiles({"part=a/a1.parquet"});
      t.RemoveFiles({RemoveA("a1.parquet")});
    };
  }
  // OPTIMIZE of part=a: dataChange=false throughout.
  static Step CompactA() {
    return [](Transaction& t) {
      t.ReadFiles({"part=a/a1.parquet", "part=a/a2.parquet"});
      t.RemoveFiles({RemoveA("a1.parquet", false), RemoveA("a2.parquet", false)});
      t.AddFiles({FakeAdd("part=a/compacted.parquet", {{"part", "a"}}, false)});
    };
  }

  std::string Code(const arrow::Result<CommitResult>& r) {
    return r.ok() ? std::string("ok") : CodeName(r.status());
  }

  TxnTestTable t_;
};

// --- blind append (loser) commits against everything on the file level ---

TEST_F(ConflictTest, BlindAppendVsBlindAppendCommits) {
  auto r = Race(BlindAppendA(), BlindAppendB());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(r->attempts, 2);
}

TEST_F(ConflictTest, BlindAppendVsRewriteCommits) {
  EXPECT_EQ(Code(Race(BlindAppendA(), RewriteA1())), "ok");
}

TEST_F(ConflictTest, BlindAppendVsDeleteCommits) {
  EXPECT_EQ(Code(Race(BlindAppendA(), DeleteA1())), "ok");
}

// --- read + rewrite, Serializable ---

TEST_F(ConflictTest, RewriteVsBlindAppendIntoReadPartitionIsConcurrentAppend) {
  auto r = Race(RewriteA1(), BlindAppendA());
  EXPECT_EQ(Code(r), "ConcurrentAppend");
  EXPECT_NE(r.status().message().find("part=a/new-a.parquet"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("part = 'a'"), std::string::npos);
  EXPECT_NE(r.status().message().find("version 1"), std::string::npos);
}

TEST_F(ConflictTest, RewriteVsBlindAppendElsewhereCommits) {
  auto r = Race(RewriteA1(), BlindAppendB());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = (*t_.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->num_files(), 4);  // a1-rewritten, a2, b1, new-b
}

TEST_F(ConflictTest, RewriteVsNonBlindAddsIntoReadPartitionIsConcurrentAppend) {
  EXPECT_EQ(Code(Race(RewriteA1(), RewriteA2())), "ConcurrentAppend");
}

TEST_F(ConflictTest, RewriteVsDeleteOfAFileItReadIsConcurrentDeleteRead) {
  auto r = Race(RewriteA1(), DeleteA1());
  EXPECT_EQ(Code(r), "ConcurrentDeleteRead");
  EXPECT_NE(r.status().message().find("part=a/a1.parquet"), std::string::npos);
}

// Another writer may spell the removed file as an absolute `file:` URI with escapes; it is
// still the file the loser read (and the one it removes).
TEST_F(ConflictTest, DeleteSpelledAsAbsoluteUriStillConflicts) {
  const std::string uri = "file://" + t_.root() + "/part%3Da/a1.parquet";
  auto delete_by_uri = [uri](Transaction& t) {
    t.RemoveFiles({FakeRemove(uri, {{"part", "a"}}, true)});
  };
  auto r = Race(RewriteA1(), delete_by_uri);
  EXPECT_EQ(Code(r), "ConcurrentDeleteRead") << r.status().ToString();
}

TEST_F(ConflictTest, DeleteVsDeleteOfTheSameUnreadFileIsConcurrentDeleteDelete) {
  auto remove_only = [](Transaction& t) { t.RemoveFiles({RemoveA("a1.parquet")}); };
  auto r = Race(remove_only, DeleteA1());
  EXPECT_EQ(Code(r), "ConcurrentDeleteDelete");
  EXPECT_NE(r.status().message().find("part=a/a1.parquet"), std::string::npos);
}

TEST_F(ConflictTest, ReadWholeTableVsAnyDeleteIsConcurrentDeleteRead) {
  auto whole = [](Transaction& t) {
    t.ReadWholeTable();
    t.AddFiles({B("summary.parquet")});
  };
  auto delete_b = [](Transaction& t) {
    t.RemoveFiles({FakeRemove("part=b/b1.parquet", {{"part", "b"}})});
  };
  EXPECT_EQ(Code(Race(whole, delete_b)), "ConcurrentDeleteRead");
}

TEST_F(ConflictTest, ReadWholeTableVsAppendAnywhereIsConcurrentAppend) {
  auto whole = [](Transaction& t) {
    t.ReadWholeTable();
    t.AddFiles({A("summary.parquet")});
  };
  EXPECT_EQ(Code(Race(whole, BlindAppendB())), "ConcurrentAppend");
}

// --- read + rewrite, WriteSerializable ---

TEST_F(ConflictTest, WriteSerializableRewriteVsBlindAppendCommits) {
  TransactionOptions ws;
  ws.isolation = IsolationLevel::kWriteSerializable;
  EXPECT_EQ(Code(Race(RewriteA1(), BlindAppendA(), ws)), "ok");
}

TEST_F(ConflictTest, WriteSerializableRewriteVsNonBlindAddsIsConcurrentAppend) {
  TransactionOptions ws;
  ws.isolation = IsolationLevel::kWriteSerializable;
  EXPECT_EQ(Code(Race(RewriteA1(), RewriteA2(), ws)), "ConcurrentAppend");
}

TEST_F(ConflictTest, WriteSerializableRewriteVsDeleteIsConcurrentDeleteRead) {
  TransactionOptions ws;
  ws.isolation = IsolationLevel::kWriteSerializable;
  EXPECT_EQ(Code(Race(RewriteA1(), DeleteA1(), ws)), "ConcurrentDeleteRead");
}

// --- no-data-change rewrite (OPTIMIZE), SnapshotIsolation ---

TEST_F(ConflictTest, CompactionVsBlindAppendCommits) {
  auto r = Race(CompactA(), BlindAppendA());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto ci = CommitInfoObject(t_.CommitLines(r->version)[0]);
  EXPECT_STREQ(ci["isolationLevel"].GetString(), "SnapshotIsolation");
}

TEST_F(ConflictTest, CompactionVsNonBlindAddsCommits) {
  auto rewrite_b = [](Transaction& t) {
    t.ReadPredicate("part = 'b'");
    t.ReadFiles({"part=b/b1.parquet"});
    t.AddFiles({A("from-b.parquet")});
  };
  EXPECT_EQ(Code(Race(CompactA(), rewrite_b)), "ok");
}

TEST_F(ConflictTest, CompactionVsDeleteOfACompactedFileIsConcurrentDeleteRead) {
  EXPECT_EQ(Code(Race(CompactA(), DeleteA1())), "ConcurrentDeleteRead");
}

TEST_F(ConflictTest, RewriteVsCompactionOfAFileItReadIsConcurrentDeleteRead) {
  EXPECT_EQ(Code(Race(RewriteA1(), CompactA())), "ConcurrentDeleteRead");
}

// --- metadata and protocol ---

TEST_F(ConflictTest, BothChangingMetadataIsMetadataChanged) {
  auto set_prop = [](const std::string& value) {
    return [value](Transaction& t) {
      t.UpdateMetadata(MakeMetadata(TestSchema(), {"part"}, {{"owner", value}}));
    };
  };
  EXPECT_EQ(Code(Race(set_prop("loser"), set_prop("winner"))), "MetadataChanged");
}

TEST_F(ConflictTest, AppendVsNonAllowListedMetadataChangeIsMetadataChanged) {
  auto set_prop = [](Transaction& t) {
    t.UpdateMetadata(MakeMetadata(TestSchema(), {"part"}, {{"delta.appendOnly", "true"}}));
  };
  auto r = Race(BlindAppendA(), set_prop);
  EXPECT_EQ(Code(r), "MetadataChanged");
  EXPECT_NE(r.status().message().find("delta.appendOnly"), std::string::npos);
}

TEST_F(ConflictTest, AppendVsSchemaChangeIsMetadataChanged) {
  auto add_column = [](Transaction& t) {
    auto schema = TestSchema();
    schema = *schema->AddField(3, arrow::field("extra", arrow::int32()));
    t.UpdateMetadata(MakeMetadata(schema, {"part"}));
  };
  EXPECT_EQ(Code(Race(BlindAppendA(), add_column)), "MetadataChanged");
}

TEST_F(ConflictTest, AppendAdoptsAnAllowListedMetadataChange) {
  auto enable_dvs = [](Transaction& t) {
    t.UpdateMetadata(
        MakeMetadata(TestSchema(), {"part"}, {{"delta.enableDeletionVectors", "true"}}));
  };
  auto r = Race(BlindAppendA(), enable_dvs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = (*t_.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->properties().at("delta.enableDeletionVectors"), "true");
  EXPECT_EQ((*snap)->num_files(), 4);
}

TEST_F(ConflictTest, AppendAdoptsConcurrentlyEnabledInCommitTimestamps) {
  auto enable_ict = [](Transaction& t) {
    t.UpdateMetadata(
        MakeMetadata(TestSchema(), {"part"}, {{"delta.enableInCommitTimestamps", "true"}}));
  };
  auto r = Race(BlindAppendA(), enable_ict);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto winner = CommitInfoObject(t_.CommitLines(1)[0]);
  auto mine = CommitInfoObject(t_.CommitLines(2)[0]);
  ASSERT_TRUE(winner.HasMember("inCommitTimestamp"));
  ASSERT_TRUE(mine.HasMember("inCommitTimestamp"));
  EXPECT_GT(mine["inCommitTimestamp"].GetInt64(), winner["inCommitTimestamp"].GetInt64());
}

TEST_F(ConflictTest, BothChangingProtocolIsProtocolChanged) {
  auto upgrade = [](Transaction& t) { t.UpdateProtocol(MakeProtocol(1, 3)); };
  EXPECT_EQ(Code(Race(upgrade, upgrade)), "ProtocolChanged");
}

TEST_F(ConflictTest, WinnerProtocolWithAnUnsupportedFeatureIsRefused) {
  auto loser = t_.Begin();
  ASSERT_TRUE(loser.ok());
  (*loser)->AddFiles({A("mine.parquet")});
  const auto protocol = MakeProtocol(1, 7, {}, {"appendOnly", "invariants", "identityColumns"});
  ASSERT_TRUE(t_.WriteRawCommit(1, {internal::ProtocolToJson(protocol).ValueOrDie()})
                  .ok());
  auto listing = t_.LogListing();
  auto r = (*loser)->Commit("WRITE");
  EXPECT_EQ(Code(r), "UnsupportedFeature");
  EXPECT_NE(r.status().message().find("identityColumns"), std::string::npos);
  EXPECT_EQ(t_.LogListing(), listing);
}

TEST_F(ConflictTest, WinnerRemovingAFeatureIsProtocolChanged) {
  auto loser = t_.Begin();
  ASSERT_TRUE(loser.ok());
  (*loser)->AddFiles({A("mine.parquet")});
  ASSERT_TRUE(
      t_.WriteRawCommit(1, {internal::ProtocolToJson(MakeProtocol(1, 1)).ValueOrDie()}).ok());
  EXPECT_EQ(Code((*loser)->Commit("WRITE")), "ProtocolChanged");
}

TEST(ConcurrentCreate, TwoCreatorsOfVersionZeroIsProtocolChanged) {
  TxnTestTable t;
  auto first = Transaction::StartCreate(t.root(), t.store());
  auto second = Transaction::StartCreate(t.root(), t.store());
  ASSERT_TRUE(first.ok() && second.ok());
  for (auto* txn : {&*first, &*second}) {
    (*txn)->UpdateProtocol(MakeProtocol(1, 2));
    (*txn)->UpdateMetadata(MakeMetadata(TestSchema()));
  }
  ASSERT_TRUE((*first)->Commit("CREATE TABLE").ok());
  auto listing = t.LogListing();
  auto r = (*second)->Commit("CREATE TABLE");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(CodeName(r.status()), "ProtocolChanged") << r.status().ToString();
  EXPECT_EQ(t.LogListing(), listing);
}

// --- domains and application transactions ---

TEST(DomainConflict, SameDomainIsConcurrentTransaction) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 7, {}, {"domainMetadata"}), MakeMetadata(TestSchema())).ok());
  auto loser = t.Begin();
  auto winner = t.Begin();
  ASSERT_TRUE(loser.ok() && winner.ok());
  (*winner)->SetDomainMetadata(DomainMetadata{"app.cfg", "{\"v\":1}", false});
  ASSERT_TRUE((*winner)->Commit("SET").ok());
  (*loser)->SetDomainMetadata(DomainMetadata{"app.cfg", "{\"v\":2}", false});
  auto listing = t.LogListing();
  auto r = (*loser)->Commit("SET");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(CodeName(r.status()), "ConcurrentTransaction");
  EXPECT_NE(r.status().message().find("app.cfg"), std::string::npos);
  EXPECT_EQ(t.LogListing(), listing);

  // Different domains do not conflict.
  auto a = t.Begin();
  auto b = t.Begin();
  ASSERT_TRUE(a.ok() && b.ok());
  (*a)->SetDomainMetadata(DomainMetadata{"app.one", "{}", false});
  (*b)->SetDomainMetadata(DomainMetadata{"app.two", "{}", false});
  ASSERT_TRUE((*a)->Commit("SET").ok());
  EXPECT_TRUE((*b)->Commit("SET").ok());
}

TEST_F(ConflictTest, ReadAppIdVsConcurrentTxnOfThatAppIsConcurrentTransaction) {
  auto loser = [](Transaction& t) {
    EXPECT_EQ(t.ReadTxnVersion("stream-1"), std::nullopt);
    t.SetTxn("stream-1", 1);
    t.AddFiles({A("batch-1-mine.parquet")});
  };
  auto winner = [](Transaction& t) {
    t.SetTxn("stream-1", 1);
    t.AddFiles({A("batch-1-theirs.parquet")});
  };
  auto r = Race(loser, winner);
  EXPECT_EQ(Code(r), "ConcurrentTransaction");
  EXPECT_NE(r.status().message().find("stream-1"), std::string::npos);
}

TEST_F(ConflictTest, TxnOfAnotherAppDoesNotConflict) {
  auto loser = [](Transaction& t) {
    t.ReadTxnVersion("stream-1");
    t.SetTxn("stream-1", 1);
    t.AddFiles({A("mine.parquet")});
  };
  auto winner = [](Transaction& t) {
    t.SetTxn("stream-2", 1);
    t.AddFiles({A("theirs.parquet")});
  };
  auto r = Race(loser, winner);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto snap = (*t_.Open())->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->txn_version("stream-1"), 1);
  EXPECT_EQ((*snap)->txn_version("stream-2"), 1);
}

// --- unpartitioned tables: any new file matches a read ---

TEST(UnpartitionedConflict, ReadPredicateVsAnyAppendIsConcurrentAppend) {
  TxnTestTable t;
  ASSERT_TRUE(t.Create(MakeProtocol(1, 2), MakeMetadata(TestSchema()), {FakeAdd("f1.parquet")}).ok());
  auto loser = t.Begin();
  ASSERT_TRUE(loser.ok());
  (*loser)->ReadPredicate("id > 100");
  (*loser)->ReadFiles({"f1.parquet"});
  (*loser)->RemoveFiles({FakeRemove("f1.parquet")});
  (*loser)->AddFiles({FakeAdd("f1-rewritten.parquet")});
  ASSERT_TRUE(t.Append({FakeAdd("f2.parquet")}).ok());
  auto listing = t.LogListing();
  auto r = (*loser)->Commit("DELETE");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(CodeName(r.status()), "ConcurrentAppend") << r.status().ToString();
  EXPECT_EQ(t.LogListing(), listing);
}

}  // namespace
}  // namespace deltacpp::testing
