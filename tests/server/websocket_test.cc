// The WebSocket codec of `kubectl exec`: the handshake's accept value (RFC 6455's own
// example), the server's frames and the decoder of a client's masked frames, with
// its bounds.
#include "server/websocket.h"

#include <gtest/gtest.h>

#include "websocket_test_util.h"

namespace muster::server::websocket {
namespace {

using testing::ClientFrame;

TEST(WebSocketTest, AcceptValueIsRfc6455s) {
  // RFC 6455 section 1.3.
  EXPECT_EQ(AcceptValue("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_TRUE(ValidKey("dGhlIHNhbXBsZSBub25jZQ=="));
  EXPECT_FALSE(ValidKey("dGhlIHNhbXBsZSBub25jZQ"));
  EXPECT_FALSE(ValidKey("dGhlIHNhbXBsZSBub25j!Q=="));
  EXPECT_FALSE(ValidKey(""));
}

TEST(WebSocketTest, ServerFramesUseTheShortestLength) {
  EXPECT_EQ(EncodeFrame(Opcode::kBinary, "ab"), std::string("\x82\x02"
                                                            "ab",
                                                            4));
  const std::string mid = EncodeFrame(Opcode::kBinary, std::string(200, 'x'));
  ASSERT_EQ(mid.size(), 204u);
  EXPECT_EQ(static_cast<uint8_t>(mid[1]), 126);
  EXPECT_EQ(static_cast<uint8_t>(mid[2]), 0);
  EXPECT_EQ(static_cast<uint8_t>(mid[3]), 200);
  const std::string big = EncodeFrame(Opcode::kBinary, std::string(70000, 'x'));
  ASSERT_EQ(big.size(), 70010u);
  EXPECT_EQ(static_cast<uint8_t>(big[1]), 127);
  const std::string close = EncodeClose(kCloseNormal, std::string(300, 'r'));
  EXPECT_EQ(static_cast<uint8_t>(close[0]), 0x88);
  EXPECT_EQ(static_cast<uint8_t>(close[1]), 125);  // a control frame's most
}

TEST(WebSocketTest, DecodesMaskedFramesAcrossReads) {
  FrameDecoder decoder(1 << 20);
  const std::string bytes =
      ClientFrame(Opcode::kBinary, std::string("\x00hello", 6)) + ClientFrame(Opcode::kPing, "p");
  std::string in;
  Message m;
  // A byte at a time: nothing until the first frame is whole.
  size_t fed = 0;
  FrameDecoder::Result r = FrameDecoder::Result::kNeedMore;
  while (r == FrameDecoder::Result::kNeedMore && fed < bytes.size()) {
    in += bytes[fed++];
    r = decoder.Next(in, m);
  }
  ASSERT_EQ(r, FrameDecoder::Result::kMessage);
  EXPECT_EQ(fed, 12u);  // 2 header + 4 mask + 6 payload
  EXPECT_EQ(m.op, Opcode::kBinary);
  EXPECT_EQ(m.payload, std::string("\x00hello", 6));
  in += bytes.substr(fed);
  ASSERT_EQ(decoder.Next(in, m), FrameDecoder::Result::kMessage);
  EXPECT_EQ(m.op, Opcode::kPing);
  EXPECT_EQ(m.payload, "p");
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kNeedMore);
}

TEST(WebSocketTest, ReassemblesFragmentsWithControlFramesBetween) {
  FrameDecoder decoder(1 << 20);
  std::string in = ClientFrame(Opcode::kBinary, "ab", /*fin=*/false) +
                   ClientFrame(Opcode::kPing, "") +
                   ClientFrame(Opcode::kContinuation, std::string(300, 'c'), true);
  Message m;
  ASSERT_EQ(decoder.Next(in, m), FrameDecoder::Result::kMessage);
  EXPECT_EQ(m.op, Opcode::kPing);
  ASSERT_EQ(decoder.Next(in, m), FrameDecoder::Result::kMessage);
  EXPECT_EQ(m.op, Opcode::kBinary);
  EXPECT_EQ(m.payload, "ab" + std::string(300, 'c'));
}

TEST(WebSocketTest, RefusesWhatRfc6455Forbids) {
  Message m;
  {
    FrameDecoder decoder(1 << 20);
    std::string in("\x82\x01x", 3);  // unmasked
    EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kError);
    EXPECT_EQ(decoder.close_code(), kCloseProtocolError);
    EXPECT_NE(decoder.error().find("masked"), std::string::npos);
  }
  {
    FrameDecoder decoder(1 << 20);
    std::string in = ClientFrame(Opcode::kPing, "x", /*fin=*/false);
    EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kError);
    EXPECT_EQ(decoder.close_code(), kCloseProtocolError);
  }
  {
    FrameDecoder decoder(1 << 20);
    std::string in = ClientFrame(Opcode::kContinuation, "x");
    EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kError);
  }
  {
    // Refused from the header alone: the 64 KiB are never waited for.
    FrameDecoder decoder(1024);
    std::string in = ClientFrame(Opcode::kBinary, std::string(65536, 'x')).substr(0, 20);
    EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kError);
    EXPECT_EQ(decoder.close_code(), kCloseTooBig);
  }
  {
    // Fragments add up against the bound too.
    FrameDecoder decoder(1024);
    std::string in = ClientFrame(Opcode::kBinary, std::string(600, 'x'), false) +
                     ClientFrame(Opcode::kContinuation, std::string(600, 'x'), true);
    EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kError);
    EXPECT_EQ(decoder.close_code(), kCloseTooBig);
  }
  {
    FrameDecoder decoder(1 << 20);
    std::string in("\xC2\x80\0\0\0\0", 6);  // RSV1
    EXPECT_EQ(decoder.Next(in, m), FrameDecoder::Result::kError);
  }
}

}  // namespace
}  // namespace muster::server::websocket
