#include <cctype>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"

namespace deltacpp {

namespace {

bool IsSchemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) followed by ':'.
// Returns the scheme (without ':') or empty when `location` does not start with one.
std::string_view SchemeOf(std::string_view location) {
  auto colon = location.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  if (!std::isalpha(static_cast<unsigned char>(location[0]))) return {};
  for (size_t i = 1; i < colon; ++i) {
    if (!IsSchemeChar(location[i])) return {};
  }
  return location.substr(0, colon);
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

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

arrow::Result<std::string> PercentDecode(std::string_view text, std::string_view location) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "invalid percent-escape in table location " + std::string(location));
    }
    char decoded = static_cast<char>(hi * 16 + lo);
    if (decoded == '\0') {
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "table location " + std::string(location) + " contains an encoded NUL");
    }
    out.push_back(decoded);
    i += 2;
  }
  return out;
}

// Accepts file:/p, file:///p and file://localhost/p; a remote host cannot be reached locally.
arrow::Result<std::string> PathFromFileUri(std::string_view location) {
  std::string_view rest = location.substr(location.find(':') + 1);
  // Query and fragment are not part of the path; a literal '?' or '#' in a path is percent-encoded.
  rest = rest.substr(0, rest.find_first_of("?#"));
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    auto slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && !EqualsIgnoreCase(host, "localhost")) {
      return DeltaError(DeltaErrorCode::kUnsupportedStorage,
                        "unsupported file URI host '" + std::string(host) + "' in " +
                            std::string(location) + ": only local paths are supported");
    }
    rest = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
  }
  return PercentDecode(rest, location);
}

}  // namespace

arrow::Result<std::pair<std::string, std::shared_ptr<LogStore>>> ResolveTableLocation(
    std::string_view location) {
  if (location.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "table location is empty");
  }
  std::string path;
  std::string_view scheme = SchemeOf(location);
  if (!scheme.empty() && EqualsIgnoreCase(scheme, "file")) {
    ARROW_ASSIGN_OR_RAISE(path, PathFromFileUri(location));
  } else if (!scheme.empty() && location.substr(scheme.size()).starts_with("://")) {
    return DeltaError(DeltaErrorCode::kUnsupportedStorage,
                      "unsupported storage scheme '" + std::string(scheme) + "' in " +
                          std::string(location) + ": only local paths are supported");
  } else {
    // Without "://" a colon is an ordinary path character (e.g. "tables/a:b").
    path = std::string(location);
  }
  if (path.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument,
                      "table location " + std::string(location) + " has an empty path");
  }

  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) {
    return arrow::Status::IOError("cannot make table location ", location,
                                  " absolute: ", ec.message());
  }
  std::string normal = absolute.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return std::make_pair(std::move(normal), MakeLocalLogStore());
}

}  // namespace deltacpp
