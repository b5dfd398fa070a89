// Transport: the bytes of one accepted connection, plain or TLS, non-blocking.
// The reactor calls it when epoll reports the socket ready; a TLS transport may
// need the opposite readiness (a read that must write a handshake record first),
// which the result says.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "server/auth/identity.h"

namespace muster::server {

enum class IoResult { kOk, kWantRead, kWantWrite, kClosed, kError };

class Transport {
 public:
  virtual ~Transport() = default;
  // Completes the TLS handshake (plain: nothing to do).
  virtual IoResult Handshake() { return IoResult::kOk; }
  // Reads up to `cap` bytes into `buf`; kOk with n > 0, or why not.
  virtual IoResult Read(char* buf, size_t cap, size_t& n) = 0;
  virtual IoResult Write(const char* buf, size_t len, size_t& n) = 0;
  // Decrypted bytes already buffered inside the transport (epoll cannot see them).
  virtual bool HasBuffered() const { return false; }
  // Fills what the handshake established (the client certificate's identity).
  virtual void Identify(auth::PeerIdentity& /*peer*/) const {}
};

class PlainTransport : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  IoResult Read(char* buf, size_t cap, size_t& n) override {
    const ssize_t r = ::recv(fd_, buf, cap, 0);
    if (r > 0) {
      n = static_cast<size_t>(r);
      return IoResult::kOk;
    }
    if (r == 0) return IoResult::kClosed;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? IoResult::kWantRead
                                                                     : IoResult::kError;
  }
  IoResult Write(const char* buf, size_t len, size_t& n) override {
    const ssize_t r = ::send(fd_, buf, len, MSG_NOSIGNAL);
    if (r >= 0) {
      n = static_cast<size_t>(r);
      return IoResult::kOk;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? IoResult::kWantWrite
                                                                     : IoResult::kError;
  }

 private:
  int fd_;
};

}  // namespace muster::server
