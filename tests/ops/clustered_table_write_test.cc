// Appending to a liquid-clustered table: allowed, the clustering domain is kept, and the files
// carry statistics on the clustering column even when it lies beyond the first 32 columns.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "deltacpp/api.h"
#include "deltacpp/ops/write.h"
#include "deltacpp/schema.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

TEST(ClusteredTableWrite, AppendKeepsDomainAndCollectsStatsOnClusteringColumn) {
  testing::TempDir dir;
  arrow::FieldVector fields;
  for (int i = 0; i < 34; ++i) fields.push_back(arrow::field("c" + std::to_string(i), arrow::int64()));
  auto schema = arrow::schema(fields);
  auto schema_json = *SchemaToDeltaJson(*schema);
  std::string escaped;
  for (char c : schema_json) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
  std::filesystem::create_directories(dir.path() / "_delta_log");
  {
    std::ofstream out(dir.path() / "_delta_log" / "00000000000000000000.json");
    out << R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["domainMetadata","clustering"]}})" << "\n"
        << R"({"metaData":{"id":"c-1","format":{"provider":"parquet","options":{}},"schemaString":")" << escaped
        << R"(","partitionColumns":[],"configuration":{},"createdTime":1}})" << "\n"
        << R"({"domainMetadata":{"domain":"delta.clustering","configuration":"{\"clusteringColumns\":[[\"c33\"]]}","removed":false}})" << "\n";
  }
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (int i = 0; i < 34; ++i) {
    arrow::Int64Builder b;
    ASSERT_TRUE(b.AppendValues({i * 10LL, i * 10LL + 5}).ok());
    cols.push_back(*b.Finish());
  }
  auto batch = arrow::RecordBatch::Make(schema, 2, cols);
  auto result = WriteTable(dir.str(), *arrow::RecordBatchReader::Make({batch}, schema), {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto snap = *(*DeltaTable::Open(dir.str()))->Latest();
  ASSERT_EQ(snap->domain_metadata().count("delta.clustering"), 1u);
  const auto& stats = static_cast<const arrow::StringArray&>(*snap->files()->GetColumnByName("stats"));
  ASSERT_EQ(stats.length(), 1);
  std::string json(stats.GetView(0));
  EXPECT_NE(json.find("\"c33\":330"), std::string::npos) << json;
  EXPECT_NE(json.find("\"c0\":0"), std::string::npos) << json;
  // A filter on the clustering column can now skip the file.
  auto scan = snap->NewScan().Filter("c33 > 1000").Build();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ((*scan)->num_skipped_files(), 1);
}

}  // namespace
}  // namespace deltacpp
