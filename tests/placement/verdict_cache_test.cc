#include "placement/verdict_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace muster::placement {
namespace {

TEST(VerdictCache, UnknownUntilSet) {
  VerdictCache c(10);
  EXPECT_EQ(c.Get(3), -1);
  c.Set(3, 2);
  EXPECT_EQ(c.Get(3), 2);
  c.Set(3, 0);
  EXPECT_EQ(c.Get(3), 0);
  EXPECT_EQ(c.Get(4), -1);
  // Out of range: ignored, unknown.
  c.Set(10, 1);
  c.Set(-1, 1);
  EXPECT_EQ(c.Get(10), -1);
  EXPECT_EQ(c.Get(-1), -1);
}

TEST(VerdictCache, KeepsEveryVerdictWhileGrowingIntoADenseArray) {
  const int32_t n = 5000;
  VerdictCache c(n);
  std::vector<int8_t> expect(n, -1);
  // Spread-out nodes first (table growth), then most of the cluster (dense switch).
  for (int32_t i = 0; i < n; i += 7) {
    expect[i] = static_cast<int8_t>(i % 5);
    c.Set(i, expect[i]);
    ASSERT_EQ(c.Get(i), expect[i]);
  }
  for (int32_t i = 0; i < n; ++i) ASSERT_EQ(c.Get(i), expect[i]) << i;
  for (int32_t i = 0; i < n; i += 2) {
    expect[i] = static_cast<int8_t>(i % 3);
    c.Set(i, expect[i]);
  }
  for (int32_t i = 0; i < n; ++i) ASSERT_EQ(c.Get(i), expect[i]) << i;
}

}  // namespace
}  // namespace muster::placement
