// A WebSocket client's half for tests: masked frames as a client sends them, and the
// server's (unmasked) frames read back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/websocket.h"

namespace muster::server::testing {

inline std::string ClientFrame(websocket::Opcode op, const std::string& payload, bool fin = true) {
  std::string out;
  out += static_cast<char>((fin ? 0x80 : 0) | static_cast<uint8_t>(op));
  const uint64_t n = payload.size();
  if (n < 126) {
    out += static_cast<char>(0x80 | n);
  } else if (n <= 0xFFFF) {
    out += static_cast<char>(0x80 | 126);
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(n & 0xFF);
  } else {
    out += static_cast<char>(0x80 | 127);
    for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((n >> shift) & 0xFF);
  }
  const char mask[4] = {0x12, 0x34, 0x56, 0x78};
  out.append(mask, 4);
  for (size_t i = 0; i < payload.size(); ++i) out += static_cast<char>(payload[i] ^ mask[i % 4]);
  return out;
}

struct ServerFrame {
  websocket::Opcode op = websocket::Opcode::kBinary;
  std::string payload;
};

// Takes whole frames from the front of `in`; what is left is an incomplete frame.
inline std::vector<ServerFrame> ReadServerFrames(std::string& in) {
  std::vector<ServerFrame> frames;
  while (in.size() >= 2) {
    uint64_t len = static_cast<uint8_t>(in[1]) & 0x7F;
    size_t header = 2;
    if (len == 126) {
      if (in.size() < 4) break;
      len = (static_cast<uint64_t>(static_cast<uint8_t>(in[2])) << 8) | static_cast<uint8_t>(in[3]);
      header = 4;
    } else if (len == 127) {
      if (in.size() < 10) break;
      len = 0;
      for (size_t i = 2; i < 10; ++i) len = (len << 8) | static_cast<uint8_t>(in[i]);
      header = 10;
    }
    if (in.size() < header + len) break;
    frames.push_back({static_cast<websocket::Opcode>(in[0] & 0x0F), in.substr(header, len)});
    in.erase(0, header + len);
  }
  return frames;
}

}  // namespace muster::server::testing
