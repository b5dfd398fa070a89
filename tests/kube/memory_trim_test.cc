#include "kube/memory_trim.h"

#include <gtest/gtest.h>

namespace muster::kube {
namespace {

TEST(MemoryTrimmerTest, GrowthAndSmallDropsDoNotTrim) {
  MemoryTrimmer t;
  EXPECT_FALSE(t.Observe(100, 0));
  EXPECT_FALSE(t.Observe(12000, 1));
  EXPECT_FALSE(t.Observe(11500, 5));   // 500 gone: under min_drop
  EXPECT_FALSE(t.Observe(11500, 50));  // 500 gone, quiet: still not worth it
  EXPECT_FALSE(t.Observe(7000, 60));   // 5000 gone, but over half remain
  EXPECT_FALSE(t.Observe(7000, 70));
}

TEST(MemoryTrimmerTest, TrimsOnceTheDropIsQuiet) {
  MemoryTrimmer t;
  EXPECT_FALSE(t.Observe(12000, 0));
  EXPECT_FALSE(t.Observe(5000, 1));    // large, but still falling
  EXPECT_FALSE(t.Observe(1000, 1.5));  // still falling
  EXPECT_TRUE(t.Observe(1000, 2.6));   // quiet for 1.1 s
  EXPECT_FALSE(t.Observe(1000, 3));    // done: the new peak is 1000
  EXPECT_FALSE(t.Observe(1000, 30));
}

TEST(MemoryTrimmerTest, ALongDropIsTrimmedAsItGoes) {
  MemoryTrimmer t;
  EXPECT_FALSE(t.Observe(100000, 0));
  size_t objects = 100000;
  int trims = 0;
  // 2,000 objects gone every half second: never quiet.
  for (double now = 0.5; now <= 25; now += 0.5) {
    objects -= 2000;
    trims += t.Observe(objects, now) ? 1 : 0;
  }
  EXPECT_GE(trims, 1);
  EXPECT_LE(trims, 3);
}

}  // namespace
}  // namespace muster::kube
