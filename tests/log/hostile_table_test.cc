// Damaged and hostile tables: every case of the catalogue (tests/support/hostile_tables.h) must
// fail with its typed error naming the table, the version and the file, quickly; and the
// legitimate neighbours of those cases must still read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>

#include "deltacpp/api.h"
#include "log/log_file_name.h"
#include "protocol/deletion_vector.h"
#include "support/fixture_writer.h"
#include "support/hostile_tables.h"
#include "support/temp_dir.h"

namespace deltacpp::testing {
namespace {

using ::testing::HasSubstr;

std::string Substitute(std::string text, const std::string& root) {
  for (size_t at = text.find("{root}"); at != std::string::npos; at = text.find("{root}", at)) {
    text.replace(at, 6, root);
    at += root.size();
  }
  return text;
}

// Reads the table whole on another thread; a read still blocked after 30 s ends the run, since
// a blocked thread cannot be cancelled.
arrow::Status ReadWithDeadline(const std::string& root) {
  auto read = std::async(std::launch::async, [root] { return ReadWholeTable(root); });
  if (read.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    std::cerr << "reading " << root << " blocked for 30 s\n";
    std::_Exit(1);
  }
  return read.get();
}

arrow::Result<int64_t> CountRows(const std::string& root) {
  ARROW_ASSIGN_OR_RAISE(auto table, DeltaTable::Open(root));
  ARROW_ASSIGN_OR_RAISE(auto snapshot, table->Latest());
  ARROW_ASSIGN_OR_RAISE(auto scan, snapshot->NewScan().Build());
  ARROW_ASSIGN_OR_RAISE(auto rows, scan->ToTable());
  return rows->num_rows();
}

class HostileTableTest : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileTableTest, ReadFailsWithItsKindNamingTableVersionAndFile) {
  const HostileCase& c = GetParam();
  TempDir dir;
  const std::string root = dir.str();
  ASSERT_TRUE(c.build(root).ok()) << c.name;
  const auto start = std::chrono::steady_clock::now();
  const arrow::Status st = ReadWithDeadline(root);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << c.damage;
  ASSERT_FALSE(st.ok()) << c.damage << ": the read succeeded";
  if (c.kind) {
    EXPECT_TRUE(IsDeltaError(st, *c.kind))
        << c.damage << ": expected " << DeltaErrorCodeName(*c.kind) << ", got " << st.ToString();
  } else {
    EXPECT_FALSE(GetDeltaErrorCode(st).has_value()) << st.ToString();
    EXPECT_TRUE(st.IsIOError()) << st.ToString();
  }
  for (const auto& text : c.expected) {
    EXPECT_THAT(st.message(), HasSubstr(Substitute(text, root))) << c.damage;
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, HostileTableTest, ::testing::ValuesIn(HostileCases()),
                         [](const ::testing::TestParamInfo<HostileCase>& info) {
                           return info.param.name;
                         });

TEST(HostileTableCache, ANextCommitThatIsAFifoIsAnErrorForAnOpenTable) {
  // An open table looks for the commits after its cached snapshot one by one; a FIFO under the
  // next commit's name must not look like the end of the log.
  TempDir dir;
  const std::string root = dir.str();
  ASSERT_TRUE(BuildHostileBase(root).ok());
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto first = (*table)->Latest();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ((*first)->version(), 1);
  const std::string fifo = root + "/_delta_log/00000000000000000002.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto second = (*table)->Latest();
  ASSERT_FALSE(second.ok()) << "version " << (*second)->version();
  EXPECT_TRUE(IsDeltaError(second.status(), DeltaErrorCode::kCorruptLog)) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr(fifo));
}

TEST(HostileTableNeighbours, TheBaseTableReads) {
  TempDir dir;
  ASSERT_TRUE(BuildHostileBase(dir.str()).ok());
  auto rows = CountRows(dir.str());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 3);
}

TEST(HostileTableNeighbours, AbsolutePathsAndFileUrisInsideTheRootRead) {
  TempDir dir;
  const std::string root = dir.str();
  ASSERT_TRUE(BuildHostileBase(root).ok());
  const std::string file = HostileDataFile(root);
  std::filesystem::copy_file(root + "/" + file, root + "/p=a/copy 1.parquet");
  std::filesystem::copy_file(root + "/" + file, root + "/p=a/copy2.parquet");
  std::ofstream(root + "/_delta_log/00000000000000000002.json")
      << R"({"add":{"path":"file://)" << root
      << R"(/p=a/copy%201.parquet","partitionValues":{"p":"a"},"size":1,"modificationTime":1,)"
      << R"("dataChange":true}})" << "\n"
      << R"({"add":{"path":")" << root
      << R"(/x/../p=a/copy2.parquet","partitionValues":{"p":"a"},"size":1,"modificationTime":1,)"
      << R"("dataChange":true}})" << "\n";
  auto rows = CountRows(root);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 9);
}

TEST(HostileTableNeighbours, ReplacingAFileWithADeletionVectorInOneCommitReads) {
  // The protocol allows one path in an add and a remove of one commit when their deletion
  // vectors differ.
  TempDir dir;
  const std::string root = dir.str();
  ASSERT_TRUE(BuildHostileBase(root).ok());
  const std::string file = HostileDataFile(root);
  auto dv = internal::MakeInlineDeletionVector({0});
  ASSERT_TRUE(dv.ok());
  std::ofstream(root + "/_delta_log/00000000000000000002.json")
      << R"({"remove":{"path":")" << file << R"(","deletionTimestamp":1,"dataChange":true}})"
      << "\n"
      << R"({"add":{"path":")" << file
      << R"(","partitionValues":{"p":"a"},"size":1,"modificationTime":1,"dataChange":true,)"
      << R"("deletionVector":{"storageType":"i","pathOrInlineDv":")" << dv->path_or_inline_dv
      << R"(","sizeInBytes":)" << dv->size_in_bytes << R"(,"cardinality":1}}})" << "\n";
  auto rows = CountRows(root);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 2);
}

TEST(HostileTableNeighbours, ATruncatedCheckpointIsReplayedAroundWhenTheCommitsAreThere) {
  TempDir dir;
  const std::string root = dir.str();
  ASSERT_TRUE(BuildHostileBaseWithCheckpoint(root).ok());
  const std::string checkpoint = root + "/_delta_log/00000000000000000001.checkpoint.parquet";
  std::filesystem::resize_file(checkpoint, std::filesystem::file_size(checkpoint) / 2);
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snapshot = (*table)->Latest();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->version(), 1);
  auto rows = CountRows(root);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 3);
}

TEST(HostileTableNeighbours, AnUnreadableCheckpointFallsBackToAnOlderOne) {
  // Checkpoints at versions 1 and 2; the newer one is overwritten with garbage and commit 0 is
  // gone, so only checkpoint 1 plus commit 2 can rebuild version 2.
  TempDir dir;
  const std::string root = dir.str();
  FixtureTableWriter w(root);
  ASSERT_TRUE(WriteHostileBase(w).ok());
  ASSERT_TRUE(w.WriteCheckpoint().ok());
  arrow::Int64Builder ids;
  ASSERT_TRUE(ids.AppendValues({4, 5}).ok());
  auto data = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}),
                                 {*ids.Finish()});
  ASSERT_TRUE(w.Append({FixtureFile(data, {{"p", "b"}})}).ok());
  ASSERT_TRUE(w.WriteCheckpoint().ok());
  std::ofstream(root + "/_delta_log/00000000000000000002.checkpoint.parquet", std::ios::trunc)
      << "not parquet";
  std::filesystem::remove(root + "/_delta_log/00000000000000000000.json");
  auto rows = CountRows(root);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 5);
}

TEST(HostileTableNeighbours, ALastCheckpointWithOutOfRangeNumbersIsOnlyAnUnusableHint) {
  // parts 4294967297 would be 1 as a 32-bit int; the hint is dropped, the listing used.
  TempDir dir;
  const std::string root = dir.str();
  ASSERT_TRUE(BuildHostileBaseWithCheckpoint(root).ok());
  for (const char* hint : {R"({"version":1,"size":3,"parts":4294967297})",
                           R"({"version":1,"size":-3})", R"({"version":1.5})",
                           R"({"version":99999999999999999999})"}) {
    std::ofstream(root + "/_delta_log/_last_checkpoint", std::ios::trunc) << hint;
    auto table = DeltaTable::Open(root);
    ASSERT_TRUE(table.ok()) << hint << ": " << table.status().ToString();
    auto snapshot = (*table)->Latest();
    ASSERT_TRUE(snapshot.ok()) << hint << ": " << snapshot.status().ToString();
    EXPECT_EQ((*snapshot)->version(), 1);
    EXPECT_EQ((*snapshot)->state().checkpoint_version, std::optional<int64_t>(1)) << hint;
  }
}

TEST(HostileTableNeighbours, MultiPartNumbersBeyondIntAreNotCheckpointNames) {
  // 4294967297 would wrap to 1 as a 32-bit int and pass for part 1 of 1.
  EXPECT_FALSE(internal::ParseLogFileName(
                   "00000000000000000001.checkpoint.4294967297.4294967297.parquet")
                   .has_value());
  EXPECT_FALSE(
      internal::ParseLogFileName("00000000000000000001.checkpoint.0000000002.0000000001.parquet")
          .has_value());
  auto ok = internal::ParseLogFileName(
      "00000000000000000001.checkpoint.0000000001.0000000002.parquet");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->part, 1);
  EXPECT_EQ(ok->num_parts, 2);
}

}  // namespace
}  // namespace deltacpp::testing
