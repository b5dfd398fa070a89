// HttpServer: binds ApiHandler to cpp-httplib. Plain HTTP on a local address (the
// embedded default serves one machine); each request runs on a pool thread, a
// watch holds its thread while it streams.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "server/api_handler.h"

namespace httplib {
class Server;
}

namespace muster::server {

class HttpServer {
 public:
  // Answers one request; called on a pool thread, concurrently with other requests.
  using RequestHandler = std::function<ApiResult(const ApiRequest&)>;

  explicit HttpServer(ApiHandler& handler);
  // Any request function: tests put a fault-injecting wrapper in front of an ApiHandler
  // (the kube adapter's fake API server).
  explicit HttpServer(RequestHandler handler);
  ~HttpServer();

  // Binds host:port (port 0: any free port, see port()). Does not serve yet.
  Status Bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until Stop(); returns when every request thread has finished.
  void Serve();
  // Serve() is accepting connections. Stop() before that point does nothing, so a
  // thread that starts Serve() and may stop soon after waits for this first.
  bool running() const;
  // Safe from any thread (the signal-handling thread).
  void Stop();

 private:
  RequestHandler handler_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
};

// "127.0.0.1:8080" -> host and port; kInvalidArgument otherwise.
Status ParseListenAddress(const std::string& listen, std::string& host, int& port);

}  // namespace muster::server
