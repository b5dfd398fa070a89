#include "sim/duration.h"

#include <gtest/gtest.h>

namespace muster::sim {
namespace {

TEST(ParseDurationTest, AcceptsSecondsAndGoDurations) {
  EXPECT_DOUBLE_EQ(*ParseDuration("90"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("90s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("15m"), 900);
  EXPECT_DOUBLE_EQ(*ParseDuration("2h"), 7200);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDuration(" 1d "), 86400);
}

TEST(ParseDurationTest, RejectsMalformedText) {
  for (const char* bad : {"", "-5", "abc", "5x", "1h30", "h", "1..2s"}) {
    auto r = ParseDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace muster::sim
