// Random (version 4) UUIDs: commit ids, data file and checkpoint names.
#pragma once

#include <string>

namespace deltacpp::internal {

/// A random RFC 4122 version-4 UUID in its 36-character lower-case text form. Every call draws
/// fresh bytes from the operating system, so forked processes never repeat each other.
std::string RandomUuidV4();

}  // namespace deltacpp::internal
