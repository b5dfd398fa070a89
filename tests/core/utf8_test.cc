// Well-formed UTF-8 as RFC 3629 defines it, and where the first ill-formed byte is.
#include "core/utf8.h"

#include <gtest/gtest.h>

namespace muster {
namespace {

TEST(Utf8Test, WellFormedTextPasses) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("kind: ConfigMap"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"));  // é € 🚀
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));                           // U+10FFFF
}

TEST(Utf8Test, IllFormedTextIsFoundAtItsFirstBadByte) {
  size_t at = 0;
  EXPECT_FALSE(IsValidUtf8("a\xebind", &at));  // a lead byte without continuation bytes
  EXPECT_EQ(at, 1u);
  EXPECT_FALSE(IsValidUtf8("ok\xc0\xaf", &at));  // overlong "/"
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80", &at));  // a surrogate
  EXPECT_EQ(at, 0u);
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // cut short
  EXPECT_FALSE(IsValidUtf8("\x80"));              // a lone continuation byte
  EXPECT_FALSE(IsValidUtf8("\xff"));
}

}  // namespace
}  // namespace muster
