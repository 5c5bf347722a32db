// Deletion vector writer: inline and file DVs read back by the reader, the DV file layout byte
// by byte, unions with existing DVs, whole-file deletes, errors, Abort and failed writes.
#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "protocol/deletion_vector.h"
#include "support/temp_dir.h"
#include "write/deletion_vector_writer.h"

namespace deltacpp::internal {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Bit-by-bit CRC-32 (reflected polynomial 0xEDB88320), independent of the library's table.
uint32_t ReferenceCrc32(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : data) {
    crc ^= static_cast<uint8_t>(ch);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string BigEndian32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every deletion_vector_*.bin below `root`, however deep.
std::vector<fs::path> DvFiles(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.find("deletion_vector_") != std::string::npos) {
      out.push_back(entry.path());
    }
  }
  return out;
}

// Every regular file below `root`, temporary ones included.
size_t FileCount(const fs::path& root) {
  size_t n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) n += entry.is_regular_file();
  return n;
}

std::vector<uint64_t> Evens(uint64_t count) {
  std::vector<uint64_t> rows;
  for (uint64_t i = 0; i < count; ++i) rows.push_back(2 * i);
  return rows;
}

class DeletionVectorWriterTest : public ::testing::Test {
 protected:
  std::unique_ptr<DeletionVectorWriter> Writer(int32_t max_inline_bytes = -1,
                                               int32_t random_prefix_length = 0) {
    DeletionVectorWriterOptions options;
    options.table_root = dir_.str();
    options.max_inline_bytes = max_inline_bytes;
    options.random_prefix_length = random_prefix_length;
    options.fs = fs_;
    auto writer = DeletionVectorWriter::Make(options);
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    return writer.ok() ? std::move(*writer) : nullptr;
  }

  std::vector<uint64_t> ReadBack(const DeletionVectorDescriptor& dv) {
    auto rows = ReadDeletedRowIndexes(dv, dir_.str(), *fs_);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<uint64_t>{};
  }

  TempDir dir_;
  std::shared_ptr<arrow::fs::FileSystem> fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
};

TEST_F(DeletionVectorWriterTest, SmallDeletionVectorIsInlineAndReadsBack) {
  auto writer = Writer(kDefaultMaxInlineDeletionVectorBytes);
  auto updates = writer->Write({{"part-0.parquet", std::nullopt, 100, {7, 3, 3, 42}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  ASSERT_EQ(updates->size(), 1u);
  const DeletionVectorUpdate& u = (*updates)[0];
  EXPECT_EQ(u.path, "part-0.parquet");
  ASSERT_EQ(u.outcome, DeletionVectorOutcome::kNewDeletionVector);
  ASSERT_TRUE(u.descriptor.has_value());
  EXPECT_EQ(u.descriptor->storage_type, "i");
  EXPECT_FALSE(u.descriptor->offset.has_value());
  EXPECT_EQ(u.descriptor->cardinality, 3);
  EXPECT_EQ(u.deleted_rows, 3);
  EXPECT_EQ(u.newly_deleted_rows, 3);
  EXPECT_EQ(u.unique_id, "i" + u.descriptor->path_or_inline_dv);
  // sizeInBytes is the unpadded length: the Z85 text decodes to it rounded up to 4 bytes.
  auto decoded = Z85Decode(u.descriptor->path_or_inline_dv);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->size(), (static_cast<size_t>(u.descriptor->size_in_bytes) + 3) / 4 * 4);
  EXPECT_LE(u.descriptor->size_in_bytes, kDefaultMaxInlineDeletionVectorBytes);
  EXPECT_EQ(ReadBack(*u.descriptor), (std::vector<uint64_t>{3, 7, 42}));
  EXPECT_TRUE(writer->written_files().empty());
  EXPECT_TRUE(DvFiles(dir_.path()).empty());
}

TEST_F(DeletionVectorWriterTest, LargeDeletionVectorGoesToAFileAtTheTableRoot) {
  auto writer = Writer(kDefaultMaxInlineDeletionVectorBytes);
  // 500 scattered rows serialize to about 1 KB, beyond the inline limit.
  const std::vector<uint64_t> rows = Evens(500);
  auto updates = writer->Write({{"a.parquet", std::nullopt, 1000, rows}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  const DeletionVectorUpdate& u = (*updates)[0];
  ASSERT_TRUE(u.descriptor.has_value());
  const DeletionVectorDescriptor& dv = *u.descriptor;
  EXPECT_EQ(dv.storage_type, "u");
  ASSERT_EQ(dv.path_or_inline_dv.size(), 20u);  // no prefix: just the Z85 UUID
  EXPECT_EQ(dv.offset, std::optional<int32_t>(1));
  EXPECT_GT(dv.size_in_bytes, kDefaultMaxInlineDeletionVectorBytes);
  EXPECT_EQ(dv.cardinality, 500);
  EXPECT_EQ(u.unique_id, "u" + dv.path_or_inline_dv + "@1");
  EXPECT_EQ(u.unique_id, dv.UniqueId());
  EXPECT_EQ(ReadBack(dv), rows);

  // The file name carries the UUID whose 16 bytes the payload encodes.
  auto files = DvFiles(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].parent_path(), dir_.path());
  EXPECT_EQ(writer->written_files(), std::vector<std::string>{files[0].string()});
  std::string uuid = files[0].filename().string();
  ASSERT_TRUE(uuid.starts_with("deletion_vector_") && uuid.ends_with(".bin")) << uuid;
  uuid = uuid.substr(16, uuid.size() - 20);
  std::string hex;
  for (char c : uuid) {
    if (c != '-') hex.push_back(c);
  }
  auto uuid_bytes = Z85Decode(dv.path_or_inline_dv);
  ASSERT_TRUE(uuid_bytes.ok());
  std::string expected_hex;
  for (char b : *uuid_bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    expected_hex.push_back(kHex[static_cast<uint8_t>(b) >> 4]);
    expected_hex.push_back(kHex[static_cast<uint8_t>(b) & 0xF]);
  }
  EXPECT_EQ(hex, expected_hex);
}

TEST_F(DeletionVectorWriterTest, NegativeInlineLimitNeverInlines) {
  auto writer = Writer(-1);
  auto updates = writer->Write({{"a.parquet", std::nullopt, 10, {1}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  ASSERT_TRUE((*updates)[0].descriptor.has_value());
  EXPECT_EQ((*updates)[0].descriptor->storage_type, "u");
  EXPECT_EQ(ReadBack(*(*updates)[0].descriptor), (std::vector<uint64_t>{1}));
}

TEST_F(DeletionVectorWriterTest, RandomPrefixPutsTheFileInAFolderNamedByTheDescriptor) {
  auto writer = Writer(-1, 3);
  auto updates = writer->Write({{"a.parquet", std::nullopt, 10, {2, 4}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  const DeletionVectorDescriptor& dv = *(*updates)[0].descriptor;
  ASSERT_EQ(dv.path_or_inline_dv.size(), 23u);
  const std::string prefix = dv.path_or_inline_dv.substr(0, 3);
  for (char c : prefix) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << prefix;
  auto files = DvFiles(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].parent_path(), dir_.path() / prefix);
  EXPECT_EQ(ReadBack(dv), (std::vector<uint64_t>{2, 4}));
}

TEST_F(DeletionVectorWriterTest, OneOperationsDeletionVectorsShareOneFileAtDistinctOffsets) {
  auto writer = Writer(-1);
  const std::vector<std::vector<uint64_t>> rows = {{0, 5}, Evens(300), {1ull << 33, 9}};
  auto updates = writer->Write({{"a.parquet", std::nullopt, 1000, rows[0]},
                                {"b.parquet", std::nullopt, 1000, rows[1]},
                                {"c.parquet", std::nullopt, int64_t{1} << 34, rows[2]}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  ASSERT_EQ(updates->size(), 3u);
  auto files = DvFiles(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string content = ReadAll(files[0]);
  ASSERT_FALSE(content.empty());
  EXPECT_EQ(content[0], '\x01');  // version byte

  int64_t expected_offset = 1;
  std::set<std::string> ids;
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const DeletionVectorUpdate& u = (*updates)[i];
    ASSERT_TRUE(u.descriptor.has_value());
    const DeletionVectorDescriptor& dv = *u.descriptor;
    EXPECT_EQ(dv.path_or_inline_dv, (*updates)[0].descriptor->path_or_inline_dv);
    EXPECT_EQ(dv.offset, std::optional<int32_t>(static_cast<int32_t>(expected_offset)));
    ids.insert(u.unique_id);

    // size field, bitmap, checksum: checked against what the test computes itself.
    const auto size = static_cast<size_t>(dv.size_in_bytes);
    ASSERT_LE(static_cast<size_t>(expected_offset) + 8 + size, content.size());
    EXPECT_EQ(content.substr(expected_offset, 4), BigEndian32(static_cast<uint32_t>(size)));
    const std::string bitmap = content.substr(expected_offset + 4, size);
    // Portable magic 1681511377 = 0x6439D3D1, little-endian.
    EXPECT_EQ(bitmap.substr(0, 4), std::string("\xD1\xD3\x39\x64", 4));
    EXPECT_EQ(content.substr(expected_offset + 4 + size, 4), BigEndian32(ReferenceCrc32(bitmap)));
    auto decoded = DeserializeRoaringBitmapArray(bitmap);
    ASSERT_TRUE(decoded.ok());
    std::vector<uint64_t> sorted = rows[i];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(*decoded, sorted);
    EXPECT_EQ(ReadBack(dv), sorted);
    expected_offset += 8 + static_cast<int64_t>(size);
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(static_cast<int64_t>(content.size()), expected_offset);
}

TEST_F(DeletionVectorWriterTest, ReferenceCrcMatchesTheStandardCheckValue) {
  // The check value of CRC-32/ISO-HDLC (zlib, java.util.zip.CRC32) for "123456789".
  EXPECT_EQ(ReferenceCrc32("123456789"), 0xCBF43926u);
}

TEST_F(DeletionVectorWriterTest, UnionWithAnExistingInlineDeletionVector) {
  auto existing = MakeInlineDeletionVector({1, 5});
  ASSERT_TRUE(existing.ok());
  auto writer = Writer(kDefaultMaxInlineDeletionVectorBytes);
  auto updates = writer->Write({{"a.parquet", *existing, 10, {5, 7}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  const DeletionVectorUpdate& u = (*updates)[0];
  ASSERT_EQ(u.outcome, DeletionVectorOutcome::kNewDeletionVector);
  EXPECT_EQ(u.descriptor->cardinality, 3);
  EXPECT_EQ(u.deleted_rows, 3);
  EXPECT_EQ(u.newly_deleted_rows, 1);
  EXPECT_NE(u.unique_id, existing->UniqueId());
  EXPECT_EQ(ReadBack(*u.descriptor), (std::vector<uint64_t>{1, 5, 7}));
}

TEST_F(DeletionVectorWriterTest, UnionWithAnExistingFileDeletionVector) {
  auto first = Writer(-1);
  auto old = first->Write({{"a.parquet", std::nullopt, 1000, Evens(200)}});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  const DeletionVectorDescriptor old_dv = *(*old)[0].descriptor;

  auto second = Writer(-1);
  auto updates = second->Write({{"a.parquet", old_dv, 1000, {1, 2, 999}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  const DeletionVectorUpdate& u = (*updates)[0];
  ASSERT_EQ(u.outcome, DeletionVectorOutcome::kNewDeletionVector);
  std::vector<uint64_t> expected = Evens(200);
  expected.push_back(1);
  expected.push_back(999);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(u.descriptor->cardinality, 202);
  EXPECT_EQ(u.newly_deleted_rows, 2);
  EXPECT_NE(u.descriptor->path_or_inline_dv, old_dv.path_or_inline_dv);
  EXPECT_EQ(ReadBack(*u.descriptor), expected);
  // The old DV stays readable: the remove of (path, old DV) still refers to it.
  EXPECT_EQ(ReadBack(old_dv), Evens(200));
  EXPECT_EQ(DvFiles(dir_.path()).size(), 2u);
}

TEST_F(DeletionVectorWriterTest, DeletingEveryRowRemovesTheFileInstead) {
  auto existing = MakeInlineDeletionVector({0, 1});
  ASSERT_TRUE(existing.ok());
  auto writer = Writer(-1);
  auto updates = writer->Write({{"a.parquet", *existing, 4, {2, 3}},
                                {"b.parquet", std::nullopt, 3, {2, 0, 1}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  for (const DeletionVectorUpdate& u : *updates) {
    SCOPED_TRACE(u.path);
    EXPECT_EQ(u.outcome, DeletionVectorOutcome::kRemoveFile);
    EXPECT_FALSE(u.descriptor.has_value());
    EXPECT_TRUE(u.unique_id.empty());
  }
  EXPECT_EQ((*updates)[0].deleted_rows, 4);
  EXPECT_EQ((*updates)[0].newly_deleted_rows, 2);
  EXPECT_EQ((*updates)[1].deleted_rows, 3);
  EXPECT_TRUE(DvFiles(dir_.path()).empty());
}

TEST_F(DeletionVectorWriterTest, RowsAlreadyDeletedLeaveTheFileUnchanged) {
  auto existing = MakeInlineDeletionVector({2, 4});
  ASSERT_TRUE(existing.ok());
  auto writer = Writer(-1);
  auto updates = writer->Write({{"a.parquet", *existing, 10, {4}},
                                {"b.parquet", std::nullopt, 10, {}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  for (const DeletionVectorUpdate& u : *updates) {
    EXPECT_EQ(u.outcome, DeletionVectorOutcome::kUnchanged);
    EXPECT_FALSE(u.descriptor.has_value());
    EXPECT_EQ(u.newly_deleted_rows, 0);
  }
  EXPECT_EQ((*updates)[0].deleted_rows, 2);
  EXPECT_TRUE(DvFiles(dir_.path()).empty());
}

TEST_F(DeletionVectorWriterTest, BadRequestsFailWithNothingWritten) {
  auto writer = Writer(-1);
  auto beyond = writer->Write({{"a.parquet", std::nullopt, 10, {1}},
                               {"b.parquet", std::nullopt, 10, {3, 10}}});
  ASSERT_FALSE(beyond.ok());
  EXPECT_TRUE(IsDeltaError(beyond.status(), DeltaErrorCode::kInvalidArgument));
  EXPECT_NE(beyond.status().message().find("b.parquet"), std::string::npos)
      << beyond.status().message();
  EXPECT_NE(beyond.status().message().find("row index 10"), std::string::npos);

  auto twice = writer->Write({{"a.parquet", std::nullopt, 10, {1}},
                              {"a.parquet", std::nullopt, 10, {2}}});
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(IsDeltaError(twice.status(), DeltaErrorCode::kInvalidArgument));

  auto negative = writer->Write({{"a.parquet", std::nullopt, -1, {}}});
  ASSERT_FALSE(negative.ok());
  EXPECT_TRUE(IsDeltaError(negative.status(), DeltaErrorCode::kInvalidArgument));

  // An existing DV that deletes rows the file does not have.
  auto too_wide = MakeInlineDeletionVector({12});
  ASSERT_TRUE(too_wide.ok());
  auto corrupt = writer->Write({{"a.parquet", *too_wide, 10, {1}}});
  ASSERT_FALSE(corrupt.ok());
  EXPECT_TRUE(IsDeltaError(corrupt.status(), DeltaErrorCode::kCorruptLog));

  EXPECT_EQ(FileCount(dir_.path()), 0u);
  EXPECT_TRUE(writer->written_files().empty());
}

TEST_F(DeletionVectorWriterTest, UnreadableExistingDeletionVectorFailsWithNothingWritten) {
  DeletionVectorDescriptor missing;
  missing.storage_type = "u";
  auto payload = EncodeUuidDeletionVectorPath("", "d2c639aa-8816-431a-aaf6-d3fe2512ff61");
  ASSERT_TRUE(payload.ok());
  missing.path_or_inline_dv = *payload;
  missing.offset = 1;
  missing.size_in_bytes = 40;
  missing.cardinality = 2;
  auto writer = Writer(-1);
  // The first file's DV is fine; the second file's existing DV is missing.
  auto updates = writer->Write({{"a.parquet", std::nullopt, 1000, Evens(100)},
                                {"b.parquet", missing, 1000, {1}}});
  ASSERT_FALSE(updates.ok());
  EXPECT_TRUE(IsDeltaError(updates.status(), DeltaErrorCode::kMissingFile))
      << updates.status().ToString();
  EXPECT_NE(updates.status().message().find("b.parquet"), std::string::npos);
  EXPECT_EQ(FileCount(dir_.path()), 0u);
}

TEST_F(DeletionVectorWriterTest, AbortRemovesEveryFileWritten) {
  auto writer = Writer(-1, 2);
  auto one = writer->Write({{"a.parquet", std::nullopt, 10, {1}}});
  auto two = writer->Write({{"b.parquet", std::nullopt, 10, {2}}});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(writer->written_files().size(), 2u);
  EXPECT_EQ(DvFiles(dir_.path()).size(), 2u);
  ASSERT_TRUE(writer->Abort().ok());
  EXPECT_TRUE(DvFiles(dir_.path()).empty());
  EXPECT_TRUE(writer->written_files().empty());
  auto after = writer->Write({{"c.parquet", std::nullopt, 10, {1}}});
  EXPECT_FALSE(after.ok());
}

TEST_F(DeletionVectorWriterTest, MakeRefusesBadOptions) {
  DeletionVectorWriterOptions options;
  options.table_root = dir_.str();
  options.random_prefix_length = -1;
  EXPECT_TRUE(IsDeltaError(DeletionVectorWriter::Make(options).status(),
                           DeltaErrorCode::kInvalidArgument));
  options.random_prefix_length = 33;
  EXPECT_TRUE(IsDeltaError(DeletionVectorWriter::Make(options).status(),
                           DeltaErrorCode::kInvalidArgument));
  options.random_prefix_length = 0;
  options.table_root.clear();
  EXPECT_TRUE(IsDeltaError(DeletionVectorWriter::Make(options).status(),
                           DeltaErrorCode::kInvalidArgument));
}

TEST(DeletionVectorWriterInMemory, WritesReadsAndAbortsThroughTheStoresFilesystem) {
  auto fs = MakeMemoryLogStore()->filesystem();
  DeletionVectorWriterOptions options;
  options.table_root = "/mem/table";
  options.fs = fs;
  options.max_inline_bytes = -1;
  options.random_prefix_length = 2;
  auto writer = DeletionVectorWriter::Make(options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto updates = (*writer)->Write({{"a.parquet", std::nullopt, 1000, Evens(300)},
                                   {"b.parquet", std::nullopt, 10, {9}}});
  ASSERT_TRUE(updates.ok()) << updates.status().ToString();
  ASSERT_EQ((*writer)->written_files().size(), 1u);
  for (const DeletionVectorUpdate& u : *updates) {
    ASSERT_TRUE(u.descriptor.has_value());
    auto rows = ReadDeletedRowIndexes(*u.descriptor, options.table_root, *fs);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows->size(), static_cast<size_t>(u.descriptor->cardinality));
  }
  const std::string file = (*writer)->written_files()[0];
  ASSERT_TRUE((*writer)->Abort().ok());
  auto info = fs->GetFileInfo(file);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->type(), arrow::fs::FileType::NotFound);
}

// An output stream that fails: during the first write (after passing half the bytes on), or on
// Close after the content went through.
class FailingOutputStream final : public arrow::io::OutputStream {
 public:
  FailingOutputStream(std::shared_ptr<arrow::io::OutputStream> inner, bool fail_on_close)
      : inner_(std::move(inner)), fail_on_close_(fail_on_close) {}
  arrow::Status Write(const void* data, int64_t nbytes) override {
    if (fail_on_close_) return inner_->Write(data, nbytes);
    ARROW_RETURN_NOT_OK(inner_->Write(data, nbytes / 2));
    ARROW_RETURN_NOT_OK(inner_->Flush());
    return arrow::Status::IOError("disk full (injected)");
  }
  arrow::Status Close() override {
    ARROW_RETURN_NOT_OK(inner_->Close());
    if (fail_on_close_) return arrow::Status::IOError("close failed (injected)");
    return arrow::Status::OK();
  }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }

 private:
  std::shared_ptr<arrow::io::OutputStream> inner_;
  bool fail_on_close_;
};

// The local filesystem, except that output streams fail as FailingOutputStream does.
class FailingWritesFileSystem final : public arrow::fs::LocalFileSystem {
 public:
  explicit FailingWritesFileSystem(bool fail_on_close) : fail_on_close_(fail_on_close) {}
  using arrow::fs::LocalFileSystem::OpenOutputStream;
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string& path,
      const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override {
    ARROW_ASSIGN_OR_RAISE(auto inner, arrow::fs::LocalFileSystem::OpenOutputStream(path, metadata));
    return std::make_shared<FailingOutputStream>(std::move(inner), fail_on_close_);
  }

 private:
  bool fail_on_close_;
};

TEST_F(DeletionVectorWriterTest, FailedFileWriteLeavesNoFile) {
  for (bool fail_on_close : {false, true}) {
    SCOPED_TRACE(fail_on_close ? "failing close" : "failing write");
    fs_ = std::make_shared<FailingWritesFileSystem>(fail_on_close);
    for (int32_t prefix : {0, 2}) {
      auto writer = Writer(-1, prefix);
      auto updates = writer->Write({{"a.parquet", std::nullopt, 1000, Evens(300)},
                                    {"b.parquet", std::nullopt, 1000, {4}}});
      ASSERT_FALSE(updates.ok());
      EXPECT_NE(updates.status().message().find("injected"), std::string::npos)
          << updates.status().ToString();
      EXPECT_NE(updates.status().message().find("deletion vector file"), std::string::npos);
      EXPECT_EQ(FileCount(dir_.path()), 0u);
      EXPECT_TRUE(writer->written_files().empty());
    }
  }
}

TEST(DeletionVectorFileEntry, EncodesUuidPayloadsTheReaderMapsBack) {
  // The protocol's example: prefix "ab" and UUID d2c639aa-8816-431a-aaf6-d3fe2512ff61.
  auto payload = EncodeUuidDeletionVectorPath("ab", "d2c639aa-8816-431a-aaf6-d3fe2512ff61");
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(*payload, "ab^-aqEH.-t@S}K{vb[*k^");
  DeletionVectorDescriptor dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = *payload;
  auto path = DeletionVectorAbsolutePath(dv, "/t");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, "/t/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");

  EXPECT_FALSE(EncodeUuidDeletionVectorPath("", "d2c639aa8816431aaaf6d3fe2512ff61").ok());
  EXPECT_FALSE(EncodeUuidDeletionVectorPath("", "g2c639aa-8816-431a-aaf6-d3fe2512ff61").ok());
  EXPECT_FALSE(EncodeUuidDeletionVectorPath("a/b", "d2c639aa-8816-431a-aaf6-d3fe2512ff61").ok());
}

TEST(DeletionVectorFileEntry, AppendsSizeBitmapAndChecksumBigEndian) {
  std::string file(1, '\x01');
  const std::string bitmap = "\x01\x02\x03\x04\x05";
  ASSERT_TRUE(AppendDeletionVectorFileEntry(bitmap, &file).ok());
  const std::string crc = BigEndian32(ReferenceCrc32(bitmap));
  EXPECT_EQ(file, std::string("\x01\x00\x00\x00\x05", 5) + bitmap + crc);
}

}  // namespace
}  // namespace deltacpp::internal
