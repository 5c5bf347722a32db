// A snapshot's typed table configuration: parsed from the metadata of its own version, and a
// malformed property that readers depend on fails the load instead of misreading.
#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "log/checkpoint_writer.h"
#include "log_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::AddLine;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::TempDir;
using testing::WriteCommit;

const char* kIdField = R"({"name":"id","type":"long","nullable":true,"metadata":{}})";

TEST(SnapshotConfig, EachVersionHasItsOwnProperties) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  WriteCommit(root, 0, {ProtocolLine(), MetadataLine(kIdField, "[]", "{}"), AddLine("a.parquet")});
  WriteCommit(root, 1,
              {MetadataLine(kIdField, "[]",
                            R"({"delta.checkpointInterval":"3","delta.appendOnly":"true"})")});
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto v0 = (*table)->SnapshotAt(0);
  auto v1 = (*table)->SnapshotAt(1);
  ASSERT_TRUE(v0.ok() && v1.ok());
  EXPECT_EQ((*v0)->config().checkpoint_interval, 10);
  EXPECT_FALSE((*v0)->config().append_only);
  EXPECT_EQ((*v1)->config().checkpoint_interval, 3);
  EXPECT_TRUE((*v1)->config().append_only);
}

TEST(SnapshotConfig, MalformedInCommitTimestampEnablementIsCorruptLog) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  WriteCommit(root, 0,
              {ProtocolLine(),
               MetadataLine(kIdField, "[]",
                            R"({"delta.enableInCommitTimestamps":"true",)"
                            R"("delta.inCommitTimestampEnablementVersion":"soon"})")});
  auto table = DeltaTable::Open(root);
  arrow::Status st = table.ok() ? (*table)->Latest().status() : table.status();
  ASSERT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_NE(st.message().find(root), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("version 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("delta.inCommitTimestampEnablementVersion='soon'"),
            std::string::npos)
      << st.message();
}

TEST(SnapshotConfig, MalformedWriterPropertyStillReadsButIsListed) {
  TempDir dir;
  const std::string root = dir.str() + "/t";
  WriteCommit(root, 0,
              {ProtocolLine(), MetadataLine(kIdField, "[]", R"({"delta.logRetentionDuration":"forever"})"),
               AddLine("a.parquet")});
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->num_files(), 1);
  EXPECT_EQ((*snap)->config().invalid.count("delta.logRetentionDuration"), 1u);
  // Log cleanup depends on it: it refuses rather than use the default.
  auto st = internal::CleanupExpiredLogs(**snap, 0);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument)) << st.ToString();
  EXPECT_NE(st.message().find("delta.logRetentionDuration='forever'"), std::string::npos);
}

}  // namespace
}  // namespace deltacpp
