// UTF-8 checks for text that goes into the Delta log, whose JSON must be valid UTF-8.
#pragma once

#include <arrow/status.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "deltacpp/error.h"

namespace deltacpp::internal {

/// True when `text` is valid UTF-8 (no overlong forms, surrogates or code points above
/// U+10FFFF).
bool IsValidUtf8(std::string_view text);

/// Byte offset of the first sequence of `text` that is not valid UTF-8, or nullopt when all of
/// `text` is valid.
std::optional<size_t> InvalidUtf8Offset(std::string_view text);

/// `text` quoted for an error message: valid characters as they are, control characters and
/// bytes that are not valid UTF-8 as `\xNN`, at most `max_bytes` bytes of `text` (then `...`).
std::string PrintableText(std::string_view text, size_t max_bytes = 64);

/// Why `text` is not valid UTF-8, for a message: `byte 0xE9 at offset 3 of 'caf\xE9'`. Only for
/// text that is not valid.
std::string DescribeInvalidUtf8(std::string_view text);

/// OK when `text` is valid UTF-8; otherwise an error of kind `code` that reads
/// `<what> is not valid UTF-8 (byte 0xNN at offset K of '...')`.
arrow::Status CheckUtf8(std::string_view text, DeltaErrorCode code, std::string_view what);

}  // namespace deltacpp::internal
