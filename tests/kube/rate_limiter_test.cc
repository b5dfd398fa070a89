#include "kube/rate_limiter.h"

#include <gtest/gtest.h>

#include <vector>

namespace muster::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// A paused clock: time moves only when the test advances it. Sleeps are recorded, not
// slept, so the limiter's arithmetic is checked exactly and nothing waits.
struct FakeTime {
  std::chrono::steady_clock::time_point now{};
  std::vector<nanoseconds> sleeps;
  RateLimiter Limiter(double qps, int burst) {
    return RateLimiter(
        qps, burst, [this] { return now; }, [this](nanoseconds d) { sleeps.push_back(d); });
  }
};

TEST(RateLimiterTest, BurstIsAvailableAtOnceThenWaitsOneIntervalPerToken) {
  FakeTime t;
  RateLimiter limiter = t.Limiter(/*qps=*/10, /*burst=*/3);
  for (int i = 0; i < 3; ++i) limiter.Acquire();
  EXPECT_TRUE(t.sleeps.empty());
  // The bucket is empty: at 10 QPS the next token is 100 ms away, and a second caller
  // queued behind it waits for the token after that (200 ms).
  limiter.Acquire();
  limiter.Acquire();
  ASSERT_EQ(t.sleeps.size(), 2u);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(t.sleeps[0]).count(), 100);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(t.sleeps[1]).count(), 200);
}

TEST(RateLimiterTest, RefillsAtQpsButNeverBeyondBurst) {
  FakeTime t;
  RateLimiter limiter = t.Limiter(/*qps=*/10, /*burst=*/5);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  t.now += milliseconds(250);  // 2.5 tokens earned
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  // Half a token left: the next one is 50 ms away.
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(limiter.WaitTime()).count(), 50);
  t.now += std::chrono::seconds(100);  // would be 1000 tokens; capped at the burst of 5
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  EXPECT_TRUE(t.sleeps.empty());
}

TEST(RateLimiterTest, NonPositiveQpsIsUnlimited) {
  FakeTime t;
  RateLimiter limiter = t.Limiter(/*qps=*/0, /*burst=*/1);
  for (int i = 0; i < 1000; ++i) limiter.Acquire();
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_EQ(limiter.WaitTime().count(), 0);
  EXPECT_TRUE(t.sleeps.empty());
}

TEST(RateLimiterTest, BurstBelowOneActsAsOne) {
  FakeTime t;
  RateLimiter limiter = t.Limiter(/*qps=*/4, /*burst=*/0);
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  limiter.Acquire();
  ASSERT_EQ(t.sleeps.size(), 1u);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(t.sleeps[0]).count(), 250);
}

TEST(RateLimiterTest, RealClockDefaultsWork) {
  // The defaults (steady_clock, this_thread::sleep_for) with a bucket that never empties.
  RateLimiter limiter(/*qps=*/1000, /*burst=*/100);
  for (int i = 0; i < 50; ++i) limiter.Acquire();
  EXPECT_TRUE(limiter.TryAcquire());
}

}  // namespace
}  // namespace muster::kube
