#include "kube/webhook_server.h"

// Debian ships cpp-httplib as a compiled library (libcpp-httplib.so) built with these
// options; the header must see the same ones so that its declarations (SSLServer among
// them) match it.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <utility>

#include "kube/http_listener.h"

namespace muster::kube {
namespace {

// An AdmissionReview holds the object (etcd caps it at 1.5 MiB) and, on updates, the
// old one too; well above that, but bounded.
constexpr size_t kMaxReviewBytes = 16 << 20;

Status CheckReadable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("webhook certificate: cannot read " + path);
  return Status::Ok();
}

}  // namespace

WebhookServer::WebhookServer(WebhookServerOptions options) : options_(std::move(options)) {}

WebhookServer::~WebhookServer() { Stop(); }

Status WebhookServer::Start() {
  if (server_ != nullptr) return FailedPrecondition("the webhook server is already started");
  const std::string cert = options_.cert_dir + "/tls.crt";
  const std::string key = options_.cert_dir + "/tls.key";
  if (Status s = CheckReadable(cert); !s.ok()) return s;
  if (Status s = CheckReadable(key); !s.ok()) return s;
  auto server = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
  if (!server->is_valid()) {
    return InvalidArgument("webhook certificate: " + cert + " and " + key +
                           " are not a PEM certificate and its private key");
  }
  // The API server speaks TLS 1.2 or later; nothing older is worth accepting.
  SSL_CTX_set_min_proto_version(server->ssl_context(), TLS1_2_VERSION);
  server->set_payload_max_length(kMaxReviewBytes);
  // The API server keeps its connection to a webhook alive: without TCP_NODELAY each
  // review's answer waits ~40 ms for a delayed ACK (Nagle). Linux copies the option
  // from the listening socket to accepted ones.
  server->set_tcp_nodelay(true);

  const WebhookOptions webhook = options_.webhook;
  server->Post("/mutate-jobs", [webhook](const httplib::Request& req, httplib::Response& res) {
    const nlohmann::json review = ReviewJobCreateBody(req.body, webhook);
    const nlohmann::json& response = review.at("response");
    if (!response.value("allowed", false) && response.contains("status")) {
      // A denial means a malformed review: the API server or a webhook rule is off.
      std::cerr << "muster kube: admission webhook denied a request: "
                << response.at("status").value("message", "") << "\n";
    }
    res.set_content(review.dump(), "application/json");
  });
  server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });

  // The loop thread keeps a reference to *server: keep it, then start it.
  server_ = std::move(server);
  Result<int> bound = ListenOnThread(*server_, options_.host, options_.port, serve_thread_);
  if (!bound.ok()) {
    server_.reset();
    return bound.status();
  }
  port_ = *bound;
  return Status::Ok();
}

void WebhookServer::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (server_ == nullptr) return;
  server_->stop();
  if (serve_thread_.joinable()) serve_thread_.join();
}

}  // namespace muster::kube
