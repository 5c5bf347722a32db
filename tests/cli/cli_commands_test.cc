// Runs the real `deltacpp` binary on generated tables and checks its output and exit codes.
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>

#include <arrow/io/memory.h>

#include <sstream>

#include "deltacpp/api.h"
#include "support/cli_runner.h"
#include "support/fixture_writer.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::FixtureFile;
using testing::FixtureTableWriter;
using testing::RunCli;
using testing::TempDir;

std::shared_ptr<arrow::Table> People() {
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::default_memory_pool());
  (void)id.AppendValues({1, 2, 3});
  (void)name.Append("ann");
  (void)name.AppendNull();
  (void)name.Append("c,d");
  (void)ts.AppendValues({1'705'276'800'000'000LL, 1'705'276'800'500'000LL, 0});
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                               arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  return arrow::Table::Make(schema, {id.Finish().ValueOrDie(), name.Finish().ValueOrDie(),
                                     ts.Finish().ValueOrDie()});
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/people";
    FixtureTableWriter w(table_);
    ASSERT_TRUE(w.Create(People()->schema()).ok());
    ASSERT_TRUE(w.Append({FixtureFile(People())}).ok());
    ASSERT_TRUE(w.SetCommitFileTime(0, 1'700'000'000'000).ok());
    ASSERT_TRUE(w.SetCommitFileTime(1, 1'700'000'100'000).ok());
  }
  TempDir dir_;
  std::string table_;
};

TEST_F(CliTest, VersionFlagPrintsLibraryVersion) {
  auto r = RunCli("--version", dir_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("deltacpp ") + kVersion + "\n");
}

TEST_F(CliTest, UnknownCommandIsNamedWithTheCommandList) {
  auto r = RunCli("frobnicate " + table_, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("'frobnicate' is not a deltacpp command"), std::string::npos) << r.err;
  for (const char* command : {"read", "history", "describe", "files", "write", "checkpoint"}) {
    EXPECT_NE(r.err.find(command), std::string::npos) << command << " missing in: " << r.err;
  }
  auto known = RunCli("describe " + table_, dir_);
  EXPECT_EQ(known.exit_code, 0) << known.err;
}

TEST_F(CliTest, CsvHasHeaderAndEmptyFieldForNull) {
  auto r = RunCli("read " + table_ + " --format csv", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "id,name,ts\n"
            "1,ann,2024-01-15T00:00:00Z\n"
            "2,,2024-01-15T00:00:00.500000Z\n"
            "3,\"c,d\",1970-01-01T00:00:00Z\n");
}

TEST_F(CliTest, JsonIsJsonLinesWithNullAndLimit) {
  auto r = RunCli("read " + table_ + " --format json --limit 2 --columns name,id", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"name\":\"ann\",\"id\":1}\n{\"name\":null,\"id\":2}\n");
}

TEST_F(CliTest, WhereFiltersRows) {
  auto r = RunCli("read " + table_ + " --format csv --columns id --where \"ts >= TIMESTAMP '2024-01-01 00:00:00' AND name IS NULL\"", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "id\n2\n");
}

TEST_F(CliTest, ParquetGoesToStdoutWhenPiped) {
  auto r = RunCli("read " + table_ + " --format parquet", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GT(r.out.size(), 8u);
  EXPECT_EQ(r.out.substr(0, 4), "PAR1");
  auto buffer = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(r.out));
  auto reader = parquet::arrow::OpenFile(buffer, arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto t = (*reader)->ReadTable();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->num_rows(), 3);
}

TEST_F(CliTest, TimeTravelByVersionAndTimestamp) {
  auto v0 = RunCli("read " + table_ + " --version 0 --format csv", dir_);
  ASSERT_EQ(v0.exit_code, 0) << v0.err;
  EXPECT_EQ(v0.out, "id,name,ts\n");
  auto t0 = RunCli("read " + table_ + " --timestamp 2023-11-14T22:14:00 --format csv", dir_);
  ASSERT_EQ(t0.exit_code, 0) << t0.err;
  EXPECT_EQ(t0.out, "id,name,ts\n");
  auto both = RunCli("read " + table_ + " --version 0 --timestamp 2023-11-14T22:14:00", dir_);
  EXPECT_NE(both.exit_code, 0);
}

TEST_F(CliTest, ErrorsGoToStderrWithNonZeroExit) {
  auto missing = RunCli("read " + dir_.str() + "/nope", dir_);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(missing.out.empty());
  EXPECT_NE(missing.err.find("TableNotFound"), std::string::npos) << missing.err;
  auto bad_filter = RunCli("read " + table_ + " --where \"id >\"", dir_);
  EXPECT_NE(bad_filter.exit_code, 0);
  EXPECT_NE(bad_filter.err.find("InvalidExpression"), std::string::npos) << bad_filter.err;
  auto future = RunCli("read " + table_ + " --timestamp 2999-01-01", dir_);
  EXPECT_NE(future.exit_code, 0);
  EXPECT_NE(future.err.find("TimestampOutOfRange"), std::string::npos) << future.err;
  auto s3 = RunCli("describe s3://bucket/t", dir_);
  EXPECT_NE(s3.exit_code, 0);
  EXPECT_NE(s3.err.find("unsupported storage scheme"), std::string::npos) << s3.err;
}

TEST_F(CliTest, HistoryDescribeAndFiles) {
  auto h = RunCli("history " + table_ + " --format csv", dir_);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  std::istringstream lines(h.out);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header, "version,timestamp,operation,operationParameters,operationMetrics");
  EXPECT_EQ(first.rfind("1,2023-11-14T22:15:00Z,WRITE,", 0), 0u) << first;
  EXPECT_EQ(second.rfind("0,2023-11-14T22:13:20Z,CREATE TABLE,", 0), 0u) << second;
  auto d = RunCli("describe " + table_ + " --format csv", dir_);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("version,1\n"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("column id,long\n"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("number of files,1\n"), std::string::npos) << d.out;
  auto f = RunCli("files " + table_ + " --format csv", dir_);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out.rfind("path,partitionValues,size,modificationTime,stats,deletedRows\n", 0), 0u);
  EXPECT_NE(f.out.find(".parquet"), std::string::npos);
}

}  // namespace
}  // namespace deltacpp
