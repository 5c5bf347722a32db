// Percent-encoding of file paths in add/remove actions and Hive-style escaping of partition directory names.
#pragma once

#include <string>
#include <string_view>

namespace deltacpp::internal {

/// Decodes `%XX` escapes (either hex case) in an add/remove path. Malformed escapes (a `%` not followed by
/// two hex digits) are kept as they are; `+` is not treated as a space.
std::string UriDecodePath(std::string_view path);

/// Percent-encodes a relative path the way Hadoop's `Path.toUri()` does for Delta `add.path`: the
/// controls 0x00-0x1F and 0x7F, space, and `" # % < > ? [ \ ] ^ ` { | }` become `%XX` (uppercase hex).
/// Everything else, including `/`, `=`, `:`, `@`, `+`, `,` and non-ASCII UTF-8 bytes, is kept.
std::string UriEncodePath(std::string_view path);

/// Hive-style escaping of a partition value for a `col=value` directory name: the controls 0x00-0x1F and
/// 0x7F and the characters `" # % ' * / : = ? \ { [ ] ^` become `%XX` (uppercase hex). Callers use
/// `__HIVE_DEFAULT_PARTITION__` for null values.
std::string EscapePartitionValueForPath(std::string_view value);

/// The reconciliation key of an add/remove `path` in the table at `table_root` (an absolute,
/// lexically normal local path): two spellings of one file give the same key. A relative path
/// is percent-decoded. A `file:` URI (`file:/p`, `file:///p`, `file://localhost/p`) or an
/// absolute path `/p` is decoded and normalised; when it lies inside `table_root` the key is
/// its decoded path relative to the root, so it equals the relative spelling. Other schemes are
/// decoded with the scheme in lower case. A plain relative path (no `%` or `:`, not starting with
/// `/`) is returned as is without further work: that is the common case, kept cheap.
std::string CanonicalFilePath(std::string_view path, std::string_view table_root);

/// True when CanonicalFilePath returns `path` unchanged: a relative path without `%` or `:`.
inline bool IsCanonicalAsIs(std::string_view path) {
  if (!path.empty() && path.front() == '/') return false;
  for (char c : path) {
    if (c == '%' || c == ':') return false;
  }
  return true;
}

/// True when `path` starts with a URI scheme (`[A-Za-z][A-Za-z0-9+.-]+:`), e.g. `file:/x` or `s3://b/k`.
/// A single letter followed by `:` (a Windows drive) is not a scheme.
bool IsAbsoluteUri(std::string_view path);

}  // namespace deltacpp::internal

#include <arrow/result.h>

namespace deltacpp::internal {

/// `path` (an absolute local path) lexically normalised, when it lies inside `table_root` (an
/// absolute local path, normalised here too) or is the root itself. Anything else is CorruptLog
/// ("... is outside the table root ..."), as is a path holding a NUL byte. The check is lexical:
/// `..` segments are resolved, symbolic links are not followed.
arrow::Result<std::string> CheckInsideTable(std::string_view table_root, std::string_view path);

/// The local file a path from the log names: an add/remove/cdc `path`, a `p` deletion vector
/// path or a sidecar path. An absolute URI (`file:...`) or absolute path is decoded as is; a
/// relative path is decoded once and taken relative to `base_dir` (the table root, or
/// `_delta_log/_sidecars` for sidecars). The result must lie inside `table_root`
/// (CheckInsideTable): `..` that climbs out (also spelled `%2E%2E` or `..%2F`), an absolute path
/// elsewhere, a `file:` URI naming another host, any other scheme, an encoded NUL or an empty
/// path are CorruptLog. This is the one place every reader of data, deletion vector and
/// sidecar files resolves its paths.
arrow::Result<std::string> ResolveFileInTable(std::string_view table_root,
                                              std::string_view base_dir, std::string_view raw);

}  // namespace deltacpp::internal
