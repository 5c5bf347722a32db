// DESCRIBE DETAIL: every column from the snapshot it describes, clustering columns decoded
// from their domain, a malformed clustering domain refused.
#include <gtest/gtest.h>

#include "deltacpp/api.h"
#include "deltacpp/ops/describe_detail.h"
#include "ops/dml_test_util.h"
#include "ops/ops_test_util.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using testing::TempDir;

TEST(DescribeDetail, ColumnsComeFromTheSnapshot) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {{"delta.appendOnly", "true"}, {"owner", "me"}}, true);
  testing::AppendIdNamePart(root, {1, 2}, {"a", "b"}, "x");
  testing::AppendIdNamePart(root, {3}, {"c"}, "y");
  auto snapshot = testing::Latest(root);
  auto d = DescribeDetail(*snapshot);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->format, "delta");
  EXPECT_EQ(d->id, snapshot->metadata().id);
  EXPECT_EQ(d->location, "file:" + snapshot->table_root());
  EXPECT_EQ(d->created_at_ms, snapshot->metadata().created_time);
  EXPECT_EQ(d->last_modified_ms, snapshot->timestamp_ms());
  EXPECT_EQ(d->partition_columns, std::vector<std::string>{"part"});
  EXPECT_TRUE(d->clustering_columns.empty());
  EXPECT_EQ(d->num_files, 2);
  int64_t bytes = 0;
  for (const auto& f : testing::LiveFiles(root, snapshot->version())) {
    bytes += static_cast<int64_t>(std::filesystem::file_size(std::filesystem::path(root) / f));
  }
  EXPECT_EQ(d->size_in_bytes, bytes);
  EXPECT_EQ(d->properties.at("owner"), "me");
  EXPECT_EQ(d->properties.at("delta.appendOnly"), "true");
  EXPECT_EQ(d->min_reader_version, 1);
  EXPECT_EQ(d->min_writer_version, 2);
  EXPECT_EQ(d->table_features, (std::vector<std::string>{"appendOnly", "invariants"}));
}

TEST(DescribeDetail, ClusteringColumnsAreReadFromTheirDomain) {
  TempDir dir;
  const std::string root = dir.str();
  testing::CreateIdNamePart(root, {}, false);
  auto store = MakeLocalLogStore();
  const std::string upgrade =
      R"({"commitInfo":{"operation":"CLUSTER BY"}})" "\n"
      R"({"protocol":{"minReaderVersion":1,"minWriterVersion":7,)"
      R"("writerFeatures":["appendOnly","invariants","domainMetadata","clustering"]}})" "\n";
  ASSERT_TRUE(store->PutIfAbsent(root + "/_delta_log/" + testing::CommitName(1),
                                 upgrade + R"({"domainMetadata":{"domain":"delta.clustering",)"
                                           R"("configuration":"{\"clusteringColumns\":)"
                                           R"([[\"name\"],[\"id\"]]}","removed":false}})"
                                           "\n")
                  .ok());
  auto d = DescribeDetail(*testing::Latest(root));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->clustering_columns, (std::vector<std::string>{"name", "id"}));
  EXPECT_EQ(d->min_writer_version, 7);

  ASSERT_TRUE(store->PutIfAbsent(root + "/_delta_log/" + testing::CommitName(2),
                                 R"({"commitInfo":{"operation":"CLUSTER BY"}})" "\n"
                                 R"({"domainMetadata":{"domain":"delta.clustering",)"
                                 R"("configuration":"not json","removed":false}})" "\n")
                  .ok());
  auto bad = DescribeDetail(*testing::Latest(root));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(testing::Code(bad.status()), "CorruptLog") << bad.status().ToString();
}

}  // namespace
}  // namespace deltacpp
