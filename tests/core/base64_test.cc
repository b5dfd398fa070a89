#include "core/base64.h"

#include <gtest/gtest.h>

namespace muster {
namespace {

TEST(Base64Test, RoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    bytes.push_back(static_cast<char>(i * 37));
    auto decoded = DecodeBase64(EncodeBase64(bytes));
    ASSERT_TRUE(decoded.ok()) << i;
    EXPECT_EQ(*decoded, bytes);
  }
  EXPECT_EQ(EncodeBase64("f"), "Zg==");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(EncodeBase64("foo"), "Zm9v");
}

TEST(Base64Test, RejectsBadInput) {
  EXPECT_FALSE(DecodeBase64("Zm9v!").ok());
  EXPECT_FALSE(DecodeBase64("Zg==Zg").ok());
  EXPECT_FALSE(DecodeBase64("Z").ok());
  EXPECT_EQ(DecodeBase64("Zm9v\nYmFy").value(), "foobar");
}

}  // namespace
}  // namespace muster
