// Deletion vectors: Z85 text, descriptor paths, the serialized roaring bitmap array and DV files.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/actions.h"

namespace deltacpp::internal {

/// Magic number opening a serialized bitmap array in the portable 64-bit roaring layout (the only
/// layout deltacpp writes).
inline constexpr int32_t kDeletionVectorPortableMagic = 1681511377;
/// Magic number of the legacy "native" layout (bucket key = array index); read only.
inline constexpr int32_t kDeletionVectorNativeMagic = 1681511376;
/// First byte of every DV file.
inline constexpr uint8_t kDeletionVectorFileVersion = 1;

/// Z85 text of `data`. Input whose length is not a multiple of 4 is zero-padded up to the next
/// multiple of 4 first (the caller keeps the unpadded length, e.g. in `sizeInBytes`).
std::string Z85Encode(std::string_view data);

/// Bytes of Z85 `text`. Also accepts the padded tail some writers (delta-rs / delta-kernel-rs)
/// emit for unaligned data: a final group of k '#' characters (k = 1..3, the number of missing
/// bytes) followed by the remaining 4 - k bytes as a big-endian base-85 number in 5 - k digits.
/// Errors (Invalid) when the length is not a multiple of 5, a character is outside the Z85
/// alphabet, or a group's value does not fit its byte count.
arrow::Result<std::string> Z85Decode(std::string_view text);

/// CRC-32 (IEEE 802.3 polynomial, as java.util.zip.CRC32 and zlib compute it) of `data`.
uint32_t Crc32(std::string_view data);

/// Path of the file holding an on-disk DV:
/// - "u": `<table_root>/<prefix>/deletion_vector_<uuid>.bin` (no prefix directory when the prefix
///   is empty), where the last 20 characters of `pathOrInlineDv` are the Z85 UUID.
/// - "p": the absolute URI turned into a local path (`file:` scheme or a bare absolute path,
///   percent-decoded).
/// Either way the file must lie inside the table root (ResolveFileInTable).
/// Errors: inline ("i") descriptors have no file (kInvalidArgument); a malformed "u" payload, an
/// unknown storage type, a relative "p" path and a path that leads outside the table root
/// (including a "p" URI with another scheme or host) are kCorruptLog.
arrow::Result<std::string> DeletionVectorAbsolutePath(const DeletionVectorDescriptor& dv,
                                                      const std::string& table_root);

/// The `pathOrInlineDv` of a "u" DV: `random_prefix` followed by the 20-character Z85 text of
/// the 16 bytes of `uuid` (canonical 8-4-4-4-12 hexadecimal text; the bytes in text order, i.e.
/// the most significant 64 bits big-endian, then the least significant). DeletionVectorAbsolutePath
/// maps the result back to `<table_root>/<random_prefix>/deletion_vector_<uuid>.bin`.
/// Errors (Invalid): `uuid` is not canonical UUID text, or `random_prefix` holds a '/'.
arrow::Result<std::string> EncodeUuidDeletionVectorPath(std::string_view random_prefix,
                                                        std::string_view uuid);

/// Appends one entry of a DV file to `file`: the big-endian 4-byte length of `bitmap`, the
/// bitmap, and its big-endian 4-byte CRC-32 (the layout ReadDeletedRowIndexes checks). The
/// entry's descriptor `offset` is `file->size()` before the call; a file starts with the
/// version byte kDeletionVectorFileVersion, so its first entry sits at offset 1. Errors
/// (Invalid) when `bitmap` is longer than a descriptor's int32 `sizeInBytes` can state.
arrow::Status AppendDeletionVectorFileEntry(std::string_view bitmap, std::string* file);

/// Row indexes held by a serialized bitmap array (either magic), sorted ascending and unique.
/// Malformed input is kCorruptLog.
arrow::Result<std::vector<uint64_t>> DeserializeRoaringBitmapArray(std::string_view bytes);

/// Serialized bitmap array (portable magic, little-endian) of `sorted_rows`, which must be strictly
/// ascending and below 2^63 (Invalid otherwise).
arrow::Result<std::string> SerializeRoaringBitmapArray(const std::vector<uint64_t>& sorted_rows);

/// The deleted row indexes of one DV, sorted ascending. Inline DVs are Z85-decoded; on-disk DVs
/// are read from their file through `fs` (`sizeInBytes` + 8 bytes at `offset`), and the stored
/// size and CRC-32 are checked. The number of rows must equal `cardinality`.
/// Errors name the table root and DV file: a missing file is kMissingFile; a bad size, checksum,
/// magic number, bitmap or cardinality is kCorruptLog.
/// For "u" DVs whose canonical file is absent, the file name delta-spark's own test suite writes
/// (`test%dv%prefix-deletion_vector_<uuid>.bin`) is tried before reporting the missing file, so
/// tables produced by those tests stay readable.
arrow::Result<std::vector<uint64_t>> ReadDeletedRowIndexes(const DeletionVectorDescriptor& dv,
                                                           const std::string& table_root,
                                                           arrow::fs::FileSystem& fs);

/// Z85 text of the serialized bitmap array of `sorted_rows` (the `pathOrInlineDv` of an inline
/// DV). Same preconditions as SerializeRoaringBitmapArray.
arrow::Result<std::string> EncodeInlineDeletionVector(const std::vector<uint64_t>& sorted_rows);

/// A complete inline descriptor ("i", `sizeInBytes` = serialized size, `cardinality` = row
/// count, no offset) for `sorted_rows`.
arrow::Result<DeletionVectorDescriptor> MakeInlineDeletionVector(
    const std::vector<uint64_t>& sorted_rows);

}  // namespace deltacpp::internal
