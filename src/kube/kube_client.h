// KubeClient: HTTP(S) to the Kubernetes API server with libcurl. Each call uses its own
// easy handle, so the client is safe to share between threads (reflectors, the
// controller, leader election). Every request waits on a client-side token bucket
// (ClientOptions::qps/burst), like client-go's default limiter but set high enough not
// to be muster's bottleneck.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "kube/cluster_connection.h"

namespace muster::kube {

struct ClientOptions {
  double qps = 1000;      // sustained requests per second; <= 0: unlimited
  int burst = 2000;       // bucket size
  double timeout_s = 30;  // per request (not per watch: a watch lasts until it ends)
  std::string user_agent = "muster";
};

struct HttpResponse {
  int code = 0;       // HTTP status; 0 when no response arrived (transport error)
  std::string body;   // response body (a metav1.Status on errors)
  std::string error;  // transport error text when code == 0
  bool ok() const { return code >= 200 && code < 300; }
};

class KubeClient {
 public:
  KubeClient(ClusterConnection connection, ClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // One request. `path` starts with "/" and may carry a query ("/api/v1/pods?limit=500").
  // `content_type` for bodies: "application/json", "application/merge-patch+json",
  // "application/json-patch+json", "application/strategic-merge-patch+json".
  HttpResponse Request(std::string_view method, std::string_view path, std::string_view body = {},
                       std::string_view content_type = "application/json");
  HttpResponse Get(std::string_view path) { return Request("GET", path); }

  // A streamed GET (watch): `on_line` gets each newline-terminated line (one watch event
  // JSON) as it arrives; return false from it to end the stream. Also ends when the
  // server closes the stream, on a transport error, or when `*stop` becomes true (checked
  // at least every 200 ms). The returned code is the HTTP status (200 for a stream that
  // ended normally), 0 with `error` set on transport errors (0 and no error when `*stop`
  // was already set: nothing was sent).
  HttpResponse Stream(std::string_view path, const std::function<bool(std::string_view)>& on_line,
                      const std::atomic<bool>* stop = nullptr);

  const ClusterConnection& connection() const { return connection_; }
  // Requests sent so far (tests and metrics).
  uint64_t requests() const { return requests_.load(); }

 private:
  struct Impl;
  ClusterConnection connection_;
  ClientOptions options_;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> requests_{0};
};

// "/apis/<group>/<version>" or "/api/v1" for the core group.
std::string ApiPrefix(std::string_view group, std::string_view version);

}  // namespace muster::kube
