#include "protocol/path_encoding.h"

#include <fmt/core.h>

#include <cctype>
#include <filesystem>

#include "deltacpp/error.h"
#include "util/uri.h"

namespace deltacpp::internal {

namespace {

constexpr char kHexDigits[] = "0123456789ABCDEF";

void AppendEscaped(std::string& out, unsigned char c) {
  out += '%';
  out += kHexDigits[c >> 4];
  out += kHexDigits[c & 0x0F];
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

bool UriNeedsEscape(unsigned char c) {
  if (IsControl(c)) return true;
  switch (c) {
    case ' ': case '"': case '#': case '%': case '<': case '>': case '?': case '[': case '\\':
    case ']': case '^': case '`': case '{': case '|': case '}':
      return true;
    default:
      return false;
  }
}

bool HiveNeedsEscape(unsigned char c) {
  if (IsControl(c)) return true;
  switch (c) {
    case '"': case '#': case '%': case '\'': case '*': case '/': case ':': case '=': case '?':
    case '\\': case '{': case '[': case ']': case '^':
      return true;
    default:
      return false;
  }
}

template <typename Pred>
std::string EscapeIf(std::string_view in, Pred needs_escape) {
  std::string out;
  out.reserve(in.size());
  for (char ch : in) {
    auto c = static_cast<unsigned char>(ch);
    if (needs_escape(c)) {
      AppendEscaped(out, c);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string UriDecodePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && HexDigitValue(path[i + 1]) >= 0 && HexDigitValue(path[i + 2]) >= 0) {
      out += static_cast<char>(HexDigitValue(path[i + 1]) * 16 + HexDigitValue(path[i + 2]));
      i += 2;
    } else {
      out += path[i];
    }
  }
  return out;
}

std::string UriEncodePath(std::string_view path) { return EscapeIf(path, UriNeedsEscape); }

std::string EscapePartitionValueForPath(std::string_view value) { return EscapeIf(value, HiveNeedsEscape); }

bool IsAbsoluteUri(std::string_view path) {
  size_t colon = path.find(':');
  if (colon == std::string_view::npos || colon < 2) return false;
  auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!is_alpha(path[0])) return false;
  for (size_t i = 1; i < colon; ++i) {
    char c = path[i];
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

std::string CanonicalFilePath(std::string_view path, std::string_view table_root) {
  if (IsCanonicalAsIs(path)) return std::string(path);
  const bool has_scheme = IsAbsoluteUri(path);
  if (!has_scheme && !path.starts_with("/")) return UriDecodePath(path);
  auto local = LocalPathFromUri(path);
  if (!local.ok()) {
    // Another scheme, a remote host or a malformed escape: decoded text, scheme case-folded.
    std::string out = UriDecodePath(path);
    if (has_scheme) {
      for (size_t i = 0; i < out.size() && out[i] != ':'; ++i) {
        out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
      }
    }
    return out;
  }
  std::string normal = std::filesystem::path(*local).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  if (table_root == "/") return normal.size() > 1 ? normal.substr(1) : normal;
  if (!table_root.empty() && normal.size() > table_root.size() + 1 &&
      std::string_view(normal).starts_with(table_root) && normal[table_root.size()] == '/') {
    return normal.substr(table_root.size() + 1);
  }
  return normal;
}

}  // namespace deltacpp::internal

namespace deltacpp::internal {

namespace {

arrow::Status OutsideTable(std::string_view what) {
  return DeltaError(DeltaErrorCode::kCorruptLog, std::string(what));
}

}  // namespace

arrow::Result<std::string> CheckInsideTable(std::string_view table_root, std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    return OutsideTable("a file path holds a NUL byte");
  }
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  std::string root = std::filesystem::path(table_root).lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const bool inside =
      root == "/" || normal == root ||
      (normal.size() > root.size() && std::string_view(normal).starts_with(root) &&
       normal[root.size()] == '/');
  if (!normal.starts_with("/") || !inside) {
    return OutsideTable(fmt::format("path {} is outside the table root {}", normal, root));
  }
  return normal;
}

arrow::Result<std::string> ResolveFileInTable(std::string_view table_root,
                                              std::string_view base_dir, std::string_view raw) {
  if (raw.empty()) return OutsideTable("empty file path");
  // The common case, a plain relative path without escapes or `..`, cannot leave the root:
  // it is kept cheap (scan planning resolves every file).
  if (IsCanonicalAsIs(raw) && raw.find("..") == std::string_view::npos &&
      raw.find('\0') == std::string_view::npos) {
    std::string out;
    out.reserve(base_dir.size() + 1 + raw.size());
    out.append(base_dir);
    out.push_back('/');
    out.append(raw);
    return out;
  }
  std::string local;
  if (IsAbsoluteUri(raw) || raw.starts_with("/")) {
    auto decoded = LocalPathFromUri(raw);
    if (!decoded.ok()) {
      // Another scheme or host, or a malformed escape: nothing this reader may open.
      return OutsideTable(fmt::format("path '{}' names a file outside the table root {}: {}",
                                      raw, table_root, decoded.status().message()));
    }
    local = std::move(*decoded);
  } else {
    local = std::string(base_dir) + "/" + UriDecodePath(raw);
  }
  auto inside = CheckInsideTable(table_root, local);
  if (!inside.ok()) {
    return OutsideTable(fmt::format("path '{}': {}", raw, inside.status().message()));
  }
  return inside;
}

}  // namespace deltacpp::internal
