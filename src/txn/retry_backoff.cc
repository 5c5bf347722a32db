#include "txn/retry_backoff.h"

#include <algorithm>
#include <random>

namespace deltacpp::internal {

std::chrono::milliseconds BackoffDelay(int attempt, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max) {
  if (attempt <= 1) return std::chrono::milliseconds(0);
  int64_t base = std::max<int64_t>(initial.count(), 0);
  const int64_t cap = std::max<int64_t>(max.count(), 0);
  for (int i = 2; i < attempt && base < cap; ++i) base *= 2;
  base = std::min(base, cap);
  if (base <= 0) return std::chrono::milliseconds(0);
  // Seeded from the OS each time: forked writers must not share a jitter sequence.
  std::random_device rd;
  std::uniform_int_distribution<int64_t> jitter(base / 2, base);
  return std::chrono::milliseconds(jitter(rd));
}

}  // namespace deltacpp::internal
