// The reconciliation key of add/remove paths: every spelling of one file (relative, absolute,
// `file:` URI, percent-encoded) must give the same key, so a remove spelled differently from its
// add still ends the file.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "deltacpp/api.h"
#include "log_test_util.h"
#include "protocol/path_encoding.h"
#include "support/temp_dir.h"

namespace deltacpp {
namespace {

using internal::CanonicalFilePath;
using testing::AddLine;
using testing::Load;
using testing::MetadataLine;
using testing::ProtocolLine;
using testing::RemoveLine;
using testing::TempDir;
using testing::WriteCommit;

TEST(CanonicalFilePath, PlainRelativePathIsItself) {
  EXPECT_EQ(CanonicalFilePath("part-0.parquet", "/t"), "part-0.parquet");
  EXPECT_EQ(CanonicalFilePath("p=1/part-0.parquet", "/t"), "p=1/part-0.parquet");
}

TEST(CanonicalFilePath, RelativePathIsDecoded) {
  EXPECT_EQ(CanonicalFilePath("x%20y.parquet", "/t"), "x y.parquet");
  EXPECT_EQ(CanonicalFilePath("p=a%3Ab/f.parquet", "/t"), "p=a:b/f.parquet");
}

TEST(CanonicalFilePath, AbsoluteSpellingsOfOneFileAgree) {
  const std::string expected = "/some/unqualified/absolute/path";
  EXPECT_EQ(CanonicalFilePath("/some/unqualified/absolute/path", "/t"), expected);
  EXPECT_EQ(CanonicalFilePath("file:/some/unqualified/absolute/path", "/t"), expected);
  EXPECT_EQ(CanonicalFilePath("file:///some/unqualified/absolute/path", "/t"), expected);
  EXPECT_EQ(CanonicalFilePath("file://localhost/some/unqualified/absolute/path", "/t"), expected);
  EXPECT_EQ(CanonicalFilePath("FILE:/some/unqualified//absolute/./path", "/t"), expected);
  EXPECT_EQ(CanonicalFilePath("file:/a%20b/c", "/t"), "/a b/c");
  EXPECT_EQ(CanonicalFilePath("/a%20b/c", "/t"), "/a b/c");
}

TEST(CanonicalFilePath, AbsolutePathInsideTheRootEqualsTheRelativePath) {
  const std::string root = "/data/my table";
  const std::string relative = CanonicalFilePath("p%3D1/x%20y.parquet", root);
  EXPECT_EQ(relative, "p=1/x y.parquet");
  EXPECT_EQ(CanonicalFilePath("/data/my table/p=1/x y.parquet", root), relative);
  EXPECT_EQ(CanonicalFilePath("file:/data/my%20table/p%3D1/x%20y.parquet", root), relative);
  EXPECT_EQ(CanonicalFilePath("file:///data/my%20table/p=1/x%20y.parquet", root), relative);
  // A sibling directory that shares the root's name as a prefix is outside the root.
  EXPECT_EQ(CanonicalFilePath("/data/my table2/f.parquet", root), "/data/my table2/f.parquet");
  EXPECT_EQ(CanonicalFilePath("/data/f.parquet", root), "/data/f.parquet");
}

TEST(CanonicalFilePath, OtherSchemesAreDecodedWithLowerCaseScheme) {
  EXPECT_EQ(CanonicalFilePath("S3://bucket/a%20b.parquet", "/t"), "s3://bucket/a b.parquet");
  EXPECT_EQ(CanonicalFilePath("s3://bucket/a b.parquet", "/t"), "s3://bucket/a b.parquet");
}

std::set<std::string> LivePaths(const Snapshot& s) {
  std::set<std::string> out;
  const auto& paths = static_cast<const arrow::StringArray&>(*s.files()->GetColumnByName("path"));
  for (int64_t i = 0; i < paths.length(); ++i) out.insert(std::string(paths.GetView(i)));
  return out;
}

TEST(Replay, RemoveSpelledAsFileUriEndsAbsoluteAdd) {
  TempDir dir;
  WriteCommit(dir.str(), 0, {ProtocolLine(), MetadataLine(), AddLine("/elsewhere/f.parquet")});
  WriteCommit(dir.str(), 1, {RemoveLine("file:/elsewhere/f.parquet")});
  auto v0 = Load(dir.str(), 0);
  ASSERT_TRUE(v0);
  EXPECT_EQ(v0->num_files(), 1);
  auto v1 = Load(dir.str());
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->num_files(), 0);
}

TEST(Replay, AbsoluteSpellingInsideTheRootMatchesTheRelativeAdd) {
  TempDir dir;
  const std::string root = dir.str();
  WriteCommit(root, 0,
              {ProtocolLine(), MetadataLine(), AddLine("a%20b.parquet"), AddLine("c.parquet"),
               AddLine("d.parquet")});
  WriteCommit(root, 1,
              {RemoveLine("file://" + root + "/a%20b.parquet"), RemoveLine(root + "/c.parquet")});
  auto v1 = Load(root);
  ASSERT_TRUE(v1);
  EXPECT_EQ(LivePaths(*v1), (std::set<std::string>{"d.parquet"}));
  // And the other way round: an absolute add, a relative remove.
  WriteCommit(root, 2, {AddLine("file:" + root + "/e.parquet")});
  WriteCommit(root, 3, {RemoveLine("e.parquet")});
  auto v3 = Load(root);
  ASSERT_TRUE(v3);
  EXPECT_EQ(LivePaths(*v3), (std::set<std::string>{"d.parquet"}));
}

}  // namespace
}  // namespace deltacpp
