#include "util/uri.h"

#include <cctype>

#include "deltacpp/error.h"

namespace deltacpp::internal {

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view UriScheme(std::string_view location) {
  auto colon = location.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  if (!std::isalpha(static_cast<unsigned char>(location[0]))) return {};
  for (size_t i = 1; i < colon; ++i) {
    char c = location[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return {};
  }
  return location.substr(0, colon);
}

arrow::Result<std::string> PercentDecodeStrict(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int hi = i + 2 < text.size() ? HexDigitValue(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? HexDigitValue(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) return arrow::Status::Invalid("invalid percent-escape in '", text, "'");
    char decoded = static_cast<char>(hi * 16 + lo);
    if (decoded == '\0') return arrow::Status::Invalid("encoded NUL in '", text, "'");
    out.push_back(decoded);
    i += 2;
  }
  return out;
}

arrow::Result<std::string> LocalPathFromUri(std::string_view uri) {
  std::string_view scheme = UriScheme(uri);
  std::string_view rest = uri;
  if (!scheme.empty()) {
    if (!EqualsIgnoreCase(scheme, "file")) {
      return DeltaError(DeltaErrorCode::kUnsupportedStorage,
                        "unsupported storage scheme '" + std::string(scheme) + "' in " +
                            std::string(uri) + ": only local paths are supported");
    }
    rest = uri.substr(scheme.size() + 1);
    // Query and fragment are not part of the path; a literal '?' or '#' is percent-encoded.
    rest = rest.substr(0, rest.find_first_of("?#"));
    if (rest.starts_with("//")) {
      rest.remove_prefix(2);
      auto slash = rest.find('/');
      std::string_view host = rest.substr(0, slash);
      if (!host.empty() && !EqualsIgnoreCase(host, "localhost")) {
        return DeltaError(DeltaErrorCode::kUnsupportedStorage,
                          "unsupported file URI host '" + std::string(host) + "' in " +
                              std::string(uri) + ": only local paths are supported");
      }
      rest = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
    }
  }
  if (!rest.starts_with("/")) {
    return arrow::Status::Invalid("'", uri, "' is not an absolute path or file URI");
  }
  return PercentDecodeStrict(rest);
}

}  // namespace deltacpp::internal
