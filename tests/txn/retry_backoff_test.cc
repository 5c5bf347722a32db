// Pauses between commit attempts after lost races.
#include "txn/retry_backoff.h"

#include <gtest/gtest.h>

namespace deltacpp::internal {
namespace {

using std::chrono::milliseconds;

TEST(RetryBackoff, FirstRetryAfterALostRaceIsImmediate) {
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(BackoffDelay(1, milliseconds(8), milliseconds(100)).count(), 0);
  }
}

TEST(RetryBackoff, LaterRetriesDoubleWithJitterWithinHalfToFullOfTheStep) {
  for (int i = 0; i < 50; ++i) {
    auto second = BackoffDelay(2, milliseconds(8), milliseconds(1000)).count();
    EXPECT_GE(second, 4);
    EXPECT_LE(second, 8);
    auto fourth = BackoffDelay(4, milliseconds(8), milliseconds(1000)).count();
    EXPECT_GE(fourth, 16);
    EXPECT_LE(fourth, 32);
  }
}

TEST(RetryBackoff, PauseIsCappedAtTheMaximum) {
  for (int i = 0; i < 50; ++i) {
    auto late = BackoffDelay(60, milliseconds(8), milliseconds(50)).count();
    EXPECT_GE(late, 25);
    EXPECT_LE(late, 50);
  }
}

TEST(RetryBackoff, ZeroOrNegativeSettingsMeanNoPause) {
  EXPECT_EQ(BackoffDelay(5, milliseconds(0), milliseconds(50)).count(), 0);
  EXPECT_EQ(BackoffDelay(5, milliseconds(-3), milliseconds(-1)).count(), 0);
}

}  // namespace
}  // namespace deltacpp::internal
