// DeltaTable::Latest() on a long-lived handle: the cached snapshot brought forward by the new
// commits must equal a fresh load of the whole log.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "deltacpp/api.h"
#include "log_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AddLine;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::RemoveLine;
using testing::TempDir;
using testing::WriteCommit;

std::multiset<std::string> LivePaths(const Snapshot& s) {
  std::multiset<std::string> out;
  const auto& paths = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("path"));
  for (int64_t i = 0; i < paths.length(); ++i) out.insert(std::string(paths.GetView(i)));
  return out;
}

std::map<std::string, int64_t> LiveSizes(const Snapshot& s) {
  std::map<std::string, int64_t> out;
  const auto& paths = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("path"));
  const auto& sizes = static_cast<const arrow::Int64Array&>(*s.files()->GetColumnByName("size"));
  for (int64_t i = 0; i < paths.length(); ++i) out[std::string(paths.GetView(i))] = sizes.Value(i);
  return out;
}

std::shared_ptr<Snapshot> FreshLatest(const std::string& root) {
  auto table = DeltaTable::Open(root);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto snap = (*table)->SnapshotAt(std::nullopt);
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? *snap : nullptr;
}

void ExpectSameState(const Snapshot& incremental, const Snapshot& fresh) {
  EXPECT_EQ(incremental.version(), fresh.version());
  EXPECT_EQ(LivePaths(incremental), LivePaths(fresh));
  EXPECT_EQ(LiveSizes(incremental), LiveSizes(fresh));
  EXPECT_EQ(incremental.properties(), fresh.properties());
  EXPECT_EQ(incremental.metadata().schema_string, fresh.metadata().schema_string);
  EXPECT_EQ(incremental.protocol().min_writer_version, fresh.protocol().min_writer_version);
  EXPECT_EQ(incremental.timestamp_ms(), fresh.timestamp_ms());
  std::map<std::string, int64_t> a, b;
  for (const auto& [id, t] : incremental.state().txns) a[id] = t.version;
  for (const auto& [id, t] : fresh.state().txns) b[id] = t.version;
  EXPECT_EQ(a, b);
  std::map<std::string, std::string> da, db;
  for (const auto& [n, d] : incremental.domain_metadata()) da[n] = d.configuration;
  for (const auto& [n, d] : fresh.domain_metadata()) db[n] = d.configuration;
  EXPECT_EQ(da, db);
  ASSERT_TRUE(incremental.commit_info().has_value());
  ASSERT_TRUE(fresh.commit_info().has_value());
  EXPECT_EQ(incremental.commit_info()->operation, fresh.commit_info()->operation);
}

std::string CommitInfoLine(const std::string& operation) {
  return fmt::format(R"({{"commitInfo":{{"timestamp":{},"operation":"{}"}}}})",
                     testing::NowMs(), operation);
}

std::string DomainLine(const std::string& domain, const std::string& config, bool removed) {
  return fmt::format(
      R"({{"domainMetadata":{{"domain":"{}","configuration":"{}","removed":{}}}}})", domain,
      config, removed ? "true" : "false");
}

std::string TxnLine(const std::string& app_id, int64_t version) {
  return fmt::format(R"({{"txn":{{"appId":"{}","version":{}}}}})", app_id, version);
}

TEST(IncrementalLatest, NewCommitsAppliedToTheCachedSnapshotEqualAFreshLoad) {
  TempDir dir;
  const std::string root = dir.str();
  WriteCommit(root, 0,
              {CommitInfoLine("CREATE TABLE"), ProtocolLine(),
               MetadataLine(), AddLine("a.parquet"), AddLine("b.parquet")});
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto first = (*table)->Latest();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ((*first)->version(), 0);

  // Another writer commits: appends, a remove, app transactions, domains set and removed, a
  // property change, and a re-add of a live path with a new size.
  WriteCommit(root, 1, {CommitInfoLine("WRITE"), AddLine("c.parquet"), TxnLine("app", 3)});
  WriteCommit(root, 2, {CommitInfoLine("DELETE"), RemoveLine("a.parquet")});
  WriteCommit(root, 3,
              {CommitInfoLine("SET TBLPROPERTIES"),
               MetadataLine(R"({"name":"id","type":"long","nullable":true,"metadata":{}})", "[]",
                            R"({"delta.appendOnly":"false","owner":"x"})"),
               TxnLine("app", 4), TxnLine("other", 1)});
  // (Removing and re-adding one path without deletion vectors in one commit is not allowed by
  // the protocol; re-adding the live file alone is.)
  WriteCommit(root, 4, {CommitInfoLine("OPTIMIZE"), AddLine("b.parquet", 777)});
  auto second = (*table)->Latest();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto fresh = FreshLatest(root);
  ASSERT_TRUE(fresh);
  ExpectSameState(**second, *fresh);
  EXPECT_EQ(LivePaths(**second), (std::multiset<std::string>{"b.parquet", "c.parquet"}));
  EXPECT_EQ(LiveSizes(**second).at("b.parquet"), 777);
  EXPECT_EQ((*second)->txn_version("app"), 4);
  EXPECT_EQ((*second)->properties().at("owner"), "x");
  // The snapshot handed out before is untouched.
  EXPECT_EQ((*first)->version(), 0);
  EXPECT_EQ(LivePaths(**first), (std::multiset<std::string>{"a.parquet", "b.parquet"}));
}

TEST(IncrementalLatest, DomainsSetAndRemovedAfterTheCachedVersion) {
  TempDir dir;
  const std::string root = dir.str();
  WriteCommit(root, 0,
              {CommitInfoLine("CREATE TABLE"),
               R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["domainMetadata"]}})",
               MetadataLine(), DomainLine("app.keep", "k", false),
               DomainLine("app.drop", "d", false)});
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE((*table)->Latest().ok());
  WriteCommit(root, 1, {CommitInfoLine("WRITE"), DomainLine("app.drop", "d", true),
                        DomainLine("app.new", "n", false), AddLine("x.parquet")});
  auto latest = (*table)->Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  auto fresh = FreshLatest(root);
  ASSERT_TRUE(fresh);
  ExpectSameState(**latest, *fresh);
  EXPECT_EQ((*latest)->domain_metadata().count("app.drop"), 0u);
  EXPECT_EQ((*latest)->domain_metadata().at("app.new").configuration, "n");
  EXPECT_EQ((*latest)->domain_metadata().at("app.keep").configuration, "k");
}

TEST(IncrementalLatest, NothingNewReturnsTheCachedSnapshot) {
  TempDir dir;
  WriteCommit(dir.str(), 0,
              {CommitInfoLine("CREATE TABLE"), ProtocolLine(), MetadataLine(), AddLine("a.parquet")});
  auto table = DeltaTable::Open(dir.str());
  ASSERT_TRUE(table.ok());
  auto a = (*table)->Latest();
  auto b = (*table)->Latest();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
}

TEST(IncrementalLatest, AMalformedNewCommitIsReportedWithItsFile) {
  TempDir dir;
  const std::string root = dir.str();
  WriteCommit(root, 0,
              {CommitInfoLine("CREATE TABLE"), ProtocolLine(), MetadataLine(), AddLine("a.parquet")});
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE((*table)->Latest().ok());
  WriteCommit(root, 1, {R"({"add":{"path":"b.parquet",)"});
  auto latest = (*table)->Latest();
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(IsDeltaError(latest.status(), DeltaErrorCode::kCorruptLog))
      << latest.status().ToString();
  EXPECT_NE(latest.status().message().find("00000000000000000001.json"), std::string::npos)
      << latest.status().ToString();
}

TEST(IncrementalLatest, ANewUnsupportedReaderFeatureIsRefused) {
  TempDir dir;
  const std::string root = dir.str();
  WriteCommit(root, 0,
              {CommitInfoLine("CREATE TABLE"), ProtocolLine(), MetadataLine(), AddLine("a.parquet")});
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE((*table)->Latest().ok());
  WriteCommit(root, 1,
              {CommitInfoLine("ALTER"),
               R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["futureFeature"],"writerFeatures":["futureFeature"]}})"});
  auto latest = (*table)->Latest();
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(IsDeltaError(latest.status(), DeltaErrorCode::kUnsupportedFeature))
      << latest.status().ToString();
  EXPECT_NE(latest.status().message().find("futureFeature"), std::string::npos);
}

}  // namespace
}  // namespace deltacpp
