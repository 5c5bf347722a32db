// Runs the real `deltacpp` binary with input and options holding text that is not valid UTF-8:
// every such command fails naming the column and row or the option, and leaves the table
// directory exactly as it was; valid multibyte text goes through and reads back.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "deltacpp/api.h"
#include "ops/ops_test_util.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Latest;
using testing::RunCli;
using testing::TempDir;

const std::string kBad = "caf\xE9";  // Latin-1 é: not UTF-8

class CliInvalidUtf8 : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    auto r = RunCli("create " + table_ + " --schema 'id BIGINT, name STRING'", dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ofstream(dir_.str() + "/good.jsonl") << "{\"id\":1,\"name\":\"a\"}\n";
    r = RunCli("write " + table_ + " " + dir_.str() + "/good.jsonl", dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    before_ = testing::DirectoryTree(table_);
  }

  std::string File(const std::string& name, const std::string& content) {
    const std::string path = dir_.str() + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // The command failed with an error that holds every one of `parts` and not the bad bytes,
  // and the table is as it was.
  void ExpectRefused(const std::string& args, const std::vector<std::string>& parts) {
    SCOPED_TRACE(args);
    auto r = RunCli(args, dir_);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(kBad), std::string::npos) << "raw bytes on stderr: " << r.err;
    EXPECT_EQ(testing::DirectoryTree(table_), before_) << args;
  }

  TempDir dir_;
  std::string table_;
  std::map<std::string, int64_t> before_;
};

TEST_F(CliInvalidUtf8, JsonLinesInput) {
  const auto input = File("bad.jsonl", "{\"id\":2,\"name\":\"ok\"}\n"
                                       "{\"id\":3,\"name\":\"" + kBad + "\"}\n");
  ExpectRefused("write " + table_ + " " + input, {"name", "row 2"});
}

TEST_F(CliInvalidUtf8, CsvInput) {
  // The CSV reader knows the line: the error names the column, the line (the header is
  // line 1) and shows the bad byte escaped.
  const auto input = File("bad.csv", "id,name\n2,ok\n3,ok\n4," + kBad + "\n");
  ExpectRefused("write " + table_ + " " + input,
                {"InvalidArgument", "column \"name\"", "line 4 of " + input, "not valid UTF-8",
                 "caf\\xE9"});
}

TEST_F(CliInvalidUtf8, CsvInputCreatingATableCreatesNothing) {
  const auto input = File("new.csv", "code,label\n007,ok\n008," + kBad + "\n");
  const std::string fresh = dir_.str() + "/fresh";
  auto r = RunCli("write " + fresh + " " + input, dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("column \"label\" at line 3"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(fresh + "/_delta_log/00000000000000000000.json"));
}

TEST_F(CliInvalidUtf8, ParquetInputWithBinaryAsString) {
  // A string column whose bytes were never checked: binary data relabelled as string.
  arrow::BinaryBuilder b;
  ASSERT_TRUE(b.Append("ok").ok());
  ASSERT_TRUE(b.Append(kBad).ok());
  auto binary = *b.Finish();
  auto data = binary->data()->Copy();
  data->type = arrow::utf8();
  auto names = arrow::MakeArray(data);
  arrow::Int64Builder ids;
  ASSERT_TRUE(ids.AppendValues({2, 3}).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8())});
  auto table = arrow::Table::Make(schema, {*ids.Finish(), names});
  const std::string path = dir_.str() + "/bad.parquet";
  auto sink = *arrow::io::FileOutputStream::Open(path);
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink).ok());
  ASSERT_TRUE(sink->Close().ok());
  ExpectRefused("write " + table_ + " " + path,
                {"SchemaMismatch", "column 'name' row 2 of the write", "not valid UTF-8"});
}

TEST_F(CliInvalidUtf8, WriteOptions) {
  const auto input = dir_.str() + "/good.jsonl";
  ExpectRefused("write " + table_ + " " + input + " --txn-app-id '" + kBad + "' --txn-version 1",
                {"InvalidArgument", "txn app id", "not valid UTF-8"});
  ExpectRefused("write " + table_ + " " + input + " --user-metadata '" + kBad + "'",
                {"InvalidArgument", "user metadata", "not valid UTF-8"});
  ExpectRefused("write " + table_ + " " + input + " --mode overwrite --replace-where \"name = '" +
                    kBad + "'\"",
                {"InvalidArgument", "replaceWhere predicate", "not valid UTF-8"});
}

TEST_F(CliInvalidUtf8, CreateOptions) {
  const std::string fresh = dir_.str() + "/fresh";
  auto refused = [&](const std::string& options, const std::vector<std::string>& parts) {
    auto r = RunCli("create " + fresh + " --schema 'id BIGINT, name STRING' " + options, dir_);
    EXPECT_EQ(r.exit_code, 1) << options << ": " << r.out;
    for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(kBad), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(fresh)) << options;
  };
  refused("--comment '" + kBad + "'", {"InvalidArgument", "table description (comment)"});
  refused("--property 'owner=" + kBad + "'", {"InvalidArgument", "table property 'owner'"});
  refused("--property '" + kBad + "=x'", {"InvalidArgument", "table property key"});
  refused("--constraint \"c=name <> '" + kBad + "'\"",
          {"InvalidArgument", "expression of CHECK constraint 'c'"});
  refused("--user-metadata '" + kBad + "'", {"InvalidArgument", "user metadata"});
  auto r = RunCli("create " + fresh + " --schema \"id BIGINT COMMENT '" + kBad + "'\"", dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("comment"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(fresh));
}

TEST_F(CliInvalidUtf8, AlterOptions) {
  ExpectRefused("alter " + table_ + " set-properties 'comment=" + kBad + "'",
                {"InvalidArgument", "table property 'comment'"});
  ExpectRefused("alter " + table_ + " set-properties 'owner=" + kBad + "'",
                {"InvalidArgument", "table property 'owner'"});
  ExpectRefused("alter " + table_ + " add-constraint c \"name <> '" + kBad + "'\"",
                {"InvalidArgument", "expression of CHECK constraint 'c'"});
  ExpectRefused("alter " + table_ + " add-constraint '" + kBad + "' 'id > 0'",
                {"InvalidArgument", "CHECK constraint name"});
  ExpectRefused("alter " + table_ + " --user-metadata '" + kBad + "' set-properties owner=me",
                {"InvalidArgument", "user metadata"});
}

TEST_F(CliInvalidUtf8, MultibyteTextGoesThrough) {
  const std::string emoji = "\xF0\x9F\x98\x80";
  const std::string value = std::string(31, 'a') + emoji + emoji;  // emoji as 32nd code point
  const auto input = File("multi.jsonl", "{\"id\":2,\"name\":\"" + value + "\"}\n");
  auto r = RunCli("write " + table_ + " " + input + " --user-metadata 'note " + emoji +
                      "' --txn-app-id 'app " + emoji + "' --txn-version 1",
                  dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli("alter " + table_ + " set-properties 'comment=caf\xC3\xA9 " + emoji + "'", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli("read " + table_ + " --format csv --where \"name = '" + value + "'\"", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2," + value), std::string::npos) << r.out;
  auto snapshot = Latest(table_);
  EXPECT_EQ(snapshot->metadata().description, "caf\xC3\xA9 " + emoji);
  EXPECT_EQ(snapshot->txn_version("app " + emoji), 1);
}

}  // namespace
}  // namespace deltacpp
