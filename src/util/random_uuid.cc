#include "util/random_uuid.h"

#include <array>
#include <cstdint>
#include <random>

namespace deltacpp::internal {

std::string RandomUuidV4() {
  // A fresh random_device per call: a generator kept in process state would be duplicated by
  // fork() and hand the same ids to parent and child.
  std::random_device rd;
  std::array<uint8_t, 16> bytes;
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t r = rd();
    for (size_t j = 0; j < 4; ++j) bytes[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
  bytes[6] = static_cast<uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<uint8_t>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0x0F];
  }
  return out;
}

}  // namespace deltacpp::internal
