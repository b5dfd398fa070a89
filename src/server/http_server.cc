#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "server/auth/tls.h"
#include "server/http_server_impl.h"

namespace muster::server {
namespace {

constexpr uint64_t kListenTag = 0;
constexpr uint64_t kWakeTag = 1;
constexpr int kMaxEvents = 256;
// How long accepting pauses when the process is out of file descriptors.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

std::string AddressText(const sockaddr_storage& addr, bool& loopback) {
  char buf[INET6_ADDRSTRLEN] = {0};
  loopback = false;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) != 0;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) loopback = in6->sin6_addr.s6_addr[12] == 127;
  }
  return buf;
}

}  // namespace

HttpServer::Impl::Impl(RequestHandler handler, HttpServerOptions options)
    : handler_(std::move(handler)), options_(std::move(options)) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

HttpServer::Impl::~Impl() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (auto& [id, c] : conns_) {
    if (c->fd >= 0) ::close(c->fd);
  }
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

Status HttpServer::Impl::Bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return Status(StatusCode::kUnavailable, "cannot listen on " + host + ": unknown address");
  }
  std::string why;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // Accepted sockets inherit it: a response's head and body must not wait for the
    // client's delayed ACK (Nagle), ~40 ms per request on a keep-alive connection.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listen_fd_ = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  return Status::Ok();
}

void HttpServer::Impl::Serve() {
  if (listen_fd_ < 0) return;
  for (size_t i = 0; i < std::max<size_t>(1, options_.workers); ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
  pump_ = std::thread([this] { PumpLoop(); });
  running_ = true;
  epoll_event events[kMaxEvents];
  auto next_sweep = HttpClock::now();
  while (!stopping_) {
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, 250);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = events[i].data.u64;
      if (tag == kListenTag) {
        Accept();
      } else if (tag == kWakeTag) {
        uint64_t count = 0;
        while (::read(wake_fd_, &count, sizeof count) > 0) {
        }
        DrainCompletions();
      } else if (auto it = conns_.find(tag); it != conns_.end() && it->second->fd >= 0) {
        OnEvent(*it->second, events[i].events);
      }
    }
    const auto now = HttpClock::now();
    if (accept_paused_ && now >= accept_resume_) {
      accept_paused_ = false;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenTag;
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    }
    if (now >= next_sweep) {
      CheckTimeouts(now);
      next_sweep = now + std::chrono::milliseconds(250);
    }
    for (uint64_t id : closed_) conns_.erase(id);
    closed_.clear();
    connections_ = conns_.size();
  }
  Shutdown();
}

void HttpServer::Impl::Shutdown() {
  ::close(listen_fd_);
  listen_fd_ = -1;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    pump_stop_ = true;
  }
  pump_cv_.notify_all();
  if (pump_.joinable()) pump_.join();
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    workers_stop_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
  // What the handlers finished is sent where the socket still takes it; then every
  // connection closes.
  DrainCompletions();
  for (auto& [id, c] : conns_) {
    if (c->fd >= 0) {
      Flush(*c);
      Close(*c);
    }
  }
  conns_.clear();
  closed_.clear();
  connections_ = 0;
  running_ = false;
}

void HttpServer::Impl::Stop() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(wake_fd_, &one, sizeof one);
}

void HttpServer::Impl::Post(Completion completion) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(completions_mu_);
    first = completions_.empty();
    completions_.push_back(std::move(completion));
  }
  // Only the first completion of a batch wakes the reactor, which takes them all: the
  // workers of a group commit finish together, and one eventfd write each was a
  // system call and a reactor wake-up per request.
  if (!first) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(wake_fd_, &one, sizeof one);
}

void HttpServer::Impl::DrainCompletions() {
  std::vector<Completion> batch;
  {
    std::lock_guard<std::mutex> lock(completions_mu_);
    batch.swap(completions_);
  }
  for (auto& done : batch) {
    auto it = conns_.find(done.conn_id);
    if (it == conns_.end() || it->second->fd < 0) {
      if (done.stream) done.stream->cancelled = true;
      continue;
    }
    Apply(*it->second, done);
  }
}

void HttpServer::Impl::Accept() {
  while (true) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: free an idle one, or stop accepting for a moment
        // rather than spin on a listening socket that stays readable.
        if (!EvictIdle(nullptr)) {
          epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
          accept_paused_ = true;
          accept_resume_ = HttpClock::now() + kAcceptBackoff;
          return;
        }
        continue;
      }
      return;  // EAGAIN, or the client gave up before we accepted (ECONNABORTED)
    }
    auto c = std::make_unique<Connection>();
    c->peer.address = AddressText(addr, c->peer.loopback);
    if (!AdmitClient(c->peer.address)) {
      // Over the limits with nothing idle to evict: refuse this one, with a Status
      // where a plain socket can carry it.
      if (options_.tls == nullptr) {
        const std::string body =
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"too many connections","reason":"ServiceUnavailable","code":503})";
        const std::string bytes =
            ResponseHead(503, {{"Content-Type", "application/json"}, {"Retry-After", "1"}},
                         body.size(), false) +
            body;
        [[maybe_unused]] ssize_t w = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      }
      ::close(fd);
      continue;
    }
    c->id = next_id_++;
    c->fd = fd;
    c->parser = HttpRequestParser(options_.limits);
    c->accepted = c->last_activity = c->last_write_progress = HttpClock::now();
    if (options_.tls != nullptr) {
      c->io = options_.tls->NewTransport(fd);
      c->state = Connection::State::kHandshake;
    } else {
      c->io = std::make_unique<PlainTransport>(fd);
    }
    ++per_client_[c->peer.address];
    Connection& ref = *c;
    conns_.emplace(c->id, std::move(c));
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = ref.id;
    ref.events = ev.events;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    connections_ = conns_.size();
  }
}

bool HttpServer::Impl::AdmitClient(const std::string& address) {
  if (per_client_[address] >= options_.max_connections_per_client && !EvictIdle(&address)) {
    return false;
  }
  return conns_.size() - closed_.size() < options_.max_connections || EvictIdle(nullptr);
}

bool HttpServer::Impl::EvictIdle(const std::string* address) {
  Connection* oldest = nullptr;
  for (auto& [id, c] : conns_) {
    if (c->fd < 0 || !c->Idle()) continue;
    if (address != nullptr && c->peer.address != *address) continue;
    if (oldest == nullptr || c->last_activity < oldest->last_activity) oldest = c.get();
  }
  if (oldest == nullptr) return false;
  Close(*oldest);
  return true;
}

void HttpServer::Impl::CheckTimeouts(HttpClock::time_point now) {
  for (auto& [id, ptr] : conns_) {
    Connection& c = *ptr;
    if (c.fd < 0) continue;
    if (c.pending_out() > 0 && now - c.last_write_progress > options_.write_timeout) {
      Close(c);  // the client stopped reading
      continue;
    }
    switch (c.state) {
      case Connection::State::kHandshake:
        if (now - c.accepted > options_.handshake_timeout) Close(c);
        break;
      case Connection::State::kReading:
        if (c.request_in_progress) {
          // A slow client (one byte every few seconds) cannot hold a connection.
          const bool in_headers = !c.parser.headers_done();
          if ((in_headers && now - c.request_started > options_.header_timeout) ||
              now - c.request_started > options_.request_timeout) {
            RespondError(c, 408, "the request was not received in time");
          }
        } else if (c.pending_out() == 0 && now - c.last_activity > options_.idle_timeout) {
          Close(c);
        }
        break;
      case Connection::State::kLingering:
        if (now > c.linger_until) Close(c);
        break;
      default:
        break;
    }
  }
}

// --- the public class ---

HttpServer::HttpServer(ApiHandler& handler, HttpServerOptions options)
    : HttpServer(RequestHandler([&handler](const ApiRequest& r) { return handler.Handle(r); }),
                 std::move(options)) {}

HttpServer::HttpServer(RequestHandler handler, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() = default;

void HttpServer::set_authenticate(Authenticate authenticate) {
  impl_->authenticate_ = std::move(authenticate);
}

Status HttpServer::Bind(const std::string& host, int port) { return impl_->Bind(host, port); }
int HttpServer::port() const { return impl_->port_; }
void HttpServer::Serve() { impl_->Serve(); }
bool HttpServer::running() const { return impl_->running_; }
void HttpServer::Stop() { impl_->Stop(); }
void HttpServer::WakeStreams() { impl_->WakeStreams(); }

HttpServer::Stats HttpServer::stats() const {
  return {impl_->connections_.load(), impl_->streams_.load(), impl_->inflight_.load()};
}

Status ParseListenAddress(const std::string& listen, std::string& host, int& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return InvalidArgument("--listen must be HOST:PORT, got \"" + listen + "\"");
  }
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string p = listen.substr(colon + 1);
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--listen port must be a number, got \"" + p + "\"");
  }
  port = std::stoi(p);
  if (port > 65535) return InvalidArgument("--listen port must be at most 65535");
  return Status::Ok();
}

}  // namespace muster::server
