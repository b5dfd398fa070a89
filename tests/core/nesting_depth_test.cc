#include "core/nesting_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace muster {
namespace {

TEST(NestingDepth, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_FALSE(ExceedsNestingDepth(R"({"a":[{"b":[]}]})", 4));
  EXPECT_TRUE(ExceedsNestingDepth(R"({"a":[{"b":[]}]})", 3));
  EXPECT_FALSE(ExceedsNestingDepth(R"({"a":"[[[[[[\"[[[["})", 1));
  EXPECT_TRUE(ExceedsNestingDepth(std::string(100000, '['), 1000));
  EXPECT_FALSE(ExceedsNestingDepth(std::string(1000, '[') + std::string(1000, ']') + "[]", 1000));
  // Unbalanced closers never make the depth negative.
  EXPECT_TRUE(ExceedsNestingDepth("]]]]" + std::string(3, '['), 2));
}

}  // namespace
}  // namespace muster
