// HttpServer: the API's HTTP/1.1 server, event-driven so that no kind of client can
// starve the others. One reactor thread owns every socket (epoll): it accepts
// (listen backlog SOMAXCONN), reads and parses requests (http_parser.h: bounded
// headers and bodies), writes responses, and enforces timeouts (headers, whole
// request, idle keep-alive, stalled writes) and connection limits (total and per
// client address, evicting the oldest idle connection first). Complete requests
// run on a small worker pool, at most `max_inflight` at a time (429 beyond, as
// kube-apiserver's max-requests-inflight); /healthz, /livez and /readyz are
// answered on the reactor itself, so they answer while every worker is busy.
// Watches and followed logs do not hold a thread: one stream pump thread pulls
// their chunks when woken (WakeStreams, on every store change) or every 100 ms,
// and stops pulling from a client that does not read.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "server/api_handler.h"
#include "server/http_parser.h"

namespace muster::server {

namespace auth {
class TlsContext;  // server/auth/tls.h
}

struct HttpServerOptions {
  HttpLimits limits;
  size_t workers = 16;
  size_t max_connections = 8192;
  // Per client address. Loopback clients all share one address, so this bounds a
  // runaway local client, not local users: idle connections are evicted first.
  size_t max_connections_per_client = 2048;
  size_t max_inflight = 400;  // non-streaming requests queued or running
  std::chrono::milliseconds header_timeout{std::chrono::seconds(32)};
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};  // whole request read
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(90)};     // between requests
  std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};    // no write progress
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
  // A stream whose client has this many bytes unread is not pulled from until it
  // drains (a watch that falls behind the history then ends with 410, as upstream).
  size_t stream_high_water = 4 << 20;
  // TLS on every connection when set.
  std::shared_ptr<auth::TlsContext> tls;
  // GET and HEAD of the paths this accepts are answered without credentials, like the
  // health checks: static files that hold no data (serve's dashboard page, whose
  // scripts then read the API with the user's own credentials).
  std::function<bool(std::string_view path)> public_path;
};

class HttpServer {
 public:
  // Answers one request; called on a worker thread (or the reactor, for health
  // checks), concurrently with other requests.
  using RequestHandler = std::function<ApiResult(const ApiRequest&)>;
  // Who sent a request (auth/authenticator.h); nullopt answers 401. Unset: every
  // request carries an empty UserInfo.
  using Authenticate =
      std::function<std::optional<auth::UserInfo>(const HttpRequest&, const auth::PeerIdentity&)>;

  explicit HttpServer(ApiHandler& handler, HttpServerOptions options = {});
  // Any request function: tests put a fault-injecting wrapper in front of an ApiHandler
  // (the kube adapter's fake API server).
  explicit HttpServer(RequestHandler handler, HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void set_authenticate(Authenticate authenticate);

  // Binds host:port (port 0: any free port, see port()). Does not serve yet.
  Status Bind(const std::string& host, int port);
  int port() const;
  // Serves until Stop(); returns when every thread it started has finished.
  void Serve();
  // Serve() is accepting connections. Stop() before that point does nothing, so a
  // thread that starts Serve() and may stop soon after waits for this first.
  bool running() const;
  // Safe from any thread (the signal-handling thread).
  void Stop();
  // Something a stream may send happened (a store change): pull from streams now.
  // Cheap and non-blocking: callable from the store's commit path.
  void WakeStreams();

  struct Stats {
    size_t connections = 0;
    size_t streams = 0;
    size_t inflight = 0;
  };
  Stats stats() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// "127.0.0.1:8080" -> host and port; kInvalidArgument otherwise.
Status ParseListenAddress(const std::string& listen, std::string& host, int& port);

}  // namespace muster::server
