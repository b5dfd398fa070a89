#include "core/text.h"

#include <gtest/gtest.h>

namespace muster {
namespace {

TEST(Text, TrimSpace) {
  EXPECT_EQ(TrimSpace("  a b\t\r\n"), "a b");
  EXPECT_EQ(TrimSpace(" \t"), "");
  EXPECT_EQ(TrimSpace(""), "");
}

TEST(Text, SplitTrimmedKeepsEmptyPieces) {
  EXPECT_EQ(SplitTrimmed("ps, worker ;chief", ';'),
            (std::vector<std::string>{"ps, worker", "chief"}));
  EXPECT_EQ(SplitTrimmed("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SplitTrimmed("", ','), (std::vector<std::string>{""}));
}

}  // namespace
}  // namespace muster
