#include "protocol/deletion_vector.h"

#include <arrow/filesystem/localfs.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "deltacpp/error.h"
#include "support/temp_dir.h"

namespace deltacpp::internal {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

std::string TableDir(const std::string& id) {
  return deltacpp::testing::ConformanceDir() + "/tables/" + id;
}

/// A DV descriptor found on an `add` in a commit, with where it was found.
struct FoundDv {
  int64_t version = 0;
  std::string data_path;
  DeletionVectorDescriptor dv;
};

/// All `add.deletionVector` descriptors of the JSON commits of `table_dir`, in version order.
std::vector<FoundDv> AddDeletionVectors(const std::string& table_dir) {
  std::vector<FoundDv> found;
  std::vector<fs::path> commits;
  fs::path log = fs::path(table_dir) / "_delta_log";
  if (!fs::is_directory(log)) return found;
  for (const auto& entry : fs::directory_iterator(log)) {
    const auto name = entry.path().filename().string();
    if (name.size() == 25 && name.ends_with(".json") && name[0] != '.') {
      commits.push_back(entry.path());
    }
  }
  std::sort(commits.begin(), commits.end());
  for (const auto& commit : commits) {
    const int64_t version = std::stoll(commit.filename().string().substr(0, 20));
    std::istringstream lines(ReadAll(commit));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      rapidjson::Document doc;
      doc.Parse(line.data(), line.size());
      EXPECT_FALSE(doc.HasParseError()) << commit;
      if (doc.HasParseError() || !doc.IsObject()) continue;
      auto add = doc.FindMember("add");
      if (add == doc.MemberEnd() || !add->value.IsObject()) continue;
      auto d = add->value.FindMember("deletionVector");
      if (d == add->value.MemberEnd() || !d->value.IsObject()) continue;
      const auto& o = d->value;
      FoundDv f;
      f.version = version;
      f.data_path = add->value["path"].GetString();
      f.dv.storage_type = o["storageType"].GetString();
      f.dv.path_or_inline_dv = o["pathOrInlineDv"].GetString();
      auto offset = o.FindMember("offset");
      if (offset != o.MemberEnd() && offset->value.IsInt()) f.dv.offset = offset->value.GetInt();
      f.dv.size_in_bytes = o["sizeInBytes"].GetInt();
      f.dv.cardinality = o["cardinality"].GetInt64();
      found.push_back(std::move(f));
    }
  }
  return found;
}

DeletionVectorDescriptor Dv(std::string storage_type, std::string payload) {
  DeletionVectorDescriptor dv;
  dv.storage_type = std::move(storage_type);
  dv.path_or_inline_dv = std::move(payload);
  return dv;
}

std::vector<uint64_t> ReadOk(const DeletionVectorDescriptor& dv, const std::string& root) {
  arrow::fs::LocalFileSystem local;
  auto rows = ReadDeletedRowIndexes(dv, root, local);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? *rows : std::vector<uint64_t>{};
}

// ---------------------------------------------------------------------------------------------
// Z85, CRC-32, paths

TEST(Z85, MatchesTheSpecificationTestVector) {
  const std::string bytes = {'\x86', '\x4F', '\xD2', '\x6F', '\xB5', '\x59', '\xF7', '\x5B'};
  EXPECT_EQ(Z85Encode(bytes), "HelloWorld");
  auto decoded = Z85Decode("HelloWorld");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, bytes);
}

TEST(Z85, PadsPartialGroupsWithZeros) {
  EXPECT_EQ(Z85Encode(std::string("\x86\x4F", 2)), Z85Encode(std::string("\x86\x4F\0\0", 4)));
  EXPECT_EQ(Z85Encode(""), "");
}

TEST(Z85, RejectsBadLengthCharactersAndOverflow) {
  EXPECT_TRUE(Z85Decode("Hello1").status().IsInvalid());
  EXPECT_TRUE(Z85Decode("Hell~").status().IsInvalid());
  EXPECT_TRUE(Z85Decode("Hell\"").status().IsInvalid());
  // "#####" = 85^5 - 1 > 2^32 - 1.
  EXPECT_TRUE(Z85Decode("#####").status().IsInvalid());
}

TEST(Z85, DecodesTheHashPaddedTailGroup) {
  // "##093": two bytes missing, the remaining two are 9 * 85 + 3 = 0x0300.
  auto decoded = Z85Decode("HelloWorld##093");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B\x03\x00", 10));
  EXPECT_EQ(*Z85Decode("#0000"), std::string(3, '\0'));
  EXPECT_TRUE(Z85Decode("##093Hello").status().IsInvalid());  // only the last group
  EXPECT_TRUE(Z85Decode("####0").status().IsInvalid());       // at most 3 bytes missing
  EXPECT_TRUE(Z85Decode("##%00").status().IsInvalid());       // value exceeds 16 bits
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
}

TEST(DeletionVectorPath, UuidRelativeWithRandomPrefixDirectory) {
  DeletionVectorDescriptor dv = Dv("u", "ab^-aqEH.-t@S}K{vb[*k^");
  auto path = DeletionVectorAbsolutePath(dv, "/data/t");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(*path, "/data/t/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
  // A trailing slash on the root does not double up.
  EXPECT_EQ(*DeletionVectorAbsolutePath(dv, "/data/t/"), *path);
}

TEST(DeletionVectorPath, UuidRelativeWithoutPrefix) {
  DeletionVectorDescriptor dv = Dv("u", "ITfmIXOK!>U^L:if1E+a");
  auto path = DeletionVectorAbsolutePath(dv, "/t");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, "/t/deletion_vector_8aebe228-b96c-4831-b0b6-22882eb9a3d3.bin");
}

TEST(DeletionVectorPath, MalformedUuidPayloadIsCorruptLog) {
  DeletionVectorDescriptor short_dv = Dv("u", "abc");
  auto st = DeletionVectorAbsolutePath(short_dv, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  DeletionVectorDescriptor bad_char = Dv("u", "ITfmIXOK!>U^L:if1E+~");
  st = DeletionVectorAbsolutePath(bad_char, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("/t"));
}

TEST(DeletionVectorPath, AbsoluteFileUrisAreDecoded) {
  DeletionVectorDescriptor dv = Dv("p", "");
  dv.path_or_inline_dv = "file:///tmp/my%20table/dv%25x.bin";
  EXPECT_EQ(*DeletionVectorAbsolutePath(dv, "/tmp"), "/tmp/my table/dv%x.bin");
  dv.path_or_inline_dv = "file:/tmp/a/b.bin";
  EXPECT_EQ(*DeletionVectorAbsolutePath(dv, "/tmp"), "/tmp/a/b.bin");
  dv.path_or_inline_dv = "file://localhost/tmp/a/b.bin";
  EXPECT_EQ(*DeletionVectorAbsolutePath(dv, "/tmp/"), "/tmp/a/b.bin");
  dv.path_or_inline_dv = "/tmp/a%3Db.bin";
  EXPECT_EQ(*DeletionVectorAbsolutePath(dv, "/tmp"), "/tmp/a=b.bin");
}

TEST(DeletionVectorPath, PathsLeadingOutOfTheTableAreCorruptLog) {
  DeletionVectorDescriptor dv = Dv("p", "");
  for (const char* raw : {"file:///etc/passwd", "/etc/passwd", "/t/../etc/passwd",
                          "/t/%2E%2E/etc/passwd", "file:///tx/dv.bin"}) {
    dv.path_or_inline_dv = raw;
    auto st = DeletionVectorAbsolutePath(dv, "/t").status();
    EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << raw << ": " << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("outside the table root")) << raw;
    EXPECT_THAT(st.message(), HasSubstr(raw));
  }
  // A random prefix that climbs out of the table.
  DeletionVectorDescriptor u = Dv("u", "../../x/ITfmIXOK!>U^L:if1E+a");
  auto st = DeletionVectorAbsolutePath(u, "/data/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("/x/deletion_vector_"));
  // ... but `..` that stays inside is only a spelling.
  u.path_or_inline_dv = "a/../b/ITfmIXOK!>U^L:if1E+a";
  EXPECT_EQ(*DeletionVectorAbsolutePath(u, "/data/t"),
            "/data/t/b/deletion_vector_8aebe228-b96c-4831-b0b6-22882eb9a3d3.bin");
}

TEST(DeletionVectorPath, OtherSchemesAndInlineHaveNoLocalPath) {
  DeletionVectorDescriptor dv = Dv("p", "s3://bucket/t/dv.bin");
  auto st = DeletionVectorAbsolutePath(dv, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("s3://bucket/t/dv.bin"));
  dv.path_or_inline_dv = "file://otherhost/t/dv.bin";
  st = DeletionVectorAbsolutePath(dv, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  dv.path_or_inline_dv = "relative/dv.bin";
  st = DeletionVectorAbsolutePath(dv, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  DeletionVectorDescriptor inline_dv = Dv("i", "HelloWorld");
  st = DeletionVectorAbsolutePath(inline_dv, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kInvalidArgument)) << st.ToString();
  DeletionVectorDescriptor unknown = Dv("x", "HelloWorld");
  st = DeletionVectorAbsolutePath(unknown, "/t").status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
}

// ---------------------------------------------------------------------------------------------
// Serialized bitmap array

TEST(RoaringBitmapArray, EmptySetIsMagicAndZeroBuckets) {
  auto bytes = SerializeRoaringBitmapArray({});
  ASSERT_TRUE(bytes.ok());
  // 1681511377 = 0x6439D3D1, little-endian, then a uint64 zero.
  EXPECT_EQ(*bytes, std::string("\xD1\xD3\x39\x64\0\0\0\0\0\0\0\0", 12));
  auto rows = DeserializeRoaringBitmapArray(*bytes);
  ASSERT_TRUE(rows.ok());
  EXPECT_THAT(*rows, IsEmpty());
}

TEST(RoaringBitmapArray, RoundTripsArrayBitsetRunContainersAndHighKeys) {
  std::vector<uint64_t> rows = {0, 3, 7, 65535, 65536, 70000};
  for (uint64_t r = 200000; r < 210000; r += 2) rows.push_back(r);  // bitset container
  for (uint64_t r = 1000000; r < 1100000; ++r) rows.push_back(r);   // run container
  rows.push_back((uint64_t{1} << 32) + 5);
  rows.push_back((uint64_t{1} << 40) + 123456);
  rows.push_back((uint64_t{1} << 63) - 1);
  auto bytes = SerializeRoaringBitmapArray(rows);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = DeserializeRoaringBitmapArray(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, rows);
}

TEST(RoaringBitmapArray, WriterRejectsUnsortedDuplicateAndTopBitRows) {
  EXPECT_TRUE(SerializeRoaringBitmapArray({3, 1}).status().IsInvalid());
  EXPECT_TRUE(SerializeRoaringBitmapArray({1, 1}).status().IsInvalid());
  EXPECT_TRUE(SerializeRoaringBitmapArray({uint64_t{1} << 63}).status().IsInvalid());
}

TEST(RoaringBitmapArray, ReadsTheLegacyNativeLayout) {
  // Take the 32-bit portable bitmaps out of two single-bucket portable serializations.
  auto a = *SerializeRoaringBitmapArray({1, 2, 3});
  auto b = *SerializeRoaringBitmapArray({9});
  std::string bitmap_a = a.substr(16), bitmap_b = b.substr(16);
  auto le32 = [](uint32_t v) {
    return std::string{static_cast<char>(v), static_cast<char>(v >> 8),
                       static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  };
  std::string native = le32(1681511376) + le32(2) + le32(bitmap_a.size()) + bitmap_a +
                       le32(bitmap_b.size()) + bitmap_b;
  auto rows = DeserializeRoaringBitmapArray(native);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_THAT(*rows, ElementsAre(1, 2, 3, (uint64_t{1} << 32) + 9));
}

TEST(RoaringBitmapArray, MalformedInputIsCorruptLog) {
  auto good = *SerializeRoaringBitmapArray({1, 2, 3});
  std::vector<std::string> bad = {
      "",
      std::string("\x01\x02\x03\x04", 4) + good.substr(4),  // unknown magic
      good.substr(0, good.size() - 1),                       // truncated bitmap
      good + "x",                                            // trailing bytes
      good.substr(0, 4) + std::string("\xFF\xFF\xFF\x7F\0\0\0\0", 8) + good.substr(12),
  };
  for (const auto& bytes : bad) {
    auto st = DeserializeRoaringBitmapArray(bytes).status();
    EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  }
}

// ---------------------------------------------------------------------------------------------
// Inline DVs

TEST(InlineDeletionVector, RoundTripsThroughTheDescriptor) {
  std::vector<std::vector<uint64_t>> cases = {
      {}, {0}, {0, 1, 4, 5}, {3, 1000, 100000, (uint64_t{1} << 33) + 7}};
  std::vector<uint64_t> dense(10000);
  std::iota(dense.begin(), dense.end(), 5);
  cases.push_back(dense);
  for (const auto& rows : cases) {
    auto dv = MakeInlineDeletionVector(rows);
    ASSERT_TRUE(dv.ok()) << dv.status().ToString();
    EXPECT_EQ(dv->storage_type, "i");
    EXPECT_FALSE(dv->offset.has_value());
    EXPECT_EQ(dv->cardinality, static_cast<int64_t>(rows.size()));
    EXPECT_EQ(dv->path_or_inline_dv, *EncodeInlineDeletionVector(rows));
    EXPECT_EQ(dv->path_or_inline_dv.size(), (dv->size_in_bytes + 3) / 4 * 5);
    EXPECT_EQ(ReadOk(*dv, "/nonexistent-table"), rows);
  }
}

TEST(InlineDeletionVector, CardinalityAndSizeMismatchesAreCorruptLog) {
  auto dv = *MakeInlineDeletionVector({1, 2});
  arrow::fs::LocalFileSystem local;
  auto wrong_card = dv;
  wrong_card.cardinality = 3;
  auto st = ReadDeletedRowIndexes(wrong_card, "/t", local).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("cardinality 3"));
  auto wrong_size = dv;
  wrong_size.size_in_bytes += 8;
  st = ReadDeletedRowIndexes(wrong_size, "/t", local).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  auto bad_text = dv;
  bad_text.path_or_inline_dv.back() = '~';
  st = ReadDeletedRowIndexes(bad_text, "/t", local).status();
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
}

// ---------------------------------------------------------------------------------------------
// Corpus DVs

TEST(CorpusDeletionVectors, DatDeletionVectorsDeletesAllButRowOne) {
  const auto root = TableDir("dat-deletion_vectors");
  auto dvs = AddDeletionVectors(root);
  ASSERT_EQ(dvs.size(), 1u);
  EXPECT_EQ(dvs[0].dv.storage_type, "u");
  // Rows of the file: (a,25) (b,228) (a,692) (a,604) (a,95); only (b,228) survives.
  EXPECT_THAT(ReadOk(dvs[0].dv, root), ElementsAre(0, 2, 3, 4));
}

TEST(CorpusDeletionVectors, KernelShortDvDeletesFirstThreeRows) {
  const auto root = TableDir("kernel-rs-with-short-dv");
  auto dvs = AddDeletionVectors(root);
  ASSERT_EQ(dvs.size(), 1u);
  EXPECT_EQ(dvs[0].data_path,
            "part-00000-8029f411-746c-41c1-a0c1-c5eb867c5d05-c000.snappy.parquet");
  EXPECT_THAT(ReadOk(dvs[0].dv, root), ElementsAre(0, 1, 2));
}

TEST(CorpusDeletionVectors, SparkDvSmallDeletesFirstAndLastRow) {
  // The DV file carries delta-spark's test-suite name prefix, which the descriptor omits.
  const auto root = TableDir("delta-spark-table-with-dv-small");
  auto dvs = AddDeletionVectors(root);
  ASSERT_EQ(dvs.size(), 1u);
  EXPECT_THAT(ReadOk(dvs[0].dv, root), ElementsAre(0, 9));
}

TEST(CorpusDeletionVectors, CdfTableInlineAndFileDvs) {
  // Values 0..9 in one file at row positions 0..9. v1 deletes 0,9 (file DV); v3 deletes 0,1,4,5;
  // v4 restores 1,4; v5 restores 0,5 and deletes 3 (inline DVs).
  const auto root = TableDir("kernel-rs-cdf-table-with-dv");
  auto dvs = AddDeletionVectors(root);
  std::map<int64_t, std::vector<uint64_t>> by_version;
  for (const auto& f : dvs) by_version[f.version] = ReadOk(f.dv, root);
  EXPECT_THAT(by_version[1], ElementsAre(0, 9));
  EXPECT_THAT(by_version[3], ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(by_version[4], ElementsAre(0, 5));
  EXPECT_THAT(by_version[5], ElementsAre(3));
  bool saw_inline = false;
  for (const auto& f : dvs) saw_inline |= f.dv.storage_type == "i";
  EXPECT_TRUE(saw_inline);
}

TEST(CorpusDeletionVectors, EveryJsonCommitDvMatchesItsCardinality) {
  // Every DV on an `add` in any corpus table decodes to exactly `cardinality` sorted rows.
  int checked = 0, missing = 0;
  const std::string tables = deltacpp::testing::ConformanceDir() + "/tables";
  for (const auto& entry : fs::directory_iterator(tables)) {
    if (!entry.is_directory()) continue;
    const std::string root = entry.path().string();
    for (const auto& f : AddDeletionVectors(root)) {
      SCOPED_TRACE(root + " v" + std::to_string(f.version) + " " + f.data_path);
      arrow::fs::LocalFileSystem local;
      auto rows = ReadDeletedRowIndexes(f.dv, root, local);
      if (!rows.ok() && IsDeltaError(rows.status(), DeltaErrorCode::kMissingFile)) {
        // Vacuumed or never shipped with the table: only acceptable when the DV file is absent.
        auto path = DeletionVectorAbsolutePath(f.dv, root);
        ASSERT_TRUE(path.ok());
        EXPECT_FALSE(fs::exists(*path));
        ++missing;
        continue;
      }
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      EXPECT_EQ(static_cast<int64_t>(rows->size()), f.dv.cardinality);
      EXPECT_TRUE(std::is_sorted(rows->begin(), rows->end()));
      ++checked;
    }
  }
  RecordProperty("checked", checked);
  RecordProperty("missing", missing);
  EXPECT_GE(checked, 100);
}

// ---------------------------------------------------------------------------------------------
// Typed errors on DV files

class DeletionVectorFileErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto source = TableDir("dat-deletion_vectors");
    auto dvs = AddDeletionVectors(source);
    ASSERT_EQ(dvs.size(), 1u);
    dv_ = dvs[0].dv;
    auto source_file = DeletionVectorAbsolutePath(dv_, source);
    ASSERT_TRUE(source_file.ok());
    file_ = *DeletionVectorAbsolutePath(dv_, dir_.str());
    contents_ = ReadAll(*source_file);
    ASSERT_EQ(contents_.size(), static_cast<size_t>(1 + 4 + dv_.size_in_bytes + 4));
  }

  arrow::Status Read(const DeletionVectorDescriptor& dv) {
    return ReadDeletedRowIndexes(dv, dir_.str(), local_).status();
  }

  deltacpp::testing::TempDir dir_;
  arrow::fs::LocalFileSystem local_;
  DeletionVectorDescriptor dv_;
  std::string file_;
  std::string contents_;
};

TEST_F(DeletionVectorFileErrors, IntactCopyReads) {
  WriteAll(file_, contents_);
  EXPECT_THAT(ReadOk(dv_, dir_.str()), ElementsAre(0, 2, 3, 4));
}

TEST_F(DeletionVectorFileErrors, MissingFileIsMissingFileNamingRootAndFile) {
  auto st = Read(dv_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kMissingFile)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr(dir_.str()));
  EXPECT_THAT(st.message(), HasSubstr("deletion_vector_8aebe228-b96c-4831-b0b6-22882eb9a3d3.bin"));
}

TEST_F(DeletionVectorFileErrors, FlippedBitmapByteIsChecksumCorruption) {
  std::string bad = contents_;
  bad[1 + 4 + 10] ^= 0x01;
  WriteAll(file_, bad);
  auto st = Read(dv_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("checksum"));
  EXPECT_THAT(st.message(), HasSubstr(file_));
}

TEST_F(DeletionVectorFileErrors, FlippedChecksumIsCorruption) {
  std::string bad = contents_;
  bad.back() ^= 0x40;
  WriteAll(file_, bad);
  auto st = Read(dv_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("checksum"));
}

TEST_F(DeletionVectorFileErrors, BadMagicWithValidChecksumIsCorruption) {
  std::string bitmap = contents_.substr(5, dv_.size_in_bytes);
  bitmap[0] ^= 0x7F;
  const uint32_t crc = Crc32(bitmap);
  std::string bad = contents_.substr(0, 5) + bitmap;
  for (int shift = 24; shift >= 0; shift -= 8) bad.push_back(static_cast<char>(crc >> shift));
  WriteAll(file_, bad);
  auto st = Read(dv_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("magic"));
}

TEST_F(DeletionVectorFileErrors, SizeMismatchTruncationAndVersionAreCorruption) {
  WriteAll(file_, contents_);
  auto other_size = dv_;
  other_size.size_in_bytes -= 1;
  EXPECT_TRUE(IsDeltaError(Read(other_size), DeltaErrorCode::kCorruptLog));
  auto wrong_card = dv_;
  wrong_card.cardinality = 5;
  EXPECT_TRUE(IsDeltaError(Read(wrong_card), DeltaErrorCode::kCorruptLog));

  WriteAll(file_, contents_.substr(0, contents_.size() - 2));
  auto st = Read(dv_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();

  std::string wrong_version = contents_;
  wrong_version[0] = 2;
  WriteAll(file_, wrong_version);
  st = Read(dv_);
  EXPECT_TRUE(IsDeltaError(st, DeltaErrorCode::kCorruptLog)) << st.ToString();
}

TEST_F(DeletionVectorFileErrors, AbsolutePathDescriptorAtAnOffset) {
  // Two DVs in one file: a second copy starts after the first one.
  const std::string entry = contents_.substr(1);
  fs::path path = dir_.path() / "dir with space" / "dvs.bin";
  fs::create_directories(path.parent_path());
  WriteAll(path, contents_ + entry);
  DeletionVectorDescriptor p = dv_;
  p.storage_type = "p";
  p.path_or_inline_dv = "file://" + dir_.str() + "/dir%20with%20space/dvs.bin";
  p.offset = static_cast<int32_t>(contents_.size());
  EXPECT_THAT(ReadOk(p, dir_.str()), ElementsAre(0, 2, 3, 4));
  p.offset = 1;
  EXPECT_THAT(ReadOk(p, dir_.str()), ElementsAre(0, 2, 3, 4));
}

}  // namespace
}  // namespace deltacpp::internal
