// WebSocket (RFC 6455) framing for the server side of `kubectl exec`: the handshake's
// accept value, frames the server sends (never masked) and an incremental decoder of
// the frames a client sends (always masked), with every length bounded so that a
// hostile client costs at most `max_message` bytes. Transport-free: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace muster::server::websocket {

enum class Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// Close codes (RFC 6455 section 7.4.1).
inline constexpr uint16_t kCloseNormal = 1000;
inline constexpr uint16_t kCloseProtocolError = 1002;
inline constexpr uint16_t kCloseTooBig = 1009;

// Sec-WebSocket-Accept for the client's Sec-WebSocket-Key: base64(SHA-1(key + GUID)).
std::string AcceptValue(std::string_view client_key);

// Whether `key` is a valid Sec-WebSocket-Key: the base64 of 16 bytes.
bool ValidKey(std::string_view key);

// One whole frame from the server (FIN set, unmasked).
std::string EncodeFrame(Opcode op, std::string_view payload);
// A close frame with `code` and `reason` (cut to fit a control frame's 125 bytes).
std::string EncodeClose(uint16_t code, std::string_view reason);

struct Message {
  Opcode op = Opcode::kBinary;  // kText, kBinary, kClose, kPing or kPong
  std::string payload;          // reassembled from its fragments, unmasked
};

class FrameDecoder {
 public:
  // A data message (all fragments together) longer than `max_message` is refused with
  // kCloseTooBig.
  explicit FrameDecoder(size_t max_message) : max_message_(max_message) {}

  enum class Result { kNeedMore, kMessage, kError };
  // Consumes frames from the front of `in` (erasing what it used). kMessage: `out`
  // holds one whole message (control frames may arrive between a message's
  // fragments and are returned on their own); kError: the connection must be closed
  // with close_code() and error().
  Result Next(std::string& in, Message& out);

  uint16_t close_code() const { return close_code_; }
  const std::string& error() const { return error_; }

 private:
  Result Fail(uint16_t code, std::string error);

  size_t max_message_;
  bool in_message_ = false;  // fragments of a data message are being collected
  Opcode message_op_ = Opcode::kBinary;
  std::string message_;
  uint16_t close_code_ = 0;
  std::string error_;
};

}  // namespace muster::server::websocket
