// Runs the real `deltacpp` binary for `alter` (columns, properties, constraints) and
// `checkpoint`, checking exit codes, messages and the table they leave behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/create_table.h"
#include "deltacpp/ops/write.h"
#include "ops/ops_test_util.h"
#include "support/cli_runner.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::Latest;
using testing::LogListing;
using testing::RunCli;
using testing::TempDir;

// The lines of `text` after the first, sorted (row order of a scan is not fixed).
std::vector<std::string> SortedRows(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

class CliAlterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = dir_.str() + "/t";
    CreateTableOptions opts;
    opts.schema = *SchemaFromDdl("id long NOT NULL, s STRUCT<a: INT>");
    ASSERT_TRUE(CreateTable(table_, opts).ok());
    Append(1, 10);
    Append(2, 20);
  }

  // Appends one row (id, s.a) with the table's initial schema.
  void Append(int64_t id, int32_t a) {
    auto schema = Latest(table_)->schema();
    arrow::Int64Builder ids;
    ASSERT_TRUE(ids.Append(id).ok());
    arrow::Int32Builder as;
    ASSERT_TRUE(as.Append(a).ok());
    auto s = *arrow::StructArray::Make({*as.Finish()}, {arrow::field("a", arrow::int32())});
    auto batch = arrow::RecordBatch::Make(schema, 1, {*ids.Finish(), s});
    auto w = WriteTable(table_, *arrow::RecordBatchReader::Make({batch}, schema), {});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
  }

  TempDir dir_;
  std::string table_;
};

TEST_F(CliAlterTest, AddColumnsTopLevelAndNested) {
  auto r = RunCli("alter " + table_ + " add-columns \"note string COMMENT 'a, b', s.x int\"", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed version 3"), std::string::npos) << r.out;
  auto schema = Latest(table_)->schema();
  ASSERT_EQ(schema->num_fields(), 3);
  EXPECT_EQ(schema->field(2)->name(), "note");
  EXPECT_EQ(schema->field(2)->type()->id(), arrow::Type::STRING);
  ASSERT_TRUE(schema->field(2)->metadata());
  EXPECT_EQ(*schema->field(2)->metadata()->Get("comment"), "\"a, b\"");
  auto s = schema->field(1)->type();
  ASSERT_EQ(s->num_fields(), 2);
  EXPECT_EQ(s->field(1)->name(), "x");
  EXPECT_EQ(s->field(1)->type()->id(), arrow::Type::INT32);
  auto history = RunCli("history " + table_ + " --format csv --limit 1", dir_);
  EXPECT_NE(history.out.find("ADD COLUMNS"), std::string::npos) << history.out;

  auto read = RunCli("read " + table_ + " --format csv --columns id,note", dir_);
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out.substr(0, 8), "id,note\n");
  EXPECT_EQ(SortedRows(read.out), (std::vector<std::string>{"1,", "2,"}));

  const auto before = LogListing(table_);
  auto dup = RunCli("alter " + table_ + " add-columns 'NOTE int'", dir_);
  EXPECT_NE(dup.exit_code, 0);
  EXPECT_NE(dup.err.find("SchemaMismatch"), std::string::npos) << dup.err;
  auto bad_type = RunCli("alter " + table_ + " add-columns 'y nosuchtype'", dir_);
  EXPECT_NE(bad_type.exit_code, 0);
  EXPECT_NE(bad_type.err.find("InvalidExpression"), std::string::npos) << bad_type.err;
  EXPECT_EQ(LogListing(table_), before);
}

TEST_F(CliAlterTest, SetAndUnsetProperties) {
  auto set = RunCli("alter " + table_ +
                        " set-properties owner=me delta.appendOnly=true"
                        " 'delta.logRetentionDuration=interval 7 days'",
                    dir_);
  ASSERT_EQ(set.exit_code, 0) << set.err;
  auto props = Latest(table_)->properties();
  EXPECT_EQ(props.at("owner"), "me");
  EXPECT_EQ(props.at("delta.appendOnly"), "true");
  EXPECT_EQ(props.at("delta.logRetentionDuration"), "interval 7 days");

  auto unset = RunCli("alter " + table_ + " unset-properties owner delta.appendOnly", dir_);
  ASSERT_EQ(unset.exit_code, 0) << unset.err;
  props = Latest(table_)->properties();
  EXPECT_EQ(props.count("owner"), 0u);
  EXPECT_EQ(props.count("delta.appendOnly"), 0u);

  const auto before = LogListing(table_);
  auto missing = RunCli("alter " + table_ + " unset-properties owner", dir_);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("InvalidArgument"), std::string::npos) << missing.err;
  auto malformed = RunCli("alter " + table_ + " set-properties owner", dir_);
  EXPECT_NE(malformed.exit_code, 0);
  EXPECT_EQ(LogListing(table_), before);
  auto tolerant = RunCli("alter " + table_ + " unset-properties owner --if-exists", dir_);
  EXPECT_EQ(tolerant.exit_code, 0) << tolerant.err;
}

TEST_F(CliAlterTest, AddAndDropConstraint) {
  const auto before = LogListing(table_);
  auto violated = RunCli("alter " + table_ + " add-constraint small 'id < 2'", dir_);
  EXPECT_NE(violated.exit_code, 0);
  EXPECT_NE(violated.err.find("ConstraintViolation"), std::string::npos) << violated.err;
  EXPECT_NE(violated.err.find("small"), std::string::npos) << violated.err;
  EXPECT_EQ(LogListing(table_), before);

  auto add = RunCli("alter " + table_ + " add-constraint positive 'id > 0 AND s.a >= 10'", dir_);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  auto snap = Latest(table_);
  EXPECT_EQ(snap->properties().at("delta.constraints.positive"), "id > 0 AND s.a >= 10");
  EXPECT_EQ(snap->protocol().min_writer_version, 3);

  auto drop = RunCli("alter " + table_ + " drop-constraint positive", dir_);
  ASSERT_EQ(drop.exit_code, 0) << drop.err;
  EXPECT_EQ(Latest(table_)->properties().count("delta.constraints.positive"), 0u);
  auto again = RunCli("alter " + table_ + " drop-constraint positive", dir_);
  EXPECT_NE(again.exit_code, 0);
  auto tolerant = RunCli("alter " + table_ + " drop-constraint positive --if-exists", dir_);
  EXPECT_EQ(tolerant.exit_code, 0) << tolerant.err;

  auto no_action = RunCli("alter " + table_, dir_);
  EXPECT_NE(no_action.exit_code, 0);
}

TEST_F(CliAlterTest, CheckpointLetsOlderCommitsGo) {
  auto before = RunCli("read " + table_ + " --format csv --columns id", dir_);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  auto r = RunCli("checkpoint " + table_, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote a checkpoint of version 2"), std::string::npos) << r.out;
  const std::string log = table_ + "/_delta_log/";
  ASSERT_TRUE(std::filesystem::exists(log + "00000000000000000002.checkpoint.parquet"));
  EXPECT_TRUE(std::filesystem::exists(log + "_last_checkpoint"));

  auto again = RunCli("checkpoint " + table_, dir_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already exists"), std::string::npos) << again.out;

  for (const char* old : {"00000000000000000000.json", "00000000000000000001.json"}) {
    ASSERT_TRUE(std::filesystem::remove(log + old));
  }
  auto after = RunCli("read " + table_ + " --format csv --columns id", dir_);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(SortedRows(after.out), SortedRows(before.out));
  EXPECT_EQ(SortedRows(after.out), (std::vector<std::string>{"1", "2"}));

  auto missing = RunCli("checkpoint " + dir_.str() + "/nope", dir_);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("TableNotFound"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace deltacpp
