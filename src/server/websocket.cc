#include "server/websocket.h"

#include <openssl/evp.h>

namespace muster::server::websocket {
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
constexpr size_t kMaxControlPayload = 125;

bool IsControl(uint8_t opcode) { return (opcode & 0x8) != 0; }

std::string Base64(const unsigned char* data, size_t len) {
  std::string out(4 * ((len + 2) / 3), '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(len));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::string AcceptValue(std::string_view client_key) {
  std::string input(client_key);
  input += kGuid;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(input.data(), input.size(), digest, &len, EVP_sha1(), nullptr);
  return Base64(digest, len);
}

bool ValidKey(std::string_view key) {
  // 16 bytes in base64: 22 characters and "==".
  if (key.size() != 24 || key.substr(22) != "==") return false;
  for (char c : key.substr(0, 22)) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/';
    if (!ok) return false;
  }
  return true;
}

std::string EncodeFrame(Opcode op, std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 10);
  out += static_cast<char>(0x80 | static_cast<uint8_t>(op));
  const uint64_t n = payload.size();
  if (n < 126) {
    out += static_cast<char>(n);
  } else if (n <= 0xFFFF) {
    out += static_cast<char>(126);
    out += static_cast<char>((n >> 8) & 0xFF);
    out += static_cast<char>(n & 0xFF);
  } else {
    out += static_cast<char>(127);
    for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((n >> shift) & 0xFF);
  }
  out += payload;
  return out;
}

std::string EncodeClose(uint16_t code, std::string_view reason) {
  std::string payload;
  payload += static_cast<char>(code >> 8);
  payload += static_cast<char>(code & 0xFF);
  payload += reason.substr(0, kMaxControlPayload - 2);
  return EncodeFrame(Opcode::kClose, payload);
}

FrameDecoder::Result FrameDecoder::Fail(uint16_t code, std::string error) {
  close_code_ = code;
  error_ = std::move(error);
  return Result::kError;
}

FrameDecoder::Result FrameDecoder::Next(std::string& in, Message& out) {
  if (close_code_ != 0) return Result::kError;
  size_t consumed = 0;
  while (true) {
    std::string_view rest(in.data() + consumed, in.size() - consumed);
    if (rest.size() < 2) break;
    const auto b0 = static_cast<uint8_t>(rest[0]);
    const auto b1 = static_cast<uint8_t>(rest[1]);
    const bool fin = (b0 & 0x80) != 0;
    const uint8_t opcode = b0 & 0x0F;
    if ((b0 & 0x70) != 0) return Fail(kCloseProtocolError, "a reserved bit is set");
    if ((b1 & 0x80) == 0) return Fail(kCloseProtocolError, "a client frame must be masked");
    const bool known = opcode <= 0x2 || (opcode >= 0x8 && opcode <= 0xA);
    if (!known) return Fail(kCloseProtocolError, "unknown opcode " + std::to_string(opcode));
    uint64_t len = b1 & 0x7F;
    size_t header = 2;
    if (len == 126) {
      if (rest.size() < 4) break;
      len = (static_cast<uint64_t>(static_cast<uint8_t>(rest[2])) << 8) |
            static_cast<uint8_t>(rest[3]);
      header = 4;
    } else if (len == 127) {
      if (rest.size() < 10) break;
      len = 0;
      for (size_t i = 2; i < 10; ++i) len = (len << 8) | static_cast<uint8_t>(rest[i]);
      header = 10;
      if ((len >> 63) != 0) return Fail(kCloseProtocolError, "a frame length's top bit is set");
    }
    if (IsControl(opcode)) {
      if (!fin) return Fail(kCloseProtocolError, "a control frame must not be fragmented");
      if (len > kMaxControlPayload) {
        return Fail(kCloseProtocolError, "a control frame's payload exceeds 125 bytes");
      }
    } else {
      if (opcode == 0 && !in_message_) {
        return Fail(kCloseProtocolError, "a continuation frame without a message to continue");
      }
      if (opcode != 0 && in_message_) {
        return Fail(kCloseProtocolError, "a new message before the last one's final fragment");
      }
      if (len > max_message_ || message_.size() + len > max_message_) {
        return Fail(kCloseTooBig, "a message exceeds " + std::to_string(max_message_) + " bytes");
      }
    }
    const size_t total = header + 4 + static_cast<size_t>(len);
    if (rest.size() < total) break;
    const char* mask = rest.data() + header;
    std::string payload(rest.substr(header + 4, static_cast<size_t>(len)));
    for (size_t i = 0; i < payload.size(); ++i) payload[i] ^= mask[i % 4];
    consumed += total;
    if (IsControl(opcode)) {
      out.op = static_cast<Opcode>(opcode);
      out.payload = std::move(payload);
      in.erase(0, consumed);
      return Result::kMessage;
    }
    if (opcode != 0) {
      in_message_ = true;
      message_op_ = static_cast<Opcode>(opcode);
      message_.clear();
    }
    message_ += payload;
    if (fin) {
      in_message_ = false;
      out.op = message_op_;
      out.payload = std::move(message_);
      message_.clear();
      in.erase(0, consumed);
      return Result::kMessage;
    }
  }
  in.erase(0, consumed);
  return Result::kNeedMore;
}

}  // namespace muster::server::websocket
