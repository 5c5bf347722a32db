// Small text helpers shared by every layer: case-insensitive comparison, percent-decoding and
// turning `file:` URIs into local paths.
#pragma once

#include <arrow/result.h>

#include <string>
#include <string_view>

namespace deltacpp::internal {

/// ASCII case-insensitive equality.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

/// `s` with ASCII letters in lower case (other bytes unchanged).
std::string AsciiLower(std::string_view s);

/// Value of a hex digit, or -1.
int HexDigitValue(char c);

/// The RFC 3986 scheme `location` starts with (without ':'), or empty when it has none.
std::string_view UriScheme(std::string_view location);

/// Decodes every `%XX`; a malformed escape or an encoded NUL is Invalid.
arrow::Result<std::string> PercentDecodeStrict(std::string_view text);

/// The local path a URI names: `file:/p`, `file:///p`, `file://localhost/p` (percent-decoded) or
/// an absolute `/p`. A remote host or another scheme is UnsupportedStorage; anything else
/// (relative text, bad escapes) is Invalid.
arrow::Result<std::string> LocalPathFromUri(std::string_view uri);

}  // namespace deltacpp::internal
