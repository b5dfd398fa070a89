#include "kube/fake_api_server.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <utility>

#include "control/resource_types.h"
#include "server/api_status.h"
#include "server/graceful_deletion.h"

namespace muster::kube::testing {
namespace {

using nlohmann::json;

// Whether a request (`method`, `target`) is one a rule for `rule_method` ("" = any)
// and `target_part` (any substring) names: FailNext, BeforeNext, CountRequests.
bool Matches(std::string_view rule_method, std::string_view target_part, std::string_view method,
             std::string_view target) {
  return (rule_method.empty() || rule_method == method) &&
         target.find(target_part) != std::string_view::npos;
}
using server::ApiRequest;
using server::ApiResponse;
using server::ApiResult;

[[noreturn]] void Die(const std::string& message) {
  std::cerr << "FakeApiServer: " << message << "\n";
  std::abort();
}

std::string Param(const ApiRequest& r, const std::string& key) {
  auto it = r.query.find(key);
  return it == r.query.end() ? "" : it->second;
}

bool IsWatch(const ApiRequest& r) {
  const std::string w = Param(r, "watch");
  return r.method == "GET" && (w == "1" || w == "true");
}

// Path, then the query sorted by name (std::map order): stable for substring matches.
std::string TargetOf(const ApiRequest& r) {
  std::string target = r.path;
  char sep = '?';
  for (const auto& [k, v] : r.query) {
    target += sep + k + "=" + v;
    sep = '&';
  }
  return target;
}

ApiResponse StatusResponse(int code, const std::string& reason, const std::string& message) {
  return {code, "application/json", server::MakeError(code, reason, message).ToJson().dump()};
}

std::string ReasonFor(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "InternalError";
  }
}

constexpr const char* kWatchContentType = "application/json;stream=watch";

}  // namespace

FakeApiServer::FakeApiServer(FakeApiServerOptions options) {
  static std::atomic<int> instances{0};
  dir_ = (std::filesystem::temp_directory_path() /
          ("muster-fake-api-" + std::to_string(::getpid()) + "-" + std::to_string(instances++)))
             .string();
  std::filesystem::remove_all(dir_);
  server::StoreOptions store_options;
  store_options.event_retention = options.event_retention;
  auto opened = server::ObjectStore::Open(dir_, store_options);
  if (!opened.ok()) Die("cannot open the store: " + opened.status().ToString());
  store_ = std::move(opened).value();
  kubelets_ = std::make_unique<StoreChangeWorker>(
      *store_,
      [](const StoreChangeWorker::ChangePtr& change) {
        return change->resource == "pods" && change->type != control::ChangeType::kDeleted &&
               server::TerminatingPodOf(change->Object());
      },
      [this](StoreChangeWorker::Batch& batch) {
        for (const auto& change : batch) {
          if (auto pod = server::TerminatingPodOf(change->Object()))
            store_->Delete(pod->key, std::nullopt, pod->uid).ok();
        }
      });
  handler_ = std::make_unique<server::ApiHandler>(*store_, "127.0.0.1:0");
  http_ = std::make_unique<server::HttpServer>(
      [this](const ApiRequest& request) { return Handle(request); });
  if (Status bound = http_->Bind("127.0.0.1", 0); !bound.ok()) Die(bound.ToString());
  port_ = http_->port();
  handler_->set_server_address("127.0.0.1:" + std::to_string(port_));
  handler_->set_ready(true);
  serve_thread_ = std::thread([this] { http_->Serve(); });
  // Stop() is a no-op until the server runs: wait, so the destructor always stops it.
  while (!http_->running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  store_->hub().Close();  // ends open watch streams
  http_->Stop();
  serve_thread_.join();
  http_.reset();
  handler_.reset();
  kubelets_.reset();
  store_.reset();
  std::filesystem::remove_all(dir_);
}

std::string FakeApiServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

ClusterConnection FakeApiServer::connection() const {
  ClusterConnection c;
  c.server = url();
  c.namespace_ = "default";
  c.source = "fake API server " + url();
  return c;
}

json FakeApiServer::Create(json object) {
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  const control::ResourceType* type = control::FindByKind(api_version, kind);
  if (type == nullptr) Die("no resource for " + api_version + " " + kind);
  json& md = object["metadata"];
  std::string ns = md.value("namespace", "");
  if (type->namespaced && ns.empty()) ns = "default";
  if (type->namespaced) md["namespace"] = ns;
  auto created = store_->Create({type->StoreKey(), ns, md.value("name", "")}, std::move(object));
  if (!created.ok()) Die("create failed: " + created.status().ToString());
  return std::move(created).value();
}

void FakeApiServer::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  delay_ = delay;
}

void FakeApiServer::FailNext(std::string method, std::string target_part, int code, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_rules_.push_back({std::move(method), std::move(target_part), code, count});
}

void FakeApiServer::BeforeNext(std::string method, std::string target_part,
                               std::function<void()> action) {
  std::lock_guard<std::mutex> lock(mu_);
  actions_.push_back({std::move(method), std::move(target_part), std::move(action)});
}

void FakeApiServer::ClearFailures() {
  std::lock_guard<std::mutex> lock(mu_);
  fail_rules_.clear();
}

void FakeApiServer::EndWatchesAfter(int events) {
  std::lock_guard<std::mutex> lock(mu_);
  end_watches_after_ = events;
}

void FakeApiServer::InjectNextWatch(std::string target_part, std::string lines) {
  std::lock_guard<std::mutex> lock(mu_);
  injections_.push_back({std::move(target_part), std::move(lines)});
}

void FakeApiServer::GoneOnNextWatch(std::string target_part) {
  json status = server::Gone("too old resource version: 1 (2)").ToJson();
  InjectNextWatch(std::move(target_part),
                  json{{"type", "ERROR"}, {"object", status}}.dump() + "\n");
}

void FakeApiServer::BookmarkOnNextWatch(std::string target_part, const std::string& api_version,
                                        const std::string& kind, int64_t resource_version) {
  if (resource_version == 0) resource_version = store_->resource_version();
  json bookmark = {{"apiVersion", api_version},
                   {"kind", kind},
                   {"metadata", {{"resourceVersion", std::to_string(resource_version)}}}};
  InjectNextWatch(std::move(target_part),
                  json{{"type", "BOOKMARK"}, {"object", bookmark}}.dump() + "\n");
}

void FakeApiServer::SetAbsent(std::string path_prefix, bool absent) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(absent_prefixes_, path_prefix);
  if (absent) absent_prefixes_.push_back(std::move(path_prefix));
}

std::vector<std::string> FakeApiServer::RequestLog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

int FakeApiServer::CountRequests(std::string_view method, std::string_view target_part) const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& line : log_) {
    const size_t space = line.find(' ');
    const std::string_view m = std::string_view(line).substr(0, space);
    const std::string_view target = std::string_view(line).substr(space + 1);
    if (Matches(method, target_part, m, target)) ++n;
  }
  return n;
}

void FakeApiServer::Wait(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  stop_cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

ApiResult FakeApiServer::Handle(const ApiRequest& request) {
  const std::string target = TargetOf(request);
  std::chrono::milliseconds delay{0};
  int cut_after = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(request.method + " " + target);
    delay = delay_;
    cut_after = end_watches_after_;
  }
  if (delay.count() > 0) Wait(delay);
  std::function<void()> action;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = actions_.begin(); it != actions_.end(); ++it) {
      if (!Matches(it->method, it->target_part, request.method, target)) continue;
      action = std::move(it->run);
      actions_.erase(it);
      break;
    }
  }
  if (action) action();
  if (auto fault = Fault(request, target)) return std::move(*fault);
  const bool watch = IsWatch(request);
  if (!watch && request.method == "GET" &&
      (!Param(request, "limit").empty() || !Param(request, "continue").empty())) {
    return Page(request);
  }
  ApiResult result = handler_->Handle(request);
  if (auto* stream = std::get_if<std::unique_ptr<server::WatchStream>>(&result);
      stream != nullptr && cut_after > 0) {
    return CutWatch(std::move(*stream), cut_after);
  }
  return result;
}

std::optional<ApiResponse> FakeApiServer::Fault(const ApiRequest& request,
                                                const std::string& target) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& prefix : absent_prefixes_) {
    if (request.path.rfind(prefix, 0) == 0) {
      return StatusResponse(404, "NotFound", "the server could not find the requested resource");
    }
  }
  if (IsWatch(request)) {
    for (auto it = injections_.begin(); it != injections_.end(); ++it) {
      if (target.find(it->target_part) == std::string::npos) continue;
      ApiResponse response{200, kWatchContentType, std::move(it->lines)};
      injections_.erase(it);
      return response;
    }
  }
  for (auto it = fail_rules_.begin(); it != fail_rules_.end(); ++it) {
    if (!Matches(it->method, it->target_part, request.method, target)) continue;
    const int code = it->code;
    if (--it->remaining <= 0) fail_rules_.erase(it);
    return StatusResponse(code, ReasonFor(code),
                          "injected failure " + std::to_string(code) + " for " + target);
  }
  return std::nullopt;
}

ApiResult FakeApiServer::Page(const ApiRequest& request) {
  const std::string token = Param(request, "continue");
  const long limit = std::strtol(Param(request, "limit").c_str(), nullptr, 10);
  json list;
  size_t offset = 0;
  int id = 0;
  if (!token.empty()) {
    // "<snapshot id>:<offset>"
    const size_t colon = token.find(':');
    id = std::atoi(token.substr(0, colon).c_str());
    offset = colon == std::string::npos ? 0 : std::strtoul(token.c_str() + colon + 1, nullptr, 10);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = snapshots_.find(id);
    if (it == snapshots_.end()) {
      return StatusResponse(410, "Expired",
                            "The provided continue parameter is too old to display a consistent "
                            "list result. You can start a new list without the continue "
                            "parameter.");
    }
    list = it->second;
  } else {
    ApiRequest full = request;
    full.query.erase("limit");
    ApiResult result = handler_->Handle(full);
    auto* response = std::get_if<ApiResponse>(&result);
    if (response == nullptr || response->code != 200) return result;
    list = json::parse(response->body, nullptr, false);
    if (!list.is_object() || !list.contains("items")) return result;
  }
  const json& items = list["items"];
  const size_t count = limit > 0 ? static_cast<size_t>(limit) : items.size();
  json page = list;
  page["items"] = json::array();
  for (size_t i = offset; i < items.size() && i < offset + count; ++i) {
    page["items"].push_back(items[i]);
  }
  const size_t next = offset + count;
  std::lock_guard<std::mutex> lock(mu_);
  if (next < items.size()) {
    if (id == 0) {
      id = next_snapshot_++;
      snapshots_[id] = list;
    }
    page["metadata"]["continue"] = std::to_string(id) + ":" + std::to_string(next);
    page["metadata"]["remainingItemCount"] = items.size() - next;
  } else if (id != 0) {
    snapshots_.erase(id);
  }
  return ApiResponse{200, "application/json", page.dump()};
}

ApiResult FakeApiServer::CutWatch(std::unique_ptr<server::WatchStream> stream, int events) {
  std::string out;
  int sent = 0;
  while (sent < events && !stopping_) {
    auto chunk = stream->Next(std::chrono::milliseconds(100));
    if (!chunk) break;  // the watch ended on its own (timeout, ERROR event)
    size_t pos = 0;
    while (sent < events && pos < chunk->size()) {
      size_t nl = chunk->find('\n', pos);
      if (nl == std::string::npos) nl = chunk->size() - 1;
      out += chunk->substr(pos, nl + 1 - pos);
      pos = nl + 1;
      ++sent;
    }
  }
  return ApiResponse{200, kWatchContentType, std::move(out)};
}

}  // namespace muster::kube::testing
