#include "util/utf8.h"

#include <fmt/core.h>
#include <simdjson.h>

namespace deltacpp::internal {

namespace {

// Length of the sequence a lead byte announces (1 for bytes that cannot lead one), clipped to
// what is left of the text. Whether the sequence is valid is simdjson's to say.
size_t SequenceLength(std::string_view text, size_t at) {
  const auto b = static_cast<unsigned char>(text[at]);
  size_t len = b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF8 ? 4 : 1;
  return std::min(len, text.size() - at);
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

std::optional<size_t> InvalidUtf8Offset(std::string_view text) {
  if (IsValidUtf8(text)) return std::nullopt;
  // Valid UTF-8 is a run of valid sequences, each starting where the previous one ends, so the
  // first sequence that does not validate on its own is where the text goes wrong.
  for (size_t at = 0; at < text.size();) {
    const size_t len = SequenceLength(text, at);
    if (!IsValidUtf8(text.substr(at, len))) return at;
    at += len;
  }
  return text.size();  // not reached: a text whose every sequence is valid is valid
}

std::string PrintableText(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t end = std::min(text.size(), max_bytes);
  for (size_t at = 0; at < end;) {
    const size_t len = SequenceLength(text, at);
    const auto b = static_cast<unsigned char>(text[at]);
    if (len > 1 && IsValidUtf8(text.substr(at, len))) {
      if (at + len > end) {  // a character the limit cuts is left out whole
        end = at;
        break;
      }
      out.append(text.substr(at, len));
      at += len;
    } else if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
      ++at;
    } else {
      out += fmt::format("\\x{:02X}", b);
      ++at;
    }
  }
  if (end < text.size()) out += "...";
  return out;
}

std::string DescribeInvalidUtf8(std::string_view text) {
  const size_t at = InvalidUtf8Offset(text).value_or(0);
  // Show the text up to a little past the bad byte, so the message points at it.
  const size_t shown = std::max<size_t>(at + 8, 24);
  return fmt::format("byte 0x{:02X} at offset {} of '{}'",
                     at < text.size() ? static_cast<unsigned char>(text[at]) : 0, at,
                     PrintableText(text, shown));
}

arrow::Status CheckUtf8(std::string_view text, DeltaErrorCode code, std::string_view what) {
  if (IsValidUtf8(text)) return arrow::Status::OK();
  return DeltaError(code,
                    fmt::format("{} is not valid UTF-8 ({})", what, DescribeInvalidUtf8(text)));
}

}  // namespace deltacpp::internal
