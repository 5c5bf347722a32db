#include "protocol/deletion_vector.h"

#include <fmt/format.h>
#include <roaring/roaring.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>

#include "deltacpp/error.h"
#include "protocol/path_encoding.h"
#include "storage/regular_file.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr size_t kUuidZ85Length = 20;
constexpr std::string_view kFileNameCore = "deletion_vector_";
// delta-spark prefixes DV file names with this when running its own test suite; the descriptor
// does not record it.
constexpr std::string_view kSparkTestFilePrefix = "test%dv%prefix-";

constexpr std::array<int16_t, 256> MakeZ85DecodeTable() {
  std::array<int16_t, 256> table{};
  for (auto& v : table) v = -1;
  for (size_t i = 0; i < kZ85Alphabet.size(); ++i) {
    table[static_cast<uint8_t>(kZ85Alphabet[i])] = static_cast<int16_t>(i);
  }
  return table;
}
constexpr std::array<int16_t, 256> kZ85Decode = MakeZ85DecodeTable();

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

uint32_t LoadLE32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint64_t LoadLE64(const uint8_t* p) {
  return uint64_t{LoadLE32(p)} | uint64_t{LoadLE32(p + 4)} << 32;
}
uint32_t LoadBE32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}
void AppendBE32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void AppendLE32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void AppendLE64(std::string& out, uint64_t v) {
  AppendLE32(out, static_cast<uint32_t>(v));
  AppendLE32(out, static_cast<uint32_t>(v >> 32));
}

struct RoaringDeleter {
  void operator()(roaring_bitmap_t* r) const { roaring_bitmap_free(r); }
};
using RoaringPtr = std::unique_ptr<roaring_bitmap_t, RoaringDeleter>;

arrow::Status Corrupt(std::string message) {
  return DeltaError(DeltaErrorCode::kCorruptLog, std::move(message));
}

// Reads one 32-bit portable roaring bitmap at the front of `*bytes`, appends its values (with
// `high` as the upper 32 bits) to `out`, and advances `*bytes` past it.
arrow::Status ReadBucket(std::string_view* bytes, uint32_t high, std::vector<uint64_t>* out) {
  size_t used = roaring_bitmap_portable_deserialize_size(bytes->data(), bytes->size());
  if (used == 0) {
    return Corrupt(fmt::format("invalid 32-bit roaring bitmap for bucket key {}", high));
  }
  RoaringPtr bitmap(roaring_bitmap_portable_deserialize_safe(bytes->data(), used));
  if (!bitmap) {
    return Corrupt(fmt::format("invalid 32-bit roaring bitmap for bucket key {}", high));
  }
  uint64_t card = roaring_bitmap_get_cardinality(bitmap.get());
  std::vector<uint32_t> low(card);
  if (card > 0) roaring_bitmap_to_uint32_array(bitmap.get(), low.data());
  const uint64_t base = uint64_t{high} << 32;
  out->reserve(out->size() + low.size());
  for (uint32_t v : low) out->push_back(base | v);
  bytes->remove_prefix(used);
  return arrow::Status::OK();
}

std::string FormatUuid(const std::string& b) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    auto byte = static_cast<uint8_t>(b[i]);
    s.push_back(kHex[byte >> 4]);
    s.push_back(kHex[byte & 0xF]);
  }
  return s;
}

std::string TrimTrailingSlashes(const std::string& root) {
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r;
}

// Splits a "u" payload into its random prefix and canonical UUID text.
arrow::Result<std::pair<std::string, std::string>> SplitUuidPayload(
    const DeletionVectorDescriptor& dv, const std::string& table_root) {
  const std::string& payload = dv.path_or_inline_dv;
  if (payload.size() < kUuidZ85Length) {
    return Corrupt(fmt::format("table {}: deletion vector '{}' is shorter than a Z85 UUID",
                               table_root, payload));
  }
  std::string_view encoded = std::string_view(payload).substr(payload.size() - kUuidZ85Length);
  auto bytes = Z85Decode(encoded);
  if (!bytes.ok()) {
    return Corrupt(fmt::format("table {}: deletion vector '{}': bad UUID: {}", table_root,
                               payload, bytes.status().message()));
  }
  return std::make_pair(payload.substr(0, payload.size() - kUuidZ85Length),
                        FormatUuid(*bytes));
}

std::string UuidFilePath(const std::string& table_root, const std::string& prefix,
                         std::string_view file_prefix, const std::string& uuid) {
  std::string path = TrimTrailingSlashes(table_root);
  if (path != "/") path += "/";
  if (!prefix.empty()) path += prefix + "/";
  path += file_prefix;
  path += kFileNameCore;
  path += uuid;
  path += ".bin";
  return path;
}

bool IsNotFound(arrow::fs::FileSystem& fs, const std::string& path) {
  auto info = fs.GetFileInfo(path);
  return info.ok() && info->type() == arrow::fs::FileType::NotFound;
}

arrow::Status CheckCardinality(const DeletionVectorDescriptor& dv,
                               const std::vector<uint64_t>& rows, const std::string& where) {
  if (static_cast<int64_t>(rows.size()) != dv.cardinality) {
    return Corrupt(fmt::format("{}: holds {} rows but the descriptor says cardinality {}", where,
                               rows.size(), dv.cardinality));
  }
  return arrow::Status::OK();
}

}  // namespace

std::string Z85Encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 3) / 4 * 5);
  for (size_t i = 0; i < data.size(); i += 4) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      uint8_t b = i + k < data.size() ? static_cast<uint8_t>(data[i + k]) : 0;
      v = v << 8 | b;
    }
    char group[5];
    for (int k = 4; k >= 0; --k) {
      group[k] = kZ85Alphabet[v % 85];
      v /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

arrow::Result<std::string> Z85Decode(std::string_view text) {
  if (text.size() % 5 != 0) {
    return arrow::Status::Invalid("Z85 text length ", text.size(), " is not a multiple of 5");
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    // A group opening with '#' cannot be a full group (84 * 85^4 > 2^32): it is a final partial
    // group whose leading '#' count is the number of missing bytes.
    size_t missing = 0;
    while (missing < 5 && text[i + missing] == '#') ++missing;
    if (missing > 0 && (missing > 3 || i + 5 != text.size())) {
      return arrow::Status::Invalid("Z85 group at ", i, " is not a valid group");
    }
    uint64_t v = 0;
    for (size_t k = missing; k < 5; ++k) {
      int16_t d = kZ85Decode[static_cast<uint8_t>(text[i + k])];
      if (d < 0) {
        return arrow::Status::Invalid("character '", text[i + k], "' at ", i + k,
                                      " is not in the Z85 alphabet");
      }
      v = v * 85 + static_cast<uint64_t>(d);
    }
    const size_t bytes = 4 - missing;
    if (v >> (8 * bytes) != 0) {
      return arrow::Status::Invalid("Z85 group at ", i, " exceeds ", 8 * bytes, " bits");
    }
    for (size_t k = bytes; k-- > 0;) out.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
  }
  return out;
}

uint32_t Crc32(std::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : data) c = kCrcTable[(c ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

arrow::Result<std::string> DeletionVectorAbsolutePath(const DeletionVectorDescriptor& dv,
                                                      const std::string& table_root) {
  if (dv.storage_type == "u") {
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitUuidPayload(dv, table_root));
    // The random prefix is free text: a `..` in it must not lead out of the table.
    std::string file = UuidFilePath(table_root, parts.first, "", parts.second);
    if (parts.first.find("..") == std::string::npos) return file;
    auto path = CheckInsideTable(table_root, file);
    if (!path.ok()) {
      return Corrupt(fmt::format("table {}: deletion vector '{}': {}", table_root,
                                 dv.path_or_inline_dv, path.status().message()));
    }
    return path.MoveValueUnsafe();
  }
  if (dv.storage_type == "p") {
    const std::string_view raw = dv.path_or_inline_dv;
    if (!IsAbsoluteUri(raw) && !raw.starts_with("/")) {
      return Corrupt(fmt::format("table {}: deletion vector path '{}' is not an absolute URI",
                                 table_root, raw));
    }
    const std::string root = TrimTrailingSlashes(table_root);
    auto path = ResolveFileInTable(root, root, raw);
    if (!path.ok()) {
      return Corrupt(fmt::format("table {}: deletion vector: {}", table_root,
                                 path.status().message()));
    }
    return path.MoveValueUnsafe();
  }
  if (dv.storage_type == "i") {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      fmt::format("table {}: inline deletion vector has no file", table_root));
  }
  return Corrupt(fmt::format("table {}: unknown deletion vector storage type '{}'", table_root,
                             dv.storage_type));
}

arrow::Result<std::string> EncodeUuidDeletionVectorPath(std::string_view random_prefix,
                                                        std::string_view uuid) {
  if (random_prefix.find('/') != std::string_view::npos) {
    return arrow::Status::Invalid("deletion vector prefix '", random_prefix, "' holds a '/'");
  }
  auto hex_value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string bytes;
  bytes.reserve(16);
  bool well_formed = uuid.size() == 36;
  for (size_t i = 0; well_formed && i < uuid.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      well_formed = uuid[i] == '-';
      ++i;
      continue;
    }
    const int high = hex_value(uuid[i]);
    const int low = hex_value(uuid[i + 1]);
    well_formed = high >= 0 && low >= 0;
    bytes.push_back(static_cast<char>(high << 4 | low));
    i += 2;
  }
  if (!well_formed) return arrow::Status::Invalid("'", uuid, "' is not a canonical UUID");
  return std::string(random_prefix) + Z85Encode(bytes);
}

arrow::Status AppendDeletionVectorFileEntry(std::string_view bitmap, std::string* file) {
  if (bitmap.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return arrow::Status::Invalid("serialized deletion vector of ", bitmap.size(),
                                  " bytes exceeds the 2^31-1 bytes sizeInBytes can state");
  }
  AppendBE32(*file, static_cast<uint32_t>(bitmap.size()));
  file->append(bitmap);
  AppendBE32(*file, Crc32(bitmap));
  return arrow::Status::OK();
}

arrow::Result<std::vector<uint64_t>> DeserializeRoaringBitmapArray(std::string_view bytes) {
  if (bytes.size() < 4) {
    return Corrupt(fmt::format("serialized deletion vector is {} bytes, too short for its magic "
                               "number",
                               bytes.size()));
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto magic = static_cast<int32_t>(LoadLE32(p));
  bytes.remove_prefix(4);
  std::vector<uint64_t> rows;

  if (magic == kDeletionVectorPortableMagic) {
    if (bytes.size() < 8) return Corrupt("serialized deletion vector lacks its bucket count");
    uint64_t buckets = LoadLE64(reinterpret_cast<const uint8_t*>(bytes.data()));
    bytes.remove_prefix(8);
    // Each bucket takes at least a 4-byte key and an 8-byte empty bitmap.
    if (buckets > bytes.size() / 12) {
      return Corrupt(fmt::format("serialized deletion vector claims {} buckets in {} bytes",
                                 buckets, bytes.size()));
    }
    int64_t previous_key = -1;
    for (uint64_t b = 0; b < buckets; ++b) {
      if (bytes.size() < 4) return Corrupt("serialized deletion vector truncated in a bucket key");
      uint32_t key = LoadLE32(reinterpret_cast<const uint8_t*>(bytes.data()));
      bytes.remove_prefix(4);
      if (key & 0x80000000u) {
        return Corrupt(fmt::format("deletion vector bucket key {} has its top bit set", key));
      }
      if (static_cast<int64_t>(key) <= previous_key) {
        return Corrupt(fmt::format("deletion vector bucket keys not ascending ({} after {})", key,
                                   previous_key));
      }
      previous_key = key;
      ARROW_RETURN_NOT_OK(ReadBucket(&bytes, key, &rows));
    }
  } else if (magic == kDeletionVectorNativeMagic) {
    if (bytes.size() < 4) return Corrupt("serialized deletion vector lacks its bucket count");
    auto buckets = static_cast<int32_t>(LoadLE32(reinterpret_cast<const uint8_t*>(bytes.data())));
    bytes.remove_prefix(4);
    if (buckets < 0 || static_cast<uint64_t>(buckets) > bytes.size() / 12) {
      return Corrupt(fmt::format("serialized deletion vector claims {} buckets in {} bytes",
                                 buckets, bytes.size()));
    }
    for (int32_t b = 0; b < buckets; ++b) {
      if (bytes.size() < 4) return Corrupt("serialized deletion vector truncated in a bucket size");
      auto length = static_cast<int32_t>(LoadLE32(reinterpret_cast<const uint8_t*>(bytes.data())));
      bytes.remove_prefix(4);
      if (length < 0 || static_cast<size_t>(length) > bytes.size()) {
        return Corrupt(fmt::format("deletion vector bucket {} claims {} bytes, {} remain", b,
                                   length, bytes.size()));
      }
      std::string_view bucket = bytes.substr(0, static_cast<size_t>(length));
      ARROW_RETURN_NOT_OK(ReadBucket(&bucket, static_cast<uint32_t>(b), &rows));
      if (!bucket.empty()) {
        return Corrupt(fmt::format("deletion vector bucket {} has {} trailing bytes", b,
                                   bucket.size()));
      }
      bytes.remove_prefix(static_cast<size_t>(length));
    }
  } else {
    return Corrupt(fmt::format("serialized deletion vector has unknown magic number {}", magic));
  }
  if (!bytes.empty()) {
    return Corrupt(fmt::format("serialized deletion vector has {} trailing bytes", bytes.size()));
  }
  return rows;
}

arrow::Result<std::string> SerializeRoaringBitmapArray(const std::vector<uint64_t>& sorted_rows) {
  for (size_t i = 0; i < sorted_rows.size(); ++i) {
    if (sorted_rows[i] >> 63) {
      return arrow::Status::Invalid("deletion vector row index ", sorted_rows[i],
                                    " does not fit in 63 bits");
    }
    if (i > 0 && sorted_rows[i] <= sorted_rows[i - 1]) {
      return arrow::Status::Invalid("deletion vector row indexes are not strictly ascending at ",
                                    i, " (", sorted_rows[i], " after ", sorted_rows[i - 1], ")");
    }
  }
  std::string out;
  AppendLE32(out, static_cast<uint32_t>(kDeletionVectorPortableMagic));
  const size_t count_at = out.size();
  AppendLE64(out, 0);
  uint64_t buckets = 0;
  std::vector<uint32_t> low;
  for (size_t i = 0; i < sorted_rows.size();) {
    const uint32_t high = static_cast<uint32_t>(sorted_rows[i] >> 32);
    low.clear();
    for (; i < sorted_rows.size() && (sorted_rows[i] >> 32) == high; ++i) {
      low.push_back(static_cast<uint32_t>(sorted_rows[i]));
    }
    RoaringPtr bitmap(roaring_bitmap_of_ptr(low.size(), low.data()));
    if (!bitmap) return arrow::Status::OutOfMemory("roaring bitmap allocation failed");
    roaring_bitmap_run_optimize(bitmap.get());
    AppendLE32(out, high);
    const size_t at = out.size();
    out.resize(at + roaring_bitmap_portable_size_in_bytes(bitmap.get()));
    size_t written = roaring_bitmap_portable_serialize(bitmap.get(), out.data() + at);
    out.resize(at + written);
    ++buckets;
  }
  std::string count;
  AppendLE64(count, buckets);
  out.replace(count_at, 8, count);
  return out;
}

arrow::Result<std::vector<uint64_t>> ReadDeletedRowIndexes(const DeletionVectorDescriptor& dv,
                                                           const std::string& table_root,
                                                           arrow::fs::FileSystem& fs) {
  if (dv.size_in_bytes < 0) {
    return Corrupt(fmt::format("table {}: deletion vector '{}' has negative sizeInBytes {}",
                               table_root, dv.UniqueId(), dv.size_in_bytes));
  }
  if (dv.storage_type == "i") {
    const std::string where =
        fmt::format("table {}: inline deletion vector '{}'", table_root, dv.path_or_inline_dv);
    auto decoded = Z85Decode(dv.path_or_inline_dv);
    if (!decoded.ok()) return Corrupt(fmt::format("{}: {}", where, decoded.status().message()));
    if (decoded->size() < static_cast<size_t>(dv.size_in_bytes) ||
        decoded->size() >= static_cast<size_t>(dv.size_in_bytes) + 4) {
      return Corrupt(fmt::format("{}: decodes to {} bytes, sizeInBytes is {}", where,
                                 decoded->size(), dv.size_in_bytes));
    }
    decoded->resize(static_cast<size_t>(dv.size_in_bytes));
    auto rows = DeserializeRoaringBitmapArray(*decoded);
    if (!rows.ok()) return Corrupt(fmt::format("{}: {}", where, rows.status().message()));
    ARROW_RETURN_NOT_OK(CheckCardinality(dv, *rows, where));
    return rows.MoveValueUnsafe();
  }

  ARROW_ASSIGN_OR_RAISE(std::string path, DeletionVectorAbsolutePath(dv, table_root));
  auto file = OpenRegularFile(fs, path);
  if (!file.ok() && dv.storage_type == "u" && IsNotFound(fs, path)) {
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitUuidPayload(dv, table_root));
    std::string alternative = UuidFilePath(table_root, parts.first, kSparkTestFilePrefix,
                                           parts.second);
    auto alternative_file = OpenRegularFile(fs, alternative);
    if (alternative_file.ok()) {
      file = std::move(alternative_file);
      path = std::move(alternative);
    }
  }
  const int64_t offset = dv.offset.value_or(0);
  const std::string where =
      fmt::format("table {}: deletion vector file {} (offset {})", table_root, path, offset);
  if (!file.ok()) {
    if (IsNotFound(fs, path)) {
      return DeltaError(DeltaErrorCode::kMissingFile, fmt::format("{}: file not found", where));
    }
    return file.status().WithMessage(where, ": ", file.status().message());
  }
  if (offset < 0) return Corrupt(fmt::format("{}: negative offset", where));

  // size prefix + bitmap + checksum; when the DV starts right after the version byte, read that
  // byte too so the file header is checked without a second read.
  const bool with_version = offset == 1;
  const int64_t start = with_version ? 0 : offset;
  const int64_t length = int64_t{dv.size_in_bytes} + 8 + (with_version ? 1 : 0);
  auto buffer = (*file)->ReadAt(start, length);
  if (!buffer.ok()) {
    return buffer.status().WithMessage(where, ": ", buffer.status().message());
  }
  if ((*buffer)->size() != length) {
    return Corrupt(fmt::format("{}: file ends after {} of the {} bytes the descriptor needs",
                               where, (*buffer)->size(), length));
  }
  const uint8_t* p = (*buffer)->data();
  if (with_version) {
    if (p[0] != kDeletionVectorFileVersion) {
      return Corrupt(fmt::format("{}: unsupported DV file version {}", where, int{p[0]}));
    }
    ++p;
  }
  const uint32_t stored_size = LoadBE32(p);
  if (stored_size != static_cast<uint32_t>(dv.size_in_bytes)) {
    return Corrupt(fmt::format("{}: stored size {} differs from sizeInBytes {}", where,
                               stored_size, dv.size_in_bytes));
  }
  std::string_view bitmap(reinterpret_cast<const char*>(p + 4),
                          static_cast<size_t>(dv.size_in_bytes));
  const uint32_t stored_crc = LoadBE32(p + 4 + dv.size_in_bytes);
  const uint32_t actual_crc = Crc32(bitmap);
  if (stored_crc != actual_crc) {
    return Corrupt(fmt::format("{}: checksum mismatch (stored {:08x}, computed {:08x})", where,
                               stored_crc, actual_crc));
  }
  auto rows = DeserializeRoaringBitmapArray(bitmap);
  if (!rows.ok()) return Corrupt(fmt::format("{}: {}", where, rows.status().message()));
  ARROW_RETURN_NOT_OK(CheckCardinality(dv, *rows, where));
  return rows.MoveValueUnsafe();
}

arrow::Result<std::string> EncodeInlineDeletionVector(const std::vector<uint64_t>& sorted_rows) {
  ARROW_ASSIGN_OR_RAISE(std::string bytes, SerializeRoaringBitmapArray(sorted_rows));
  return Z85Encode(bytes);
}

arrow::Result<DeletionVectorDescriptor> MakeInlineDeletionVector(
    const std::vector<uint64_t>& sorted_rows) {
  ARROW_ASSIGN_OR_RAISE(std::string bytes, SerializeRoaringBitmapArray(sorted_rows));
  DeletionVectorDescriptor dv;
  dv.storage_type = "i";
  dv.path_or_inline_dv = Z85Encode(bytes);
  dv.size_in_bytes = static_cast<int32_t>(bytes.size());
  dv.cardinality = static_cast<int64_t>(sorted_rows.size());
  return dv;
}

}  // namespace deltacpp::internal
