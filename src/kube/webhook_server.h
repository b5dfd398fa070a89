// WebhookServer: the HTTPS listener the API server calls for muster's mutating
// admission webhook (admission_webhook.h decides). Like controller-runtime's webhook
// server it serves TLS with tls.crt and tls.key from a certificate directory (the
// mounted Secret):
//   POST /mutate-jobs  AdmissionReview in, AdmissionReview out
//   GET  /healthz      "ok" (liveness and readiness probes)
// Requests run on the listener's own thread pool; ReviewJobCreate is pure, so they
// share nothing.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "kube/admission_webhook.h"

namespace httplib {
class SSLServer;
}

namespace muster::kube {

struct WebhookServerOptions {
  std::string host = "0.0.0.0";
  int port = 9443;  // 0: any free port (tests), see WebhookServer::port()
  std::string cert_dir = "/etc/muster/certs";  // holds tls.crt and tls.key (PEM)
  WebhookOptions webhook;
};

class WebhookServer {
 public:
  explicit WebhookServer(WebhookServerOptions options);
  ~WebhookServer();  // Stop()s
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Loads the certificate and key, binds and serves on a thread of its own; returns
  // once requests are accepted. kInvalidArgument when the files are missing or not a
  // matching PEM certificate and key, kUnavailable when the address cannot be bound,
  // kFailedPrecondition when called a second time. The certificate is read once: a
  // rotated Secret takes effect when muster restarts.
  Status Start();
  // The bound port (after Start).
  int port() const { return port_; }
  // Stops accepting, waits for requests in flight; idempotent, from any thread.
  void Stop();

 private:
  WebhookServerOptions options_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::mutex stop_mu_;  // two Stop()s must not both join
  std::thread serve_thread_;
  int port_ = 0;
};

}  // namespace muster::kube
