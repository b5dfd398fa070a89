#include "kube/dashboard_server.h"

// Debian ships cpp-httplib as a compiled library (libcpp-httplib.so) built with these
// options; the header must see the same ones so that its declarations match it.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "core/percent_encode.h"
#include "kube/http_listener.h"
#include "kube/kube_client.h"
#include "ui/dashboard.h"
#include "ui/view_api.h"
#include "ui/view_json.h"

namespace muster::kube {
namespace {

using nlohmann::json;

// Watches and idle keep-alive connections each hold a thread.
constexpr size_t kThreads = 64;
// A user's access decisions are reused this long (a SelfSubjectAccessReview per view
// read would double the API traffic of a busy page).
constexpr auto kAccessTtl = std::chrono::seconds(10);
constexpr size_t kMaxAccessEntries = 4096;

json StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

void SendStatus(httplib::Response& res, int code, const std::string& reason,
                const std::string& message) {
  res.status = code;
  res.set_content(StatusBody(code, reason, message).dump(), "application/json");
}

// The bearer token of the request, "" when none.
std::string BearerToken(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0) {
    return auth.substr(prefix.size());
  }
  return "";
}

// The request's path and query as the upstream API server should see them.
std::string Target(const httplib::Request& req) {
  std::string target = req.path;
  char sep = '?';
  for (const auto& [k, v] : req.params) {
    target += sep + PercentEncode(k) + "=" + PercentEncode(v);
    sep = '&';
  }
  return target;
}

bool IsWatch(const httplib::Request& req) {
  auto it = req.params.find("watch");
  return it != req.params.end() && (it->second == "1" || it->second == "true");
}

}  // namespace

ClusterConnection UserConnection(const ClusterConnection& upstream, const std::string& token) {
  ClusterConnection c;
  c.server = upstream.server;
  c.ca_pem = upstream.ca_pem;
  c.ca_file = upstream.ca_file;
  c.insecure_skip_tls_verify = upstream.insecure_skip_tls_verify;
  c.token = token;
  c.namespace_ = upstream.namespace_;
  c.source = "dashboard user of " + upstream.source;
  return c;
}

struct DashboardServer::Impl {
  DashboardServerOptions options;
  std::atomic<bool> stopping{false};
  std::mutex access_mu;
  // (token, verb, resource, subresource, namespace, name) -> (allowed, when decided)
  std::map<std::string, std::pair<bool, std::chrono::steady_clock::time_point>> access;

  ClientOptions ClientOpts() const {
    ClientOptions o;
    o.qps = 0;  // the user's requests: the API server's own limits apply
    o.timeout_s = options.timeout_s;
    o.user_agent = "muster-dashboard";
    return o;
  }

  // Asks the API server, as the user, whether they may `verb` the view resource.
  // Fails closed: no answer is a denial, with the reason in `why`.
  bool MayRead(const std::string& token, const ui::ViewRequest& r, std::string& why) {
    const std::string verb = r.name.empty() ? "list" : "get";
    const std::string key = token + "\n" + verb + "\n" + r.plural + "\n" + r.subresource + "\n" +
                            r.namespace_ + "\n" + r.name;
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(access_mu);
      auto it = access.find(key);
      if (it != access.end() && now - it->second.second < kAccessTtl) return it->second.first;
    }
    json attrs = {{"group", ui::kViewGroup},
                  {"version", ui::kViewVersion},
                  {"resource", r.plural},
                  {"verb", verb}};
    if (!r.subresource.empty()) attrs["subresource"] = r.subresource;
    if (!r.namespace_.empty()) attrs["namespace"] = r.namespace_;
    if (!r.name.empty()) attrs["name"] = r.name;
    json review = {{"apiVersion", "authorization.k8s.io/v1"},
                   {"kind", "SelfSubjectAccessReview"},
                   {"spec", {{"resourceAttributes", attrs}}}};
    KubeClient client(UserConnection(options.upstream, token), ClientOpts());
    HttpResponse resp = client.Request(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review.dump());
    bool allowed = false;
    if (resp.ok()) {
      json body = json::parse(resp.body, nullptr, false);
      allowed = body.is_object() && body.contains("status") && body["status"].is_object() &&
                body["status"].value("allowed", false);
      if (!allowed) {
        why = body.is_object() && body.contains("status") && body["status"].is_object()
                  ? body["status"].value("reason", "")
                  : "";
      }
    } else {
      why = resp.code == 0 ? resp.error
                           : "the API server answered " + std::to_string(resp.code) +
                                 " to a SelfSubjectAccessReview";
      return false;  // not cached: a transient failure
    }
    std::lock_guard<std::mutex> lock(access_mu);
    if (access.size() >= kMaxAccessEntries) access.clear();
    access[key] = {allowed, now};
    return allowed;
  }

  void ServeView(const httplib::Request& req, httplib::Response& res, ui::ViewRequest view) {
    const std::string token = BearerToken(req);
    ui::ViewRequest everywhere_request;
    everywhere_request.plural = "workloadviews";
    std::string why;
    const bool everywhere = MayRead(token, everywhere_request, why);
    // A list of WorkloadViews across namespaces is cut to what the user may read
    // instead of refused (ui/view_reader.h).
    const bool filtered_list = view.plural == "workloadviews" && view.namespace_.empty() &&
                               view.name.empty() && view.subresource.empty();
    why.clear();
    if (!filtered_list && !MayRead(token, view, why)) {
      const std::string verb = view.name.empty() ? "list" : "get";
      SendStatus(res, 403, "Forbidden",
                 view.plural + "." + ui::kViewGroup + " is forbidden: the user cannot " + verb +
                     " it" + (why.empty() ? "" : " (" + why + ")"));
      return;
    }
    ui::ViewReader reader;
    if (!everywhere) {
      reader = ui::ViewReader([this, token](const std::string& ns) {
        ui::ViewRequest in_namespace;
        in_namespace.plural = "workloadviews";
        in_namespace.namespace_ = ns;
        std::string ignored;
        return MayRead(token, in_namespace, ignored);
      });
    }
    for (const auto& [k, v] : req.params) view.query.emplace(k, v);
    auto current = options.views != nullptr ? options.views->Current() : nullptr;
    ui::ViewResponse r = ui::HandleViewRead(current.get(), view, reader);
    res.status = r.code;
    res.set_content(r.body.dump(), "application/json");
  }

  void Forward(const httplib::Request& req, httplib::Response& res) {
    const std::string target = Target(req);
    const std::string token = BearerToken(req);
    if (!IsWatch(req)) {
      KubeClient client(UserConnection(options.upstream, token), ClientOpts());
      HttpResponse resp = client.Request("GET", target);
      if (resp.code == 0) {
        SendStatus(res, 502, "ServiceUnavailable", "the API server did not answer: " + resp.error);
        return;
      }
      res.status = resp.code;
      res.set_content(resp.body, "application/json");
      return;
    }
    // A watch: events are passed on as they arrive. The answer is already 200 when the
    // API server refuses, so a refusal is sent as an ERROR event with its Status, as
    // the API server itself ends a watch that goes wrong.
    ClusterConnection conn = UserConnection(options.upstream, token);
    ClientOptions copts = ClientOpts();
    const std::atomic<bool>* stop = &stopping;
    res.status = 200;
    res.set_header("Cache-Control", "no-cache, private");
    res.set_chunked_content_provider(
        "application/json;stream=watch",
        [conn, copts, target, stop](size_t, httplib::DataSink& sink) {
          KubeClient client(conn, copts);
          HttpResponse resp = client.Stream(
              target,
              [&sink](std::string_view line) {
                std::string chunk(line);
                chunk += '\n';
                return sink.write(chunk.data(), chunk.size());
              },
              stop);
          if (!resp.ok() && !stop->load()) {
            json status = json::parse(resp.body, nullptr, false);
            if (!status.is_object()) {
              status = StatusBody(resp.code == 0 ? 502 : resp.code, "ServiceUnavailable",
                                  resp.code == 0 ? resp.error : resp.body);
            }
            std::string event = json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
            sink.write(event.data(), event.size());
          }
          sink.done();
          return true;
        });
  }
};

DashboardServer::DashboardServer(DashboardServerOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  impl_->options = options_;
}

DashboardServer::~DashboardServer() { Stop(); }

Status DashboardServer::Start() {
  if (server_ != nullptr) return FailedPrecondition("the dashboard server is already started");
  auto server = std::make_unique<httplib::Server>();
  server->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  server->set_payload_max_length(1 << 20);
  server->set_tcp_nodelay(true);
  Impl* impl = impl_.get();
  auto handle = [impl](const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/healthz") {
      res.set_content("ok", "text/plain");
      return;
    }
    if (auto page = ui::ServeDashboard(req.method, req.path)) {
      res.status = page->code;
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("X-Frame-Options", "DENY");
      res.set_content(std::string(page->body), page->content_type.c_str());
      return;
    }
    if (req.method != "GET") {
      SendStatus(res, 405, "MethodNotAllowed",
                 "the dashboard's listener is read only: it forwards GET requests");
      return;
    }
    if (auto view = ui::ParseViewPath(req.path)) {
      impl->ServeView(req, res, std::move(*view));
      return;
    }
    if (req.path == "/version" || req.path.starts_with("/api/") || req.path == "/api" ||
        req.path.starts_with("/apis/") || req.path == "/apis") {
      impl->Forward(req, res);
      return;
    }
    SendStatus(res, 404, "NotFound", "the dashboard serves /ui/ and forwards /api and /apis");
  };
  const std::string any = R"(/.*)";
  server->Get(any, handle);
  server->Post(any, handle);
  server->Put(any, handle);
  server->Patch(any, handle);
  server->Delete(any, handle);

  server_ = std::move(server);
  Result<int> bound = ListenOnThread(*server_, options_.host, options_.port, serve_thread_);
  if (!bound.ok()) {
    server_.reset();
    return bound.status();
  }
  port_ = *bound;
  return Status::Ok();
}

void DashboardServer::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (server_ == nullptr) return;
  impl_->stopping = true;  // forwarded watches end within their poll interval
  server_->stop();
  if (serve_thread_.joinable()) serve_thread_.join();
}

}  // namespace muster::kube
