#include "expr/physical_name.h"

#include <arrow/util/key_value_metadata.h>

namespace deltacpp::internal {

namespace {

// Decodes a JSON string literal ("..." with escapes); returns the input when it is not quoted.
std::string DecodeJsonString(const std::string& raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return raw;
  std::string out;
  for (size_t i = 1; i + 1 < raw.size(); ++i) {
    char c = raw[i];
    if (c != '\\' || i + 2 >= raw.size()) {
      out += c;
      continue;
    }
    char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        if (i + 4 >= raw.size()) return raw;
        unsigned cp = 0;
        for (size_t k = 1; k <= 4; ++k) {
          char h = raw[i + k];
          int digit = (h >= '0' && h <= '9')   ? h - '0'
                      : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                      : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                               : -1;
          if (digit < 0) return raw;
          cp = cp * 16 + static_cast<unsigned>(digit);
        }
        i += 4;
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
        break;
      }
      default: out += e; break;  // \" \\ \/
    }
  }
  return out;
}

}  // namespace

std::string PhysicalFieldName(const arrow::Field& field) {
  const auto& metadata = field.metadata();
  if (metadata) {
    int index = metadata->FindKey(kPhysicalNameMetadataKey);
    if (index >= 0) {
      std::string name = DecodeJsonString(metadata->value(index));
      if (!name.empty()) return name;
    }
  }
  return field.name();
}

}  // namespace deltacpp::internal
