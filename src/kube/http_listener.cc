#include "kube/http_listener.h"

// Debian ships cpp-httplib as a compiled library (libcpp-httplib.so) built with these
// options; the header must see the same ones so that its declarations match it.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <memory>

namespace muster::kube {

Result<int> ListenOnThread(httplib::Server& server, const std::string& host, int port,
                           std::thread& thread) {
  int bound = port;
  if (port == 0) {
    bound = server.bind_to_any_port(host);
    if (bound <= 0) return Status(StatusCode::kUnavailable, "cannot listen on " + host);
  } else if (!server.bind_to_port(host, port)) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + host + ":" + std::to_string(port));
  }
  auto returned = std::make_shared<std::atomic<bool>>(false);
  thread = std::thread([&server, returned] {
    server.listen_after_bind();
    *returned = true;
  });
  while (!server.is_running() && !*returned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

}  // namespace muster::kube
