// A raw HTTP/1.1 client over one TCP connection to 127.0.0.1, for tests that need
// what a library client hides: pipelining, partial requests, never reading,
// watching the server close the connection. Every read has a timeout.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <optional>
#include <string>

namespace muster::server::testing {

struct RawResponse {
  int code = 0;
  std::string head;
  std::string body;
};

class RawClient {
 public:
  explicit RawClient(int port, int timeout_ms = 5000) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads one response (Content-Length or chunked body); nullopt on timeout/close.
  std::optional<RawResponse> Read() {
    RawResponse r;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    r.head = buf_.substr(0, end + 2);
    buf_.erase(0, end + 4);
    r.code = std::stoi(r.head.substr(9, 3));
    if (r.code == 100) return r;
    const std::string lower = Lower(r.head);
    if (auto cl = lower.find("content-length: "); cl != std::string::npos) {
      const size_t n = std::stoul(lower.substr(cl + 16));
      while (buf_.size() < n) {
        if (!Fill()) return std::nullopt;
      }
      r.body = buf_.substr(0, n);
      buf_.erase(0, n);
      return r;
    }
    while (true) {  // chunked
      size_t eol;
      while ((eol = buf_.find("\r\n")) == std::string::npos) {
        if (!Fill()) return std::nullopt;
      }
      const size_t n = std::stoul(buf_.substr(0, eol), nullptr, 16);
      while (buf_.size() < eol + 2 + n + 2) {
        if (!Fill()) return std::nullopt;
      }
      r.body += buf_.substr(eol + 2, n);
      buf_.erase(0, eol + 2 + n + 2);
      if (n == 0) return r;
    }
  }
  // Reads whatever arrives within the timeout (a stream's next chunk).
  std::string ReadSome() {
    if (!buf_.empty()) return std::exchange(buf_, "");
    Fill();
    return std::exchange(buf_, "");
  }
  // True when the server closed the connection (EOF) within the timeout.
  bool Closed() {
    char c;
    while (true) {
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

 private:
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  bool Fill() {
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  bool connected_ = false;
  std::string buf_;
};

}  // namespace muster::server::testing
