// The wall clock in milliseconds since the epoch (commit times, file times, retention cutoffs).
#pragma once

#include <chrono>
#include <cstdint>

namespace deltacpp::internal {

/// Milliseconds since 1970-01-01T00:00:00Z.
inline int64_t WallClockMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace deltacpp::internal
