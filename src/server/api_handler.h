// ApiHandler: the Kubernetes-style REST semantics of `muster serve`, independent of
// the HTTP library: discovery, get/list/watch/create/update/patch/delete, the status
// subresource, selectors, Table output and metav1.Status errors. http_server.cc
// only moves bytes between sockets and this class, so the semantics are testable
// without a network.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "server/api_status.h"
#include "server/auth/identity.h"
#include "server/exec_session.h"
#include "server/log_stream.h"
#include "server/object_store.h"
#include "server/watch_stream.h"

namespace muster::server {

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string path;    // decoded path without the query
  std::map<std::string, std::string> query;
  std::string accept;
  std::string content_type;
  std::string body;
  // Who sent it (the HTTP layer's authenticator); empty when nothing authenticated
  // it (in-process callers: manifest seeding, the local node).
  auth::UserInfo user;
  // In-process creates on someone's behalf (a CronJob's Jobs): the owner recorded
  // (auth/owner.h) instead of the request's user; empty: the user's.
  std::string owner = {};
  // The query as sent (undecoded): exec's `command` repeats, which `query` cannot hold.
  std::string query_string = {};
  // An HTTP/1.1 Upgrade's headers (exec's WebSocket); empty without one.
  struct Upgrade {
    std::string protocol;   // Upgrade, lower-cased ("websocket", "spdy/3.1")
    std::string key;        // Sec-WebSocket-Key
    std::string version;    // Sec-WebSocket-Version
    std::string protocols;  // Sec-WebSocket-Protocol, as offered
  };
  Upgrade upgrade = {};
};

struct ApiResponse {
  int code = 200;
  std::string content_type = "application/json";
  std::string body;
  // Sent as `Warning: 299 - "<text>"` headers, which kubectl prints: fields muster
  // stores but does not act on.
  std::vector<std::string> warnings = {};
};

// A JSON answer (ToWire: invalid UTF-8 in stored text is replaced, never thrown on).
ApiResponse JsonResponse(int code, const nlohmann::json& body);
// The metav1.Status answer for `e`.
ApiResponse ErrorResponse(const ApiError& e);
// Query parameter `key` of `r`, "" when absent.
std::string QueryParam(const ApiRequest& r, const std::string& key);
// `text`, the value of query parameter `key`, as an integer; InvalidArgument naming
// the parameter when it is not one.
Result<int64_t> ParseIntParam(const std::string& key, const std::string& text);
// Query parameter `key` of `r` as an integer (ParseIntParam); nullopt when absent.
Result<std::optional<int64_t>> IntQueryParam(const ApiRequest& r, const std::string& key);
// A boolean query parameter as kubectl and client-go send it ("true", "1").
bool IsTrueParam(const std::string& value);

// A watch (or a followed pod log) answers with a stream instead of a body; an exec
// with a session on the upgraded connection.
using ApiResult = std::variant<ApiResponse, std::unique_ptr<WatchStream>,
                               std::unique_ptr<LogStream>, std::unique_ptr<ExecSession>>;

struct HttpRequest;  // server/http_parser.h
// The API's view of a parsed HTTP request (HEAD is answered as GET), as `user`.
// Defined with the server's connections (http_connection.cc); the fuzz harness
// feeds requests the same way.
ApiRequest ToApiRequest(HttpRequest&& request, auth::UserInfo user);

class MetricsRegistry;  // server/metrics.h
class PodExec;          // server/pod_exec.h
class PodMetrics;       // server/pod_metrics.h
}  // namespace muster::server
namespace muster::server::auth {
class RbacAuthorizer;  // server/auth/rbac_authorizer.h
}  // namespace muster::server::auth
namespace muster::ui {
class ViewPublisher;  // ui/view_publisher.h
}  // namespace muster::ui
namespace muster::server {

// Tests only: generateName's random suffixes come from `source` (nullptr: random).
using NameSuffixSource = std::string (*)();
void SetNameSuffixSourceForTesting(NameSuffixSource source);

class ApiHandler {
 public:
  // `server_address` ("127.0.0.1:8080") is reported in /api discovery.
  ApiHandler(ObjectStore& store, std::string server_address);

  // Never throws; malformed input gives a 4xx Status.
  ApiResult Handle(const ApiRequest& request);

  // The address /api reports; set before serving (the port may be chosen at bind).
  void set_server_address(std::string address) { server_address_ = std::move(address); }

  // Readiness for /readyz: false until the server finished loading its manifests
  // (and whenever the store cannot write: store_routes.h).
  void set_ready(bool ready) { ready_ = ready; }

  // Where pod logs are read from (pod_paths.h): `muster serve --data`. Set before serving.
  void set_data_dir(std::string dir) { data_dir_ = std::move(dir); }

  // GET /metrics renders `metrics` (404 while unset), and every request is counted
  // into its muster_api_requests_total when declared (DeclareApiMetrics). Set before
  // serving; the registry must outlive the handler's requests.
  void set_metrics(MetricsRegistry* metrics) { metrics_ = metrics; }

  // GET of the muster.dev/v1alpha1 view resources reads the view `views` holds
  // (server/view_routes.h; 503 while none is published, 404 while unset).
  void set_views(const ui::ViewPublisher* views) { views_ = views; }

  // Every request with a user (not health checks, not in-process callers) must be
  // allowed by `authorizer` (403 otherwise); unset, everything is allowed (serve
  // without authentication). Set before serving; it must outlive the handler.
  void set_authorizer(const auth::RbacAuthorizer* authorizer) { authorizer_ = authorizer; }

  // Where `kubectl exec` runs its commands (pod_exec.h): the local executor's pods.
  // Unset: exec is refused (this server runs no pods). Set before serving.
  void set_pod_exec(PodExec* exec) { pod_exec_ = exec; }

  // What `kubectl top` reads (metrics.k8s.io, pod_metrics.h). Unset: no pod has
  // metrics (lists are empty). Set before serving.
  void set_pod_metrics(PodMetrics* metrics) { pod_metrics_ = metrics; }

 private:
  ApiResult Dispatch(const ApiRequest& request);

  ObjectStore& store_;
  std::string server_address_;
  std::string data_dir_;
  std::atomic<bool> ready_{false};
  MetricsRegistry* metrics_ = nullptr;
  const ui::ViewPublisher* views_ = nullptr;
  const auth::RbacAuthorizer* authorizer_ = nullptr;
  PodExec* pod_exec_ = nullptr;
  PodMetrics* pod_metrics_ = nullptr;
};

}  // namespace muster::server
