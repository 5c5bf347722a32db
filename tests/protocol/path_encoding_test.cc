#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "deltacpp/error.h"
#include "protocol/path_encoding.h"
#include "support/temp_dir.h"

namespace deltacpp::internal {
namespace {

TEST(PathEncoding, HiveEscapesPartitionValues) {
  EXPECT_EQ(EscapePartitionValueForPath("abc"), "abc");
  EXPECT_EQ(EscapePartitionValueForPath("a:b"), "a%3Ab");
  EXPECT_EQ(EscapePartitionValueForPath("A/A"), "A%2FA");
  EXPECT_EQ(EscapePartitionValueForPath("100%"), "100%25");
  EXPECT_EQ(EscapePartitionValueForPath("x=y"), "x%3Dy");
  EXPECT_EQ(EscapePartitionValueForPath("\"#%'*/:=?\\{[]^"), "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5E");
  EXPECT_EQ(EscapePartitionValueForPath(std::string("\x00\x01\x1F\x7F", 4)), "%00%01%1F%7F");
  // Not escaped by Hive: space, `}`, `<`, `>`, `|`, `+`, `,`, non-ASCII.
  EXPECT_EQ(EscapePartitionValueForPath("a b}<>|+,~"), "a b}<>|+,~");
  EXPECT_EQ(EscapePartitionValueForPath("\xE6\x97\xA5"), "\xE6\x97\xA5");
  EXPECT_EQ(EscapePartitionValueForPath(""), "");
}

TEST(PathEncoding, UriEncodesPaths) {
  EXPECT_EQ(UriEncodePath("part-00000-abc.c000.snappy.parquet"), "part-00000-abc.c000.snappy.parquet");
  EXPECT_EQ(UriEncodePath("p=a%3Ab/f.parquet"), "p=a%253Ab/f.parquet");
  EXPECT_EQ(UriEncodePath("x=B B/f"), "x=B%20B/f");
  EXPECT_EQ(UriEncodePath(" \"#%<>?[\\]^`{|}"), "%20%22%23%25%3C%3E%3F%5B%5C%5D%5E%60%7B%7C%7D");
  EXPECT_EQ(UriEncodePath(std::string("\x00\x0A\x7F", 3)), "%00%0A%7F");
  // Kept: unreserved, sub-delimiters, ':' '@' '/' and non-ASCII text.
  EXPECT_EQ(UriEncodePath("a-z_A.Z~0/9=:@!$&'()*+,;"), "a-z_A.Z~0/9=:@!$&'()*+,;");
  EXPECT_EQ(UriEncodePath("d=\xE6\x97\xA5/f"), "d=\xE6\x97\xA5/f");
}

TEST(PathEncoding, UriDecodesPaths) {
  EXPECT_EQ(UriDecodePath("p=a%253Ab/f.parquet"), "p=a%3Ab/f.parquet");
  EXPECT_EQ(UriDecodePath("special%20p@%23h"), "special p@#h");
  EXPECT_EQ(UriDecodePath("%e6%97%a5"), "\xE6\x97\xA5");
  EXPECT_EQ(UriDecodePath("%E6%97%A5"), "\xE6\x97\xA5");
  EXPECT_EQ(UriDecodePath("a+b"), "a+b");
  // Malformed escapes stay as written.
  EXPECT_EQ(UriDecodePath("100%"), "100%");
  EXPECT_EQ(UriDecodePath("%2"), "%2");
  EXPECT_EQ(UriDecodePath("%zz%4"), "%zz%4");
  EXPECT_EQ(UriDecodePath("%%41"), "%A");
  EXPECT_EQ(UriDecodePath("%00"), std::string(1, '\0'));
}

TEST(PathEncoding, RoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(UriDecodePath(UriEncodePath(all)), all);
  EXPECT_EQ(UriDecodePath(EscapePartitionValueForPath(all)), all);
  // A partition directory then a file path: decoding add.path gives the directory name on disk, and
  // decoding that again gives the value.
  for (const char* value : {"a:b", "A/A", "B B", "50%", "x=y?z#w", "\xE6\x97\xA5 \x01"}) {
    std::string dir = "p=" + EscapePartitionValueForPath(value);
    std::string add_path = UriEncodePath(dir + "/part-0.parquet");
    EXPECT_EQ(UriDecodePath(add_path), dir + "/part-0.parquet");
    EXPECT_EQ(UriDecodePath(dir.substr(2)), value);
  }
}

TEST(PathEncoding, AbsoluteUris) {
  EXPECT_TRUE(IsAbsoluteUri("file:/tmp/t/part-0.parquet"));
  EXPECT_TRUE(IsAbsoluteUri("file:///tmp/t"));
  EXPECT_TRUE(IsAbsoluteUri("s3://bucket/key"));
  EXPECT_TRUE(IsAbsoluteUri("s3a://bucket/key"));
  EXPECT_TRUE(IsAbsoluteUri("abfss://c@acct.dfs.core.windows.net/p"));
  EXPECT_TRUE(IsAbsoluteUri("hdfs://nn:8020/x"));
  EXPECT_TRUE(IsAbsoluteUri("x-y.z+w:rest"));
  EXPECT_FALSE(IsAbsoluteUri("part-00000.parquet"));
  EXPECT_FALSE(IsAbsoluteUri("p=a%3Ab/part-0.parquet"));
  EXPECT_FALSE(IsAbsoluteUri("/abs/path/f.parquet"));
  EXPECT_FALSE(IsAbsoluteUri("C:\\data\\f.parquet"));
  EXPECT_FALSE(IsAbsoluteUri("1ab://x"));
  EXPECT_FALSE(IsAbsoluteUri(":x"));
  EXPECT_FALSE(IsAbsoluteUri("dir/file:name"));
  EXPECT_FALSE(IsAbsoluteUri(""));
}

// add.path values of corpus tables with special characters decode to files that exist, and encoding the
// on-disk relative path reproduces add.path.
TEST(PathEncoding, CorpusAddPathsDecodeToExistingFiles) {
  namespace fs = std::filesystem;
  int checked = 0;
  for (const char* table : {"delta-rs-delta-0.8.0-special-partition", "dat-partitioned_with_null",
                            "delta-rs-partition-type-primitives", "dat-multi_partitioned"}) {
    fs::path root = fs::path(deltacpp::testing::ConformanceDir()) / "tables" / table;
    simdjson::dom::parser parser;
    for (const auto& e : fs::directory_iterator(root / "_delta_log")) {
      if (e.path().extension() != ".json") continue;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        simdjson::dom::element doc;
        ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS);
        std::string_view path;
        if (doc["add"]["path"].get_string().get(path) != simdjson::SUCCESS) continue;
        std::string decoded = UriDecodePath(path);
        if (!fs::exists(root / decoded)) continue;  // some tables were vacuumed
        EXPECT_EQ(UriEncodePath(decoded), path);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 3);
  // The delta-rs special-partition table has partition x = "A/A" in directory x=A%2FA.
  EXPECT_EQ("x=" + EscapePartitionValueForPath("A/A"), "x=A%2FA");
  EXPECT_TRUE(fs::exists(fs::path(deltacpp::testing::ConformanceDir()) / "tables" /
                         "delta-rs-delta-0.8.0-special-partition" / UriDecodePath("x=A%252FA")));
}

TEST(PathEncoding, ResolvesFilesInsideTheTableRoot) {
  const std::string root = "/data/t";
  EXPECT_EQ(*ResolveFileInTable(root, root, "part-0.parquet"), "/data/t/part-0.parquet");
  EXPECT_EQ(*ResolveFileInTable(root, root, "p=a%3Ab/f.parquet"), "/data/t/p=a:b/f.parquet");
  EXPECT_EQ(*ResolveFileInTable(root, root, "a/./b/../f.parquet"), "/data/t/a/f.parquet");
  // Absolute paths and file URIs are allowed when they lie inside the root.
  EXPECT_EQ(*ResolveFileInTable(root, root, "/data/t/x/f.parquet"), "/data/t/x/f.parquet");
  EXPECT_EQ(*ResolveFileInTable(root, root, "file:///data/t/f%20g"), "/data/t/f g");
  EXPECT_EQ(*ResolveFileInTable(root, root, "file:/data/t/f"), "/data/t/f");
  EXPECT_EQ(*ResolveFileInTable(root, root, "file://localhost/data/t/f"), "/data/t/f");
  // Sidecars are relative to their own directory.
  EXPECT_EQ(*ResolveFileInTable(root, root + "/_delta_log/_sidecars", "s.parquet"),
            "/data/t/_delta_log/_sidecars/s.parquet");
  // A root of "/" holds everything.
  EXPECT_EQ(*ResolveFileInTable("/", "/", "/etc/x"), "/etc/x");
}

TEST(PathEncoding, RefusesFilesOutsideTheTableRoot) {
  const std::string root = "/data/t";
  for (const char* raw : {"../x.parquet", "a/../../x", "%2E%2E/x", "..%2Fx", "a/%2e%2e/%2e%2e/x",
                          "/etc/passwd", "file:///tmp/x", "file:/data/tx/f", "/data/t/../u/f",
                          "file://otherhost/data/t/f", "s3://bucket/data/t/f",
                          "hdfs://nn/data/t/f", "a/%00/f", "file:///data/t/%00f", ""}) {
    auto r = ResolveFileInTable(root, root, raw);
    ASSERT_FALSE(r.ok()) << raw << " resolved to " << *r;
    EXPECT_TRUE(IsDeltaError(r.status(), DeltaErrorCode::kCorruptLog)) << raw << ": " << r.status();
    if (*raw != '\0') {
      EXPECT_NE(r.status().message().find(std::string("'") + raw + "'"), std::string::npos)
          << r.status();
    }
  }
  // A sidecar may not climb out of the table either, only out of `_sidecars`.
  EXPECT_FALSE(ResolveFileInTable(root, root + "/_delta_log/_sidecars", "../../../x").ok());
  EXPECT_EQ(*ResolveFileInTable(root, root + "/_delta_log/_sidecars", "../../d/x.parquet"),
            "/data/t/d/x.parquet");
}

}  // namespace
}  // namespace deltacpp::internal
