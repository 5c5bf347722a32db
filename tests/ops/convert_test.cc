// CONVERT TO DELTA: flat and Hive-partitioned Parquet folders become version 0 with their rows,
// statistics and partition values; layouts, files and schemas that do not fit are refused with
// the folder left as it was.
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <filesystem>
#include <fstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/convert.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace deltacpp {
namespace {

using testing::TempDir;

// Writes `table` as a Parquet file at `path`, creating its folders.
void WriteParquet(const fs::path& path, const arrow::Table& table) {
  fs::create_directories(path.parent_path());
  auto out = arrow::io::FileOutputStream::Open(path.string());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), *out, 1024).ok());
  ASSERT_TRUE((*out)->Close().ok());
}

std::shared_ptr<arrow::Table> IdName(const std::vector<int64_t>& ids,
                                     const std::vector<std::string>& names) {
  arrow::Int64Builder ib;
  arrow::StringBuilder sb;
  EXPECT_TRUE(ib.AppendValues(ids).ok());
  EXPECT_TRUE(sb.AppendValues(names).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("name", arrow::utf8())});
  return arrow::Table::Make(schema, {*ib.Finish(), *sb.Finish()});
}

std::shared_ptr<arrow::Table> OnlyId(const std::vector<int64_t>& ids) {
  arrow::Int64Builder ib;
  EXPECT_TRUE(ib.AppendValues(ids).ok());
  return arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}), {*ib.Finish()});
}

void Touch(const fs::path& path, const std::string& text = "x") {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Convert, FlatFolderBecomesVersionZeroWithStatsAndHiddenFilesSkipped) {
  TempDir dir;
  const std::string root = dir.str();
  WriteParquet(dir.path() / "part-0.parquet", *IdName({1, 2}, {"a", "b"}));
  WriteParquet(dir.path() / "part-1.parquet", *IdName({3}, {"c"}));
  Touch(dir.path() / "_SUCCESS", "");
  Touch(dir.path() / ".part-0.parquet.crc");
  Touch(dir.path() / "_temporary" / "junk.txt");

  auto result = ConvertToDeltaBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->version, 0);
  EXPECT_EQ(result->num_files, 2);
  EXPECT_EQ(result->num_rows, 3);
  EXPECT_TRUE(result->partition_columns.empty());

  EXPECT_EQ(testing::ReadRows(root), (std::multiset<std::string>{"1|a", "2|b", "3|c"}));
  const auto commit = testing::ReadCommitFile(root, 0);
  ASSERT_TRUE(commit.exists);
  EXPECT_EQ(commit.operation, "CONVERT");
  EXPECT_TRUE(commit.has_metadata);
  EXPECT_EQ(commit.parameters.at("numFiles"), "2");
  EXPECT_EQ(commit.metrics.at("numConvertedFiles"), "2");
  ASSERT_EQ(commit.adds.size(), 2u);
  for (const auto& add : commit.adds) {
    ASSERT_TRUE(add.stats.has_value()) << add.path;
    EXPECT_NE(add.stats->find("\"numRecords\":"), std::string::npos) << *add.stats;
    EXPECT_NE(add.stats->find("\"minValues\""), std::string::npos) << *add.stats;
  }
  // Stats serve skipping: a filter outside every file's range reads no file.
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok());
  auto scan = (*snap)->NewScan().Filter("id > 100").Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_TRUE((*scan)->files().empty());
  // The data files stay where they were.
  EXPECT_TRUE(fs::exists(dir.path() / "part-0.parquet"));
}

TEST(Convert, HivePartitionedFolderGetsPartitionValuesIncludingNullAndEscapedOnes) {
  TempDir dir;
  const std::string root = dir.str();
  WriteParquet(dir.path() / "country=de" / "day=1" / "a.parquet", *OnlyId({1, 2}));
  WriteParquet(dir.path() / "country=fr" / "day=2" / "b.parquet", *OnlyId({3}));
  WriteParquet(dir.path() / "country=__HIVE_DEFAULT_PARTITION__" / "day=3" / "c.parquet",
               *OnlyId({4}));
  WriteParquet(dir.path() / "country=a%2Fb" / "day=4" / "d.parquet", *OnlyId({5}));

  auto result = ConvertToDeltaBuilder(root).PartitionBy("country STRING, day INT").Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_files, 4);
  EXPECT_EQ(result->partition_columns, (std::vector<std::string>{"country", "day"}));
  ASSERT_EQ(result->schema->num_fields(), 3);
  EXPECT_EQ(result->schema->field(2)->name(), "day");
  EXPECT_TRUE(result->schema->field(2)->type()->Equals(arrow::int32()));

  EXPECT_EQ(testing::ReadRows(root), (std::multiset<std::string>{"1|de|1", "2|de|1", "3|fr|2",
                                                                 "4|null|3", "5|a/b|4"}));
  const auto commit = testing::ReadCommitFile(root, 0);
  EXPECT_EQ(commit.parameters.at("partitionedBy"), "[\"country\",\"day\"]");
  bool saw_null = false;
  for (const auto& add : commit.adds) {
    ASSERT_EQ(add.partition_values.size(), 2u) << add.path;
    if (!add.partition_values.at("country")) saw_null = true;
  }
  EXPECT_TRUE(saw_null) << "__HIVE_DEFAULT_PARTITION__ is a null partition value";
  // Partition pruning works on the converted table.
  auto table = DeltaTable::Open(root);
  ASSERT_TRUE(table.ok());
  auto scan = (*(*table)->Latest())->NewScan().Filter("country = 'fr'").Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ((*scan)->files().size(), 1u);
}

TEST(Convert, SchemasMergeByNameWithMissingColumnsReadingAsNull) {
  TempDir dir;
  const std::string root = dir.str();
  WriteParquet(dir.path() / "old.parquet", *OnlyId({1}));
  WriteParquet(dir.path() / "new.parquet", *IdName({2}, {"b"}));
  auto result = ConvertToDeltaBuilder(root).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->schema->num_fields(), 2);
  EXPECT_EQ(testing::ReadRows(root), (std::multiset<std::string>{"1|null", "2|b"}));
}

TEST(Convert, WithoutStatsTheAddsCarryNone) {
  TempDir dir;
  const std::string root = dir.str();
  WriteParquet(dir.path() / "a.parquet", *IdName({1}, {"a"}));
  auto result = ConvertToDeltaBuilder(root).CollectStats(false).Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const auto commit = testing::ReadCommitFile(root, 0);
  ASSERT_EQ(commit.adds.size(), 1u);
  EXPECT_FALSE(commit.adds[0].stats.has_value());
  EXPECT_EQ(commit.parameters.at("collectStats"), "false");
  EXPECT_EQ(testing::ReadRows(root), (std::multiset<std::string>{"1|a"}));
}

// Every refusal leaves the folder exactly as it was (no _delta_log created).
void ExpectRefused(const TempDir& dir, const ConvertToDeltaBuilder& builder, DeltaErrorCode code,
                   const std::vector<std::string>& mentions) {
  const auto before = testing::DirectoryTree(dir.str());
  auto result = builder.Execute();
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(IsDeltaError(result.status(), code)) << result.status().ToString();
  for (const auto& m : mentions) {
    EXPECT_NE(result.status().message().find(m), std::string::npos)
        << "'" << m << "' not in: " << result.status().message();
  }
  EXPECT_EQ(testing::DirectoryTree(dir.str()), before);
}

TEST(Convert, PartitionLayoutThatDoesNotMatchTheFoldersIsRefused) {
  {
    TempDir dir;
    WriteParquet(dir.path() / "region=eu" / "a.parquet", *OnlyId({1}));
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()).PartitionBy("country STRING"),
                  DeltaErrorCode::kInvalidArgument, {"region=eu", "country"});
  }
  {
    TempDir dir;  // a file above the partition level
    WriteParquet(dir.path() / "country=de" / "a.parquet", *OnlyId({1}));
    WriteParquet(dir.path() / "stray.parquet", *OnlyId({2}));
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()).PartitionBy("country STRING"),
                  DeltaErrorCode::kInvalidArgument, {"stray.parquet"});
  }
  {
    TempDir dir;  // a partitioned folder converted as flat
    WriteParquet(dir.path() / "country=de" / "a.parquet", *OnlyId({1}));
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()), DeltaErrorCode::kInvalidArgument,
                  {"country=de"});
  }
  {
    TempDir dir;  // a value that is not of the declared type
    WriteParquet(dir.path() / "day=monday" / "a.parquet", *OnlyId({1}));
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()).PartitionBy("day INT"),
                  DeltaErrorCode::kInvalidArgument, {"day=monday"});
  }
  {
    TempDir dir;  // the partition column is also in the files
    WriteParquet(dir.path() / "id=1" / "a.parquet", *OnlyId({1}));
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()).PartitionBy("id BIGINT"),
                  DeltaErrorCode::kInvalidArgument, {"id"});
  }
}

TEST(Convert, FilesThatAreNotParquetOrWhoseSchemasConflictAreRefused) {
  {
    TempDir dir;
    WriteParquet(dir.path() / "a.parquet", *OnlyId({1}));
    Touch(dir.path() / "notes.txt", "not parquet at all");
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()), DeltaErrorCode::kInvalidArgument,
                  {"notes.txt"});
  }
  {
    TempDir dir;
    WriteParquet(dir.path() / "a.parquet", *OnlyId({1}));
    arrow::StringBuilder sb;
    ASSERT_TRUE(sb.Append("one").ok());
    WriteParquet(dir.path() / "b.parquet",
                 *arrow::Table::Make(arrow::schema({arrow::field("id", arrow::utf8())}),
                                     {*sb.Finish()}));
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()), DeltaErrorCode::kSchemaMismatch,
                  {"a.parquet", "b.parquet", "id"});
  }
  {
    TempDir dir;  // nothing to convert
    Touch(dir.path() / "_SUCCESS", "");
    ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()), DeltaErrorCode::kInvalidArgument, {});
  }
}

TEST(Convert, AFolderThatIsAlreadyADeltaTableIsRefused) {
  TempDir dir;
  WriteParquet(dir.path() / "a.parquet", *OnlyId({1}));
  ASSERT_TRUE(ConvertToDeltaBuilder(dir.str()).Execute().ok());
  ExpectRefused(dir, ConvertToDeltaBuilder(dir.str()), DeltaErrorCode::kTableAlreadyExists, {});
  EXPECT_EQ(testing::LatestVersion(dir.str()), std::optional<int64_t>(0));
}

}  // namespace
}  // namespace deltacpp
