// DashboardServer: `muster kube --dashboard-port P`, the dashboard's own listener in
// a real cluster (plain HTTP; put it behind `kubectl port-forward` or an
// authenticating ingress). Like `kubectl proxy` with the *user's* credentials:
//
//   GET /ui, /ui/...                the page (ui/dashboard.h)
//   GET /api/..., /apis/...         forwarded to the cluster's API server with the
//                                   bearer token the browser sent (Authorization
//                                   header), never with muster's own credentials; watches
//                                   are streamed through
//   GET /apis/muster.dev/v1alpha1/  the scheduler's view (ui/view_api.h) from this
//       queueviews|workloadviews|   process, after a SelfSubjectAccessReview made with the
//       nodeviews|clusterviews      user's token says the user may get/list that resource
//                                   (RBAC applies as to any resource; denied: 403);
//                                   a user who may not list WorkloadViews everywhere
//                                   sees the namespaces where they may, and other
//                                   namespaces' workload names withheld
//                                   (ui/view_reader.h)
//   GET /healthz                    "ok"
//
// Everything else answers 405: the dashboard is read-only. A request without a token
// goes upstream without credentials (the API server decides what anonymous may read).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "kube/cluster_connection.h"
#include "ui/view_publisher.h"

namespace httplib {
class Server;
}

namespace muster::kube {

struct DashboardServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (tests), see DashboardServer::port()
  // Where the API server is and how to trust it. Its credentials (token, client
  // certificate) are dropped: requests carry the user's.
  ClusterConnection upstream;
  const ui::ViewPublisher* views = nullptr;  // the scheduler's view (may be null)
  double timeout_s = 30;                     // per forwarded request (not per watch)
};

class DashboardServer {
 public:
  explicit DashboardServer(DashboardServerOptions options);
  ~DashboardServer();  // Stop()s
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  // Binds and serves on a thread of its own; returns once requests are accepted.
  // kUnavailable when the address cannot be bound, kFailedPrecondition when started twice.
  Status Start();
  int port() const { return port_; }
  // Stops accepting, ends forwarded watches, waits for requests in flight; idempotent.
  void Stop();

 private:
  struct Impl;
  DashboardServerOptions options_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<httplib::Server> server_;
  std::mutex stop_mu_;
  std::thread serve_thread_;
  int port_ = 0;
};

// The connection a forwarded request uses: `upstream`'s server and trust, the user's
// bearer token ("" = none), and no client certificate or token file of muster's.
ClusterConnection UserConnection(const ClusterConnection& upstream, const std::string& token);

}  // namespace muster::kube
