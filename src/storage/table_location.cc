#include <cctype>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "deltacpp/error.h"
#include "deltacpp/storage.h"
#include "util/uri.h"

namespace deltacpp {

using internal::EqualsIgnoreCase;
using internal::UriScheme;

arrow::Result<std::pair<std::string, std::shared_ptr<LogStore>>> ResolveTableLocation(
    std::string_view location) {
  if (location.empty()) {
    return DeltaError(DeltaErrorCode::kInvalidArgument, "table location is empty");
  }
  std::string path;
  std::string_view scheme = UriScheme(location);
  if (!scheme.empty() && EqualsIgnoreCase(scheme, "file")) {
    auto local = internal::LocalPathFromUri(location);
    if (!local.ok()) {
      if (GetDeltaErrorCode(local.status())) return local.status();
      return DeltaError(DeltaErrorCode::kInvalidArgument,
                        "table location " + std::string(location) + ": " +
                            local.status().message());
    }
    path = std::move(*local);
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
