// A landing folder streamed into a Delta table: each file once across runs, rate limits and
// triggers, replays after a crash taking effect once, malformed records per policy, CSV and
// Parquet, complete mode, foreachBatch, the checkpoint lock, a concurrent writer on the sink.
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <fmt/core.h>

#include <thread>

#include "deltacpp/ops/merge.h"
#include "deltacpp/stream/file_source.h"
#include "ops/dml_test_util.h"
#include "stream/stream_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::EachOnce;
using testing::IdCounts;
using testing::LandJson;
using testing::TempDir;

struct Paths {
  TempDir dir;
  fs::path landing = dir.path() / "landing";
  std::string sink = (dir.path() / "sink").string();
  std::string checkpoint = (dir.path() / "checkpoint").string();
};

DeltaSinkOptions SinkAt(const std::string& location, OutputMode mode = OutputMode::kAppend) {
  DeltaSinkOptions sink;
  sink.location = location;
  sink.mode = mode;
  return sink;
}

FileSourceOptions JsonSource(const Paths& p) {
  FileSourceOptions o;
  o.location = p.landing.string();
  o.schema = testing::IdNameSchema();
  return o;
}

arrow::Result<StreamRunResult> RunOnce(const Paths& p, FileSourceOptions source,
                                       Trigger trigger = Trigger::AvailableNow(),
                                       std::vector<BatchReport>* reports = nullptr) {
  return StreamQueryBuilder()
      .Source(MakeFileSource(std::move(source)))
      .Sink(SinkAt(p.sink))
      .Checkpoint(p.checkpoint)
      .Trigger(trigger)
      .OnBatch([reports](const BatchReport& b) {
        if (reports) reports->push_back(b);
      })
      .Run();
}

TEST(FileStream, EachFileIsReadOnceAcrossRunsAndEveryBatchCommitsItsTxn) {
  Paths p;
  LandJson(p.landing, "a.json", 0, 10);
  LandJson(p.landing, "b.json", 10, 5);
  testing::WriteText(p.landing / "_SUCCESS", "");
  testing::WriteText(p.landing / ".c.json.tmp", "{\"id\": 999}\n");  // being written
  auto first = RunOnce(p, JsonSource(p));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->batches, 1);
  EXPECT_EQ(first->rows, 15);
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 15));

  auto idle = RunOnce(p, JsonSource(p));
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  EXPECT_EQ(idle->batches, 0) << "nothing new: no batch, no commit";
  EXPECT_EQ(idle->query_id, first->query_id) << "the checkpoint keeps the query id";

  LandJson(p.landing, "sub/c.json", 15, 3);
  auto second = RunOnce(p, JsonSource(p));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->batches, 1);
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 18));

  const auto commit = testing::ReadCommitFile(p.sink, 1);
  EXPECT_EQ(commit.operation, "STREAMING UPDATE");
  EXPECT_EQ(commit.parameters.at("outputMode"), "Append");
  EXPECT_EQ(commit.parameters.at("queryId"), first->query_id);
  EXPECT_EQ(commit.parameters.at("epochId"), "1");
  auto table = DeltaTable::Open(p.sink);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*(*table)->Latest())->txn_version(first->query_id), std::optional<int64_t>(1));
}

TEST(FileStream, RateLimitsSplitBatchesAndTriggerOnceIgnoresThem) {
  Paths p;
  for (int i = 0; i < 5; ++i) LandJson(p.landing, fmt::format("f{}.json", i), i * 10, 10);
  auto source = JsonSource(p);
  source.limits.max_files = 2;
  std::vector<BatchReport> reports;
  auto run = RunOnce(p, source, Trigger::AvailableNow(), &reports);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].rows, 20);
  EXPECT_EQ(reports[0].backlog, std::optional<int64_t>(3));
  EXPECT_EQ(reports[2].rows, 10);
  EXPECT_EQ(reports[2].backlog, std::optional<int64_t>(0));
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 50));

  Paths q;
  for (int i = 0; i < 4; ++i) LandJson(q.landing, fmt::format("f{}.json", i), i * 10, 10);
  auto bytes = JsonSource(q);
  bytes.limits.max_bytes = static_cast<int64_t>(fs::file_size(q.landing / "f0.json")) + 1;
  reports.clear();
  ASSERT_TRUE(RunOnce(q, bytes, Trigger::AvailableNow(), &reports).ok());
  EXPECT_EQ(reports.size(), 4u) << "one file per batch under the byte limit";

  Paths once;
  for (int i = 0; i < 4; ++i) LandJson(once.landing, fmt::format("f{}.json", i), i * 10, 10);
  auto limited = JsonSource(once);
  limited.limits.max_files = 1;
  reports.clear();
  ASSERT_TRUE(RunOnce(once, limited, Trigger::Once(), &reports).ok());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].rows, 40);
}

TEST(FileStream, ABatchPlannedButNotMarkedRunsAgainAndTakesEffectOnce) {
  Paths p;
  LandJson(p.landing, "a.json", 0, 10);
  ASSERT_TRUE(RunOnce(p, JsonSource(p)).ok());
  LandJson(p.landing, "b.json", 10, 10);
  ASSERT_TRUE(RunOnce(p, JsonSource(p)).ok());
  ASSERT_EQ(IdCounts(p.sink), EachOnce(0, 20));

  // As if the process died after the sink's commit of batch 1, before marking it.
  fs::remove(fs::path(p.checkpoint) / "commits" / "1");
  LandJson(p.landing, "c.json", 20, 10);
  std::vector<BatchReport> reports;
  auto run = RunOnce(p, JsonSource(p), Trigger::AvailableNow(), &reports);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].replayed);
  EXPECT_EQ(reports[0].batch_id, 1);
  EXPECT_EQ(reports[0].rows, 10) << "the replay reads the same file again";
  EXPECT_TRUE(reports[0].skipped_by_sink) << "the table has batch 1's txn";
  EXPECT_EQ(reports[1].batch_id, 2);
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 30));

  // As if it died before the sink's commit of batch 2: the replay writes it.
  fs::remove(fs::path(p.checkpoint) / "commits" / "2");
  fs::remove(fs::path(p.sink) / "_delta_log" / testing::CommitName(2));
  ASSERT_EQ(IdCounts(p.sink), EachOnce(0, 20));
  reports.clear();
  ASSERT_TRUE(RunOnce(p, JsonSource(p), Trigger::AvailableNow(), &reports).ok());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].replayed);
  EXPECT_FALSE(reports[0].skipped_by_sink);
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 30));
}

TEST(FileStream, MalformedRecordsFailTheBatchOrAreDroppedOrRouted) {
  const std::string bad =
      "{\"id\": 1, \"name\": \"ok\"}\n"
      "{\"id\": \"two\"}\n"
      "not json\n"
      "\n"
      "{\"id\": 5, \"name\": \"caf\xE9\"}\n"
      "{\"id\": 6}\n";
  {
    Paths p;
    testing::WriteText(p.landing / "bad.json", bad);
    auto run = RunOnce(p, JsonSource(p));
    ASSERT_FALSE(run.ok());
    EXPECT_TRUE(IsDeltaError(run.status(), DeltaErrorCode::kSchemaMismatch))
        << run.status().ToString();
    EXPECT_NE(run.status().message().find("line 2 of bad.json"), std::string::npos)
        << run.status().message();
    EXPECT_FALSE(fs::exists(p.sink)) << "nothing of a failed batch is written";
    // The batch stays planned: fixing the file lets the same batch through.
    testing::WriteText(p.landing / "bad.json", "{\"id\": 1}\n");
    auto fixed = RunOnce(p, JsonSource(p));
    ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
    EXPECT_EQ(IdCounts(p.sink), (std::map<int64_t, int>{{1, 1}}));
  }
  {
    Paths p;
    testing::WriteText(p.landing / "bad.json", bad);
    auto source = JsonSource(p);
    source.bad_records = BadRecordPolicy::kDrop;
    std::vector<BatchReport> reports;
    ASSERT_TRUE(RunOnce(p, source, Trigger::AvailableNow(), &reports).ok());
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].rejected_records, 3);
    EXPECT_EQ(IdCounts(p.sink), (std::map<int64_t, int>{{1, 1}, {6, 1}}));
  }
  {
    Paths p;
    testing::WriteText(p.landing / "bad.json", bad);
    auto source = JsonSource(p);
    source.bad_records = BadRecordPolicy::kRoute;
    source.bad_records_location = (p.dir.path() / "bad-records").string();
    ASSERT_TRUE(RunOnce(p, source).ok());
    EXPECT_EQ(IdCounts(p.sink), (std::map<int64_t, int>{{1, 1}, {6, 1}}));
    auto routed = testing::ReadRows(source.bad_records_location);
    ASSERT_EQ(routed.size(), 3u);
    std::vector<std::string> lines;
    for (const auto& r : routed) lines.push_back(r.substr(0, r.find('|', r.find('|') + 1)));
    std::sort(lines.begin(), lines.end());
    EXPECT_EQ(lines, (std::vector<std::string>{"bad.json|2", "bad.json|3", "bad.json|5"}));
    bool escaped = false;
    for (const auto& r : routed) escaped |= r.find("caf\\xE9") != std::string::npos;
    EXPECT_TRUE(escaped) << "bytes that are not UTF-8 are kept as \\xNN";
  }
}

TEST(FileStream, CsvAndParquetLandingFolders) {
  {
    Paths p;
    testing::WriteText(p.landing / "a.csv", "name,id\nx,1\ny,2\nz,three\n");
    auto source = JsonSource(p);
    source.format = FileFormat::kCsv;
    source.bad_records = BadRecordPolicy::kDrop;
    std::vector<BatchReport> reports;
    ASSERT_TRUE(RunOnce(p, source, Trigger::AvailableNow(), &reports).ok());
    EXPECT_EQ(reports.at(0).rejected_records, 1);
    EXPECT_EQ(testing::ReadRows(p.sink), (std::multiset<std::string>{"1|x", "2|y"}));
  }
  {
    Paths p;
    arrow::Int32Builder ids;  // narrower than the schema's long: cast
    ASSERT_TRUE(ids.AppendValues({7, 8}).ok());
    auto table = arrow::Table::Make(arrow::schema({arrow::field("ID", arrow::int32())}),
                                    {*ids.Finish()});
    fs::create_directories(p.landing);
    auto out = arrow::io::FileOutputStream::Open((p.landing / "a.parquet").string());
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out).ok());
    ASSERT_TRUE((*out)->Close().ok());
    testing::WriteText(p.landing / "b.parquet", "not parquet");
    auto source = JsonSource(p);
    source.format = FileFormat::kParquet;
    auto failed = RunOnce(p, source);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.status().message().find("b.parquet"), std::string::npos)
        << failed.status().message();
    source.bad_records = BadRecordPolicy::kDrop;
    ASSERT_TRUE(RunOnce(p, source).ok());
    EXPECT_EQ(testing::ReadRows(p.sink), (std::multiset<std::string>{"7|null", "8|null"}));
  }
}

TEST(FileStream, CompleteModeReplacesTheTableWithEachBatch) {
  Paths p;
  LandJson(p.landing, "a.json", 0, 10);
  auto run = [&] {
    return StreamQueryBuilder()
        .Source(MakeFileSource(JsonSource(p)))
        .Sink(SinkAt(p.sink, OutputMode::kComplete))
        .Checkpoint(p.checkpoint)
        .Run();
  };
  ASSERT_TRUE(run().ok());
  LandJson(p.landing, "b.json", 100, 3);
  ASSERT_TRUE(run().ok());
  EXPECT_EQ(IdCounts(p.sink), EachOnce(100, 3));
  EXPECT_EQ(testing::ReadCommitFile(p.sink, 1).parameters.at("outputMode"), "Complete");
}

TEST(FileStream, ForeachBatchWithIdempotentWritesTakesEffectOncePerBatch) {
  Paths p;
  LandJson(p.landing, "a.json", 0, 4);
  std::vector<int64_t> delivered;
  auto run = [&] {
    return StreamQueryBuilder()
        .Source(MakeFileSource(JsonSource(p)))
        .ForeachBatch([&](const std::shared_ptr<arrow::Table>& rows, int64_t id) {
          delivered.push_back(id);
          return WriteTable(p.sink, rows, IdempotentWrite("my-app", id)).status();
        })
        .Checkpoint(p.checkpoint)
        .Run();
  };
  ASSERT_TRUE(run().ok());
  fs::remove(fs::path(p.checkpoint) / "commits" / "0");  // crash before the mark
  ASSERT_TRUE(run().ok());
  EXPECT_EQ(delivered, (std::vector<int64_t>{0, 0})) << "delivered again after the crash";
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 4)) << "but written once";
}

TEST(FileStream, UpsertEachMicroBatchWithAnIdempotentMerge) {
  Paths p;
  // Batch 0 inserts ids 0..4; batch 1 brings ids 3..6 again with new names: 3, 4 updated.
  testing::WriteText(p.landing / "a.json",
                     "{\"id\":0,\"name\":\"a\"}\n{\"id\":1,\"name\":\"a\"}\n"
                     "{\"id\":2,\"name\":\"a\"}\n{\"id\":3,\"name\":\"a\"}\n"
                     "{\"id\":4,\"name\":\"a\"}\n");
  auto source = JsonSource(p);
  source.limits.max_files = 1;
  std::vector<int64_t> merged, skipped;
  auto run = [&] {
    return StreamQueryBuilder()
        .Source(MakeFileSource(source))
        .ForeachBatch([&](const std::shared_ptr<arrow::Table>& rows, int64_t id) {
          if (!fs::exists(fs::path(p.sink) / "_delta_log")) {
            return WriteTable(p.sink, rows, IdempotentWrite("upserts", id)).status();
          }
          ARROW_ASSIGN_OR_RAISE(
              auto m, MergeBuilder(p.sink, std::make_shared<arrow::TableBatchReader>(rows))
                          .On("t.id = s.id")
                          .TargetAlias("t")
                          .SourceAlias("s")
                          .WhenMatchedUpdateAll()
                          .WhenNotMatchedInsertAll()
                          .Txn("upserts", id)
                          .Execute());
          (m.skipped ? skipped : merged).push_back(id);
          return arrow::Status::OK();
        })
        .Checkpoint(p.checkpoint)
        .Run();
  };
  ASSERT_TRUE(run().ok());
  testing::WriteText(p.landing / "b.json",
                     "{\"id\":3,\"name\":\"b\"}\n{\"id\":4,\"name\":\"b\"}\n"
                     "{\"id\":5,\"name\":\"b\"}\n{\"id\":6,\"name\":\"b\"}\n");
  ASSERT_TRUE(run().ok());
  fs::remove(fs::path(p.checkpoint) / "commits" / "1");  // crash after the merge committed
  ASSERT_TRUE(run().ok());
  EXPECT_EQ(merged, (std::vector<int64_t>{1}));
  EXPECT_EQ(skipped, (std::vector<int64_t>{1})) << "the replayed merge is skipped";
  EXPECT_EQ(testing::ReadRows(p.sink),
            (std::multiset<std::string>{"0|a", "1|a", "2|a", "3|b", "4|b", "5|b", "6|b"}));
}

TEST(FileStream, ASecondQueryOnARunningQuerysCheckpointIsRefused) {
  Paths p;
  LandJson(p.landing, "a.json", 0, 1);
  std::atomic<bool> stop{false};
  std::atomic<int> batches{0};
  std::thread running([&] {
    auto r = StreamQueryBuilder()
                 .Source(MakeFileSource(JsonSource(p)))
                 .Sink(SinkAt(p.sink))
                 .Checkpoint(p.checkpoint)
                 .Trigger(Trigger::ProcessingTime(std::chrono::milliseconds(20)))
                 .OnBatch([&](const BatchReport&) { ++batches; })
                 .StopFlag(&stop)
                 .Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  });
  while (batches.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto second = RunOnce(p, JsonSource(p));
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(IsDeltaError(second.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_NE(second.status().message().find("in use by another running query"),
            std::string::npos)
      << second.status().message();
  // The running query keeps picking up files until stopped.
  LandJson(p.landing, "b.json", 1, 1);
  while (IdCounts(p.sink).size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  running.join();
  EXPECT_EQ(IdCounts(p.sink), EachOnce(0, 2));
  EXPECT_TRUE(RunOnce(p, JsonSource(p)).ok()) << "the lock goes with the query";
}

TEST(FileStream, AConcurrentWriterOnTheSinkLosesNothingAndDuplicatesNothing) {
  Paths p;
  for (int i = 0; i < 20; ++i) LandJson(p.landing, fmt::format("f{:02}.json", i), i * 10, 10);
  auto source = JsonSource(p);
  source.limits.max_files = 1;
  auto other_row = [](int64_t id) {
    arrow::Int64Builder ids;
    arrow::StringBuilder names;
    EXPECT_TRUE(ids.Append(id).ok());
    EXPECT_TRUE(names.Append("other").ok());
    return arrow::Table::Make(testing::IdNameSchema(), {*ids.Finish(), *names.Finish()});
  };
  ASSERT_TRUE(WriteTable(p.sink, other_row(99999), {}).ok());  // the table exists
  std::atomic<bool> done{false};
  std::thread other([&] {
    for (int i = 0; !done.load() || i < 5; ++i) {
      auto w = WriteTable(p.sink, other_row(100000 + i), {});
      ASSERT_TRUE(w.ok()) << w.status().ToString();
    }
  });
  auto run = RunOnce(p, source);
  done = true;
  other.join();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->batches, 20);
  auto counts = IdCounts(p.sink);
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(counts[i], 1) << "id " << i;
}

TEST(FileStream, BadQueriesAreRefusedClearly) {
  Paths p;
  fs::create_directories(p.landing);
  auto no_sink = StreamQueryBuilder().Source(MakeFileSource(JsonSource(p)))
                     .Checkpoint(p.checkpoint).Run();
  EXPECT_TRUE(IsDeltaError(no_sink.status(), DeltaErrorCode::kInvalidArgument));
  auto no_checkpoint =
      StreamQueryBuilder().Source(MakeFileSource(JsonSource(p))).Sink(SinkAt(p.sink)).Run();
  EXPECT_TRUE(IsDeltaError(no_checkpoint.status(), DeltaErrorCode::kInvalidArgument));
  auto update = StreamQueryBuilder().Source(MakeFileSource(JsonSource(p)))
                    .Sink(SinkAt(p.sink, OutputMode::kUpdate)).Checkpoint(p.checkpoint).Run();
  EXPECT_TRUE(IsDeltaError(update.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_NE(update.status().message().find("foreachBatch"), std::string::npos);
  EXPECT_FALSE(fs::exists(p.checkpoint));
  auto missing = JsonSource(p);
  missing.location = (p.dir.path() / "nowhere").string();
  auto no_folder = RunOnce(p, missing);
  EXPECT_TRUE(IsDeltaError(no_folder.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_NE(no_folder.status().message().find("nowhere"), std::string::npos);
}

}  // namespace
}  // namespace deltacpp
