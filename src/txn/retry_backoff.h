// Delays between commit attempts: an immediate first retry, then exponential backoff with
// random jitter.
#pragma once

#include <chrono>

namespace deltacpp::internal {

/// The pause before commit attempt `attempt + 1` after `attempt` (1-based) lost its race.
/// A writer that lost has just read the winning commits and checked them for conflicts, so its
/// first retry is immediate: sleeping then only hands the next version to another writer. From
/// the second lost race on, the pause is `initial * 2^(attempt-2)` capped at `max`, scaled by a
/// random factor in [0.5, 1] so that writers that collided do not collide again in lockstep.
/// Never negative.
std::chrono::milliseconds BackoffDelay(int attempt, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max);

}  // namespace deltacpp::internal
