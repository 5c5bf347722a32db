// A Delta table streamed into another: the initial snapshot then each new commit once, the
// starting options, rate limits over snapshot and commits, change commits refused, skipped or
// ignored as delta-spark does, the change data feed equal to a batch read of the same range.
#include <gtest/gtest.h>

#include <thread>

#include "deltacpp/ops/delete.h"
#include "deltacpp/ops/update.h"
#include "deltacpp/stream/delta_source.h"
#include "deltacpp/table_changes.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "stream/stream_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::EachOnce;
using testing::IdCounts;
using testing::TempDir;

struct Tables {
  TempDir dir;
  std::string source = (dir.path() / "source").string();
  std::string sink = (dir.path() / "sink").string();
  std::string checkpoint = (dir.path() / "checkpoint").string();
};

// Appends ids [first, first + n) to `table` in one commit.
void Append(const std::string& table, int64_t first, int64_t n,
            std::map<std::string, std::string> properties = {}) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (int64_t i = first; i < first + n; ++i) {
    ASSERT_TRUE(ids.Append(i).ok());
    ASSERT_TRUE(names.Append("n" + std::to_string(i)).ok());
  }
  WriteOptions options;
  options.properties = std::move(properties);
  auto t = arrow::Table::Make(testing::IdNameSchema(), {*ids.Finish(), *names.Finish()});
  auto w = WriteTable(table, t, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
}

arrow::Result<StreamRunResult> Stream(const Tables& t, DeltaSourceOptions source,
                                      std::vector<BatchReport>* reports = nullptr,
                                      Trigger trigger = Trigger::AvailableNow()) {
  source.location = t.source;
  DeltaSinkOptions sink;
  sink.location = t.sink;
  return StreamQueryBuilder()
      .Source(MakeDeltaSource(std::move(source)))
      .Sink(sink)
      .Checkpoint(t.checkpoint)
      .Trigger(trigger)
      .OnBatch([reports](const BatchReport& b) {
        if (reports) reports->push_back(b);
      })
      .Run();
}

TEST(DeltaStream, SnapshotThenEachNewCommitOnce) {
  Tables t;
  Append(t.source, 0, 10);
  Append(t.source, 10, 10);
  auto first = Stream(t, {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 20)) << "the current rows first";
  Append(t.source, 20, 5);
  Append(t.source, 25, 5);
  std::vector<BatchReport> reports;
  auto second = Stream(t, {}, &reports);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->rows, 10);
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 30));
  ASSERT_TRUE(Stream(t, {}).ok());
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 30)) << "nothing new, nothing written";
}

TEST(DeltaStream, StartingVersionTimestampAndLatest) {
  Tables t;
  Append(t.source, 0, 5);   // v0
  Append(t.source, 5, 5);   // v1
  Append(t.source, 10, 5);  // v2
  DeltaSourceOptions from_one;
  from_one.starting_version = 1;
  ASSERT_TRUE(Stream(t, from_one).ok());
  EXPECT_EQ(IdCounts(t.sink), EachOnce(5, 10)) << "commits 1 and 2, no snapshot";

  Tables latest;
  Append(latest.source, 0, 5);
  DeltaSourceOptions only_new;
  only_new.starting_latest = true;
  ASSERT_TRUE(Stream(latest, only_new).ok());
  EXPECT_FALSE(fs::exists(latest.sink)) << "nothing after the start";
  Append(latest.source, 5, 5);
  ASSERT_TRUE(Stream(latest, only_new).ok());
  EXPECT_EQ(IdCounts(latest.sink), EachOnce(5, 5));

  Tables by_time;
  Append(by_time.source, 0, 5);
  auto table = DeltaTable::Open(by_time.source);
  ASSERT_TRUE(table.ok());
  const int64_t v0_ms = (*(*table)->Latest())->timestamp_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Append(by_time.source, 5, 5);
  DeltaSourceOptions after;
  after.starting_timestamp_ms = v0_ms + 1;
  ASSERT_TRUE(Stream(by_time, after).ok());
  EXPECT_EQ(IdCounts(by_time.sink), EachOnce(5, 5)) << "the first commit at or after the time";

  DeltaSourceOptions both;
  both.starting_version = 0;
  both.starting_latest = true;
  Tables bad;
  Append(bad.source, 0, 1);
  auto refused = Stream(bad, both);
  EXPECT_TRUE(IsDeltaError(refused.status(), DeltaErrorCode::kInvalidArgument));
}

TEST(DeltaStream, RateLimitsCutTheSnapshotAndCommitsIntoBatches) {
  Tables t;
  for (int i = 0; i < 5; ++i) Append(t.source, i * 10, 10);  // 5 files in the snapshot
  DeltaSourceOptions limited;
  limited.limits.max_files = 2;
  std::vector<BatchReport> reports;
  ASSERT_TRUE(Stream(t, limited, &reports).ok());
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].rows, 20);
  EXPECT_EQ(reports[2].rows, 10);
  for (int i = 5; i < 8; ++i) Append(t.source, i * 10, 10);
  reports.clear();
  ASSERT_TRUE(Stream(t, limited, &reports).ok());
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].rows, 20);
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 80));
}

TEST(DeltaStream, ChangeCommitsStopTheStreamUnlessSkippedOrIgnored) {
  Tables t;
  Append(t.source, 0, 10);
  ASSERT_TRUE(Stream(t, {}).ok());
  Append(t.source, 10, 10);                                              // v1
  ASSERT_TRUE(UpdateBuilder(t.source).Set("name", "'u'").Where("id = 3").Execute().ok());  // v2
  Append(t.source, 20, 10);                                              // v3

  auto stopped = Stream(t, {});
  ASSERT_FALSE(stopped.ok());
  EXPECT_TRUE(IsDeltaError(stopped.status(), DeltaErrorCode::kUnsupportedFeature));
  EXPECT_NE(stopped.status().message().find("version 2"), std::string::npos)
      << stopped.status().message();
  EXPECT_NE(stopped.status().message().find("UPDATE"), std::string::npos);
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 10)) << "the batch holding the update is not written";

  DeltaSourceOptions skip;
  skip.skip_change_commits = true;
  ASSERT_TRUE(Stream(t, skip).ok());
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 30)) << "appends kept, the update skipped";

  // ignoreDeletes tolerates commits that only remove files, not rewrites.
  Tables d;
  Append(d.source, 0, 10, {{"delta.enableDeletionVectors", "false"}});
  ASSERT_TRUE(Stream(d, {}).ok());
  ASSERT_TRUE(DeleteBuilder(d.source).Execute().ok());  // removes the whole file
  Append(d.source, 10, 5);
  DeltaSourceOptions ignore_deletes;
  ignore_deletes.ignore_deletes = true;
  ASSERT_TRUE(Stream(d, ignore_deletes).ok());
  EXPECT_EQ(IdCounts(d.sink), EachOnce(0, 15));
  Append(d.source, 15, 5);
  ASSERT_TRUE(UpdateBuilder(d.source).Set("name", "'u'").Where("id = 16").Execute().ok());
  auto rewrite = Stream(d, ignore_deletes);
  EXPECT_TRUE(IsDeltaError(rewrite.status(), DeltaErrorCode::kUnsupportedFeature))
      << rewrite.status().ToString();

  // ignoreChanges emits the rewritten file again: its unchanged rows repeat.
  DeltaSourceOptions ignore_changes;
  ignore_changes.ignore_changes = true;
  ASSERT_TRUE(Stream(d, ignore_changes).ok());
  auto counts = IdCounts(d.sink);
  EXPECT_EQ(counts[16], 2) << "the updated row arrives again";
  EXPECT_EQ(counts[15], 2) << "and so do the rows its file kept";
}

TEST(DeltaStream, ChangeFeedStreamEqualsTheBatchReadOfTheSameRange) {
  Tables t;
  Append(t.source, 0, 10, {{"delta.enableChangeDataFeed", "true"}});  // v0
  Append(t.source, 10, 10);                                             // v1
  ASSERT_TRUE(UpdateBuilder(t.source).Set("name", "'u'").Where("id < 3").Execute().ok());
  ASSERT_TRUE(DeleteBuilder(t.source).Where("id >= 15").Execute().ok());
  DeltaSourceOptions feed;
  feed.read_change_feed = true;
  feed.starting_version = 0;
  feed.limits.max_files = 1;  // a commit per batch
  std::vector<BatchReport> reports;
  ASSERT_TRUE(Stream(t, feed, &reports).ok());
  EXPECT_EQ(reports.size(), 4u);
  auto table = DeltaTable::Open(t.source);
  ASSERT_TRUE(table.ok());
  auto batch = TableChangesBuilder(*table).StartingVersion(0).Build();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  auto expected = (*batch)->ToTable();
  ASSERT_TRUE(expected.ok());
  auto streamed = testing::ReadTable(t.sink);
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  EXPECT_EQ(testing::RowStrings(**streamed), testing::RowStrings(**expected));
  EXPECT_EQ((*expected)->num_rows(), 20 + 6 + 5);
}

TEST(DeltaStream, KilledBatchesReplayTheSameFiles) {
  Tables t;
  Append(t.source, 0, 10);
  ASSERT_TRUE(Stream(t, {}).ok());
  Append(t.source, 10, 10);
  ASSERT_TRUE(Stream(t, {}).ok());
  fs::remove(fs::path(t.checkpoint) / "commits" / "1");
  fs::remove(fs::path(t.sink) / "_delta_log" / testing::CommitName(1));
  Append(t.source, 20, 10);  // more data since: the replay still reads only batch 1's commit
  std::vector<BatchReport> reports;
  ASSERT_TRUE(Stream(t, {}, &reports).ok());
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].replayed);
  EXPECT_EQ(reports[0].rows, 10);
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 30));
}

// Appends row (id, "n<id>", "e") with a new column `extra` (merge schema).
void AppendWithAnAddedColumn(const std::string& table, int64_t id) {
  auto wide = arrow::schema({arrow::field("id", arrow::int64()),
                             arrow::field("name", arrow::utf8()),
                             arrow::field("extra", arrow::utf8())});
  arrow::Int64Builder ids;
  arrow::StringBuilder names, extras;
  ASSERT_TRUE(ids.Append(id).ok());
  ASSERT_TRUE(names.Append("n" + std::to_string(id)).ok());
  ASSERT_TRUE(extras.Append("e").ok());
  WriteOptions evolve;
  evolve.merge_schema = true;
  auto w = WriteTable(table,
                      arrow::Table::Make(wide, {*ids.Finish(), *names.Finish(), *extras.Finish()}),
                      evolve);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
}

TEST(DeltaStream, ASchemaChangeStopsTheStreamAndTheNextRunReadsOn) {
  Tables t;
  Append(t.source, 0, 5);
  ASSERT_TRUE(Stream(t, {}).ok());
  AppendWithAnAddedColumn(t.source, 5);
  auto stopped = Stream(t, {});
  EXPECT_TRUE(IsDeltaError(stopped.status(), DeltaErrorCode::kSchemaMismatch))
      << stopped.status().ToString();
  DeltaSinkOptions sink;  // the next run reads with the new schema; the sink evolves
  sink.location = t.sink;
  sink.merge_schema = true;
  DeltaSourceOptions source;
  source.location = t.source;
  auto next = StreamQueryBuilder()
                  .Source(MakeDeltaSource(source))
                  .Sink(sink)
                  .Checkpoint(t.checkpoint)
                  .Run();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 6));
}

// A stream started at a version older than an added column reads the older rows in the
// current schema (the new column null), as delta-spark does; it does not stop at version 0's
// metadata on every run.
TEST(DeltaStream, AStreamStartedBeforeAnAddedColumnReadsTheOlderRowsWithNulls) {
  Tables t;
  Append(t.source, 0, 5);
  AppendWithAnAddedColumn(t.source, 5);
  DeltaSourceOptions from_start;
  from_start.starting_version = 0;
  auto run = Stream(t, from_start);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(IdCounts(t.sink), EachOnce(0, 6));
  auto sink = testing::ReadTable(t.sink);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  auto extra = (*sink)->GetColumnByName("extra");
  ASSERT_NE(extra, nullptr) << (*sink)->schema()->ToString();
  EXPECT_EQ(extra->null_count(), 5);
}

// Rows an incompatible change made unreadable with the current schema (a column retyped by an
// overwrite) stop a stream started before it with an error saying where to start instead.
TEST(DeltaStream, AStreamStartedBeforeAnIncompatibleChangeIsRefusedWithWhereToStart) {
  Tables t;
  Append(t.source, 0, 5);
  auto retyped = arrow::schema({arrow::field("id", arrow::utf8())});
  arrow::StringBuilder ids;
  ASSERT_TRUE(ids.Append("x").ok());
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  overwrite.overwrite_schema = true;
  auto w = WriteTable(t.source, arrow::Table::Make(retyped, {*ids.Finish()}), overwrite);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  DeltaSourceOptions from_start;
  from_start.starting_version = 0;
  auto run = Stream(t, from_start);
  ASSERT_TRUE(IsDeltaError(run.status(), DeltaErrorCode::kSchemaMismatch))
      << run.status().ToString();
  EXPECT_NE(run.status().message().find("start the stream after version 0"), std::string::npos)
      << run.status().ToString();
}

}  // namespace
}  // namespace deltacpp
