// Delays between commit attempts: exponential backoff with random jitter.
#pragma once

#include <chrono>

namespace deltacpp::internal {

/// The pause before commit attempt `attempt + 1` after `attempt` (1-based) lost its race:
/// `initial * 2^(attempt-1)` capped at `max`, then scaled by a random factor in [0.5, 1] so that
/// writers that collided do not collide again in lockstep. Never negative.
std::chrono::milliseconds BackoffDelay(int attempt, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max);

}  // namespace deltacpp::internal
