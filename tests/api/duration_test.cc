#include "api/duration.h"

#include <gtest/gtest.h>

namespace muster::api {
namespace {

TEST(ParseDuration, PlainSeconds) {
  EXPECT_DOUBLE_EQ(*ParseDuration("90"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("0"), 0);
}

TEST(ParseDuration, GoDurations) {
  EXPECT_DOUBLE_EQ(*ParseDuration("90s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("15m"), 900);
  EXPECT_DOUBLE_EQ(*ParseDuration("2h"), 7200);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("1m30.5s"), 90.5);
}

TEST(ParseDuration, Rejects) {
  for (const char* bad : {"", "-5", "-5s", "abc", "5x", "1h30", "h", "1..5", "1e3", "+", " 5"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseDuration("5x").status().message(),
            "\"5x\" is not a duration (seconds like \"90\" or \"1.5\", or a duration like "
            "\"90s\", \"15m\", \"1h30m\")");
}

}  // namespace
}  // namespace muster::api
