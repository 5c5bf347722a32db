#include <gtest/gtest.h>

#include <set>

#include "deltacpp/api.h"
#include "log/log_file_name.h"
#include "log_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AddLine;
using testing::Load;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::RemoveLine;
using testing::TempDir;
using testing::WriteCommit;

std::set<std::string> LivePaths(const Snapshot& s) {
  std::set<std::string> out;
  const auto& paths = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("path"));
  for (int64_t i = 0; i < paths.length(); ++i) out.insert(std::string(paths.GetView(i)));
  return out;
}

TEST(LogFileName, RecognisesEveryLogFileKind) {
  using internal::LogFileKind;
  using internal::ParseLogFileName;
  auto c = ParseLogFileName("00000000000000000007.json");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, LogFileKind::kCommit);
  EXPECT_EQ(c->version, 7);
  auto cp = ParseLogFileName("00000000000000000010.checkpoint.parquet");
  ASSERT_TRUE(cp);
  EXPECT_EQ(cp->kind, LogFileKind::kClassicCheckpoint);
  auto mp = ParseLogFileName("00000000000000000010.checkpoint.0000000002.0000000003.parquet");
  ASSERT_TRUE(mp);
  EXPECT_EQ(mp->kind, LogFileKind::kMultiPartCheckpoint);
  EXPECT_EQ(mp->part, 2);
  EXPECT_EQ(mp->num_parts, 3);
  auto v2 = ParseLogFileName("00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->kind, LogFileKind::kUuidCheckpoint);
  EXPECT_TRUE(v2->is_json);
  auto comp = ParseLogFileName("00000000000000000001.00000000000000000004.compacted.json");
  ASSERT_TRUE(comp);
  EXPECT_EQ(comp->kind, LogFileKind::kCompaction);
  EXPECT_EQ(comp->end_version, 4);
  EXPECT_FALSE(ParseLogFileName("_last_checkpoint"));
  EXPECT_FALSE(ParseLogFileName(".00000000000000000000.json.crc"));
  EXPECT_FALSE(ParseLogFileName("0000000000000000007.json"));  // 19 digits
  EXPECT_FALSE(ParseLogFileName("00000000000000000007.json.tmp"));
}

TEST(Replay, LaterActionsWinAndRemovesEndFiles) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine(), AddLine("a.parquet"), AddLine("b.parquet")});
  WriteCommit(dir.str(), 1, {RemoveLine("a.parquet"), AddLine("c.parquet")});
  WriteCommit(dir.str(), 2, {AddLine("a.parquet", 7)});
  auto v1 = Load(dir.str(), 1);
  ASSERT_TRUE(v1);
  EXPECT_EQ(LivePaths(*v1), (std::set<std::string>{"b.parquet", "c.parquet"}));
  auto v2 = Load(dir.str());
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->version(), 2);
  EXPECT_EQ(LivePaths(*v2), (std::set<std::string>{"a.parquet", "b.parquet", "c.parquet"}));
  EXPECT_EQ(v2->total_size_bytes(), 7 + 100 + 100);
  auto v0 = Load(dir.str(), 0);
  ASSERT_TRUE(v0);
  EXPECT_EQ(LivePaths(*v0), (std::set<std::string>{"a.parquet", "b.parquet"}));
}

TEST(Replay, FilesAreKeyedByDecodedPathAndDeletionVector) {
  TempDir dir;
  const std::string dv1 =
      R"(,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2})";
  const std::string dv2 =
      R"(,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":50,"sizeInBytes":36,"cardinality":3})";
  WriteCommit(dir.str(), 0, {ProtocolLine(3, 7), MetadataLine(), AddLine("x%20y.parquet")});
  // Same file spelled decoded: removing it ends the encoded add.
  WriteCommit(dir.str(), 1, {RemoveLine("x y.parquet"), AddLine("f.parquet", 1, dv1)});
  // A DV update: remove (f, dv1), add (f, dv2) in one commit.
  WriteCommit(dir.str(), 2, {RemoveLine("f.parquet", dv1), AddLine("f.parquet", 1, dv2)});
  auto snap = Load(dir.str());
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->num_files(), 1);
  auto dv = std::static_pointer_cast<arrow::StructArray>(snap->files()->GetColumnByName("deletionVector"));
  auto card = std::static_pointer_cast<arrow::Int64Array>(dv->GetFieldByName("cardinality"));
  EXPECT_EQ(card->Value(0), 3);
}

TEST(Replay, LatestTxnPerAppAndLiveDomainsOnly) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine(),
                             R"({"txn":{"appId":"app-1","version":3}})",
                             R"({"domainMetadata":{"domain":"d1","configuration":"{\"x\":1}","removed":false}})",
                             R"({"domainMetadata":{"domain":"d2","configuration":"{}","removed":false}})"});
  WriteCommit(dir.str(), 1, {R"({"txn":{"appId":"app-1","version":9,"lastUpdated":5}})",
                             R"({"txn":{"appId":"app-2","version":1}})",
                             R"({"domainMetadata":{"domain":"d2","configuration":"{}","removed":true}})"});
  auto snap = Load(dir.str());
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->txn_version("app-1"), 9);
  EXPECT_EQ(snap->txn_version("app-2"), 1);
  EXPECT_FALSE(snap->txn_version("app-3").has_value());
  ASSERT_EQ(snap->domain_metadata().size(), 1u);
  EXPECT_EQ(snap->domain_metadata().begin()->first, "d1");
}

TEST(Replay, NewestMetadataAndProtocolWinAndUnknownActionsAreIgnored) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine()});
  WriteCommit(dir.str(), 1,
              {R"({"someFutureAction":{"a":1}})",
               MetadataLine(R"({"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}})",
                            "[]", R"({"delta.appendOnly":"true"})"),
               R"({"commitInfo":{"timestamp":12,"operation":"ADD COLUMNS","unknownField":[1,2]}})"});
  auto snap = Load(dir.str());
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->schema()->num_fields(), 2);
  EXPECT_EQ(snap->properties().at("delta.appendOnly"), "true");
  ASSERT_TRUE(snap->commit_info());
  EXPECT_EQ(snap->commit_info()->operation, "ADD COLUMNS");
  auto v0 = Load(dir.str(), 0);
  ASSERT_TRUE(v0);
  EXPECT_EQ(v0->schema()->num_fields(), 1);
}

TEST(SnapshotErrors, GapInVersionsIsCorruptLog) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine()});
  WriteCommit(dir.str(), 2, {AddLine("a.parquet")});
  auto table = DeltaTable::Open(dir.str());
  ASSERT_TRUE(table.ok());
  auto snap = (*table)->Latest();
  ASSERT_FALSE(snap.ok());
  EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kCorruptLog)) << snap.status().ToString();
  EXPECT_NE(snap.status().message().find("commit 1 is missing"), std::string::npos);
}

TEST(SnapshotErrors, MissingProtocolOrMetadataIsCorruptLog) {
  TempDir a, b;
  WriteCommit(a.str(), 0, {MetadataLine(), AddLine("a.parquet")});
  WriteCommit(b.str(), 0, {ProtocolLine(), AddLine("a.parquet")});
  for (auto* d : {&a, &b}) {
    auto snap = (*DeltaTable::Open(d->str()))->Latest();
    ASSERT_FALSE(snap.ok());
    EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kCorruptLog)) << snap.status().ToString();
  }
}

TEST(SnapshotErrors, UnknownReaderFeatureIsNamed) {
  TempDir dir;
  WriteCommit(dir.str(), 0,
              {R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","fancyNewThing"],"writerFeatures":["deletionVectors","fancyNewThing"]}})",
               MetadataLine()});
  auto snap = (*DeltaTable::Open(dir.str()))->Latest();
  ASSERT_FALSE(snap.ok());
  EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kUnsupportedFeature));
  EXPECT_NE(snap.status().message().find("fancyNewThing"), std::string::npos);
  EXPECT_NE(snap.status().message().find(dir.str()), std::string::npos);
}

TEST(SnapshotErrors, ReaderVersionAboveThreeIsUnsupported) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(4, 7), MetadataLine()});
  auto snap = (*DeltaTable::Open(dir.str()))->Latest();
  EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kUnsupportedFeature));
}

TEST(SnapshotErrors, MalformedJsonNamesFileAndLine) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine(), R"({"add":{"path":"a.parquet",)"});
  auto snap = (*DeltaTable::Open(dir.str()))->Latest();
  ASSERT_FALSE(snap.ok());
  EXPECT_TRUE(IsDeltaError(snap.status(), DeltaErrorCode::kCorruptLog));
  EXPECT_NE(snap.status().message().find("00000000000000000000.json line 3"), std::string::npos)
      << snap.status().message();
}

TEST(SnapshotErrors, VersionOutOfRangeAndMissingTable) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine()});
  auto table = *DeltaTable::Open(dir.str());
  EXPECT_TRUE(IsDeltaError(table->SnapshotAt(5).status(), DeltaErrorCode::kVersionNotFound));
  TempDir empty;
  EXPECT_TRUE(IsDeltaError(DeltaTable::Open(empty.str()).status(), DeltaErrorCode::kTableNotFound));
  EXPECT_TRUE(IsDeltaError(DeltaTable::Open("s3://bucket/table").status(),
                           DeltaErrorCode::kUnsupportedStorage));
}

TEST(SnapshotErrors, CorruptLastCheckpointHintFallsBackToListing) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine(), AddLine("a.parquet")});
  WriteCommit(dir.str(), 1, {AddLine("b.parquet")});
  {
    std::ofstream hint(dir.str() + "/_delta_log/_last_checkpoint");
    hint << R"({"version":1,"si)";  // torn write
  }
  auto snap = Load(dir.str());
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->num_files(), 2);
  {
    std::ofstream hint(dir.str() + "/_delta_log/_last_checkpoint");
    hint << R"({"version":1,"size":3})";  // points at a checkpoint that does not exist
  }
  snap = Load(dir.str());
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->num_files(), 2);
}

}  // namespace
}  // namespace deltacpp
