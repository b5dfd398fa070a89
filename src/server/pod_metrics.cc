#include "server/pod_metrics.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "control/json_fields.h"
#include "server/label_selector.h"
#include "server/patch_request.h"
#include "server/path_segments.h"
#include "server/pod_log.h"
#include "server/pod_paths.h"
#include "server/process_supervisor.h"

namespace muster::server {
namespace {

using nlohmann::json;
using MetricsClock = std::chrono::steady_clock;

// A history whose newest sample is older than this is stale: the next rate starts over.
constexpr auto kStaleHistory = std::chrono::seconds(60);
// Histories of processes not sampled for this long are forgotten.
constexpr auto kForgetHistory = std::chrono::minutes(5);

std::optional<uint64_t> ReadCgroupNumber(const std::string& path) {
  std::ifstream in(path);
  uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

// The value of `key` in a "key value" file (cpu.stat, memory.stat).
std::optional<uint64_t> ReadCgroupStat(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::string MetricsCpu(int64_t nanocores) { return std::to_string(nanocores) + "n"; }
std::string MetricsMemory(int64_t bytes) { return std::to_string(bytes / 1024) + "Ki"; }
// A Go duration as metrics-server writes its window ("15.013s").
std::string MetricsWindow(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fs", seconds);
  std::string s = buf;
  while (s.size() > 2 && s[s.size() - 2] == '0') s.erase(s.size() - 2, 1);
  if (s.size() > 2 && s[s.size() - 2] == '.') s.erase(s.size() - 2, 1);
  return s;
}

json MetricsMeta(const json& object) {
  json meta = {{"name", object["metadata"].value("name", "")}, {"creationTimestamp", NowRfc3339()}};
  const json& m = object["metadata"];
  if (m.contains("namespace")) meta["namespace"] = m["namespace"];
  if (m.contains("labels") && m["labels"].is_object()) meta["labels"] = m["labels"];
  return meta;
}

json MetricsList(const char* kind, json items) {
  return {{"kind", kind},
          {"apiVersion", std::string(kMetricsGroup) + "/" + kMetricsVersion},
          {"metadata", json::object()},
          {"items", std::move(items)}};
}

json PodMetricsItem(const json& pod, const PodMetrics::Usage& u) {
  const std::vector<std::string> containers = PodContainerNames(pod);
  return {{"kind", "PodMetrics"},
          {"apiVersion", std::string(kMetricsGroup) + "/" + kMetricsVersion},
          {"metadata", MetricsMeta(pod)},
          {"timestamp", NowRfc3339()},
          {"window", MetricsWindow(u.window_seconds)},
          // The first container is the one that runs (docs/containers.md).
          {"containers", json::array({{{"name", containers.empty() ? "" : containers.front()},
                                       {"usage",
                                        {{"cpu", MetricsCpu(u.nanocores)},
                                         {"memory", MetricsMemory(u.memory_bytes)}}}}})}};
}

}  // namespace

CgroupUsage ReadCgroupUsage(const std::vector<std::string>& dirs) {
  CgroupUsage u;
  for (const std::string& dir : dirs) {
    if (!u.cpu_ns) {
      if (auto ns = ReadCgroupNumber(dir + "/cpuacct.usage")) {
        u.cpu_ns = *ns;  // v1
      } else if (auto usec = ReadCgroupStat(dir + "/cpu.stat", "usage_usec")) {
        u.cpu_ns = *usec * 1000;  // v2
      }
    }
    if (!u.memory_bytes) {
      std::optional<uint64_t> usage = ReadCgroupNumber(dir + "/memory.usage_in_bytes");
      const bool v1 = usage.has_value();
      if (!usage) usage = ReadCgroupNumber(dir + "/memory.current");
      if (usage) {
        // The working set, as cAdvisor (and so the kubelet and metrics-server) counts it.
        const uint64_t inactive =
            ReadCgroupStat(dir + "/memory.stat", v1 ? "total_inactive_file" : "inactive_file")
                .value_or(0);
        u.memory_bytes = *usage > inactive ? *usage - inactive : 0;
      }
    }
  }
  return u;
}

PodMetrics::PodMetrics(const ProcessSupervisor* processes) {
  if (processes == nullptr) return;
  reader_ = [processes](const std::string& id) -> std::optional<CgroupUsage> {
    auto target = processes->ExecTarget(id);
    if (!target || target->cgroup_procs.empty()) return std::nullopt;
    std::vector<std::string> dirs;
    for (const auto& procs : target->cgroup_procs)
      dirs.push_back(procs.substr(0, procs.rfind('/')));
    CgroupUsage usage = ReadCgroupUsage(dirs);
    if (!usage.cpu_ns && !usage.memory_bytes) return std::nullopt;
    return usage;
  };
}

std::map<PodMetrics::PodKey, PodMetrics::Usage> PodMetrics::Sample(
    const std::vector<PodKey>& pods) {
  std::map<PodKey, Usage> out;
  if (!reader_) return out;
  struct Current {
    PodKey key;
    std::string id;
    CgroupUsage usage;
  };
  auto read = [&] {
    std::vector<Current> now;
    for (const PodKey& key : pods) {
      const std::string id = PodProcessId(key.first, key.second);
      if (auto usage = reader_(id)) now.push_back({key, id, *usage});
    }
    return now;
  };
  // Records the samples; true when one of them has no earlier sample to make a rate
  // with.
  auto record = [&](const std::vector<Current>& now, MetricsClock::time_point t) {
    std::lock_guard<std::mutex> lock(mu_);
    bool missing = false;
    for (const Current& c : now) {
      if (!c.usage.cpu_ns) continue;
      std::deque<Point>& h = history_[c.id];
      if (!h.empty() && (t - h.back().at > kStaleHistory || *c.usage.cpu_ns < h.back().cpu_ns)) {
        h.clear();  // stale, or a new container's counters
      }
      h.push_back({t, *c.usage.cpu_ns});
      // The front stays the newest sample at least a window old.
      while (h.size() > 2 && t - h[1].at >= kWindow) h.pop_front();
      if (h.size() > 64) h.pop_front();
      if (t - h.front().at < kMinWindow) missing = true;
    }
    for (auto it = history_.begin(); it != history_.end();) {
      it = t - it->second.back().at > kForgetHistory ? history_.erase(it) : std::next(it);
    }
    return missing;
  };
  std::vector<Current> now = read();
  auto t = MetricsClock::now();
  if (record(now, t)) {
    std::this_thread::sleep_for(kMinWindow);
    now = read();
    t = MetricsClock::now();
    record(now, t);
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const Current& c : now) {
    Usage u;
    u.memory_bytes = static_cast<int64_t>(c.usage.memory_bytes.value_or(0));
    auto h = history_.find(c.id);
    if (c.usage.cpu_ns && h != history_.end() && !h->second.empty()) {
      const Point& ref = h->second.front();
      const double seconds = std::chrono::duration<double>(t - ref.at).count();
      if (seconds > 0) {
        u.window_seconds = seconds;
        u.nanocores =
            static_cast<int64_t>(static_cast<double>(*c.usage.cpu_ns - ref.cpu_ns) / seconds);
      }
    }
    out[c.key] = u;
  }
  return out;
}

json MetricsApiResources(const std::string& version) {
  if (version != kMetricsVersion) return json::array();
  return json::array({{{"name", "pods"},
                       {"singularName", ""},
                       {"namespaced", true},
                       {"kind", "PodMetrics"},
                       {"verbs", {"get", "list"}}},
                      {{"name", "nodes"},
                       {"singularName", ""},
                       {"namespaced", false},
                       {"kind", "NodeMetrics"},
                       {"verbs", {"get", "list"}}}});
}

std::optional<ApiResponse> HandleMetricsRoute(ObjectStore& store, PodMetrics* metrics,
                                              const ApiRequest& request) {
  std::vector<std::string> seg = PathSegments(request.path);
  if (seg.size() < 4 || seg[0] != "apis" || seg[1] != kMetricsGroup || seg[2] != kMetricsVersion) {
    return std::nullopt;
  }
  seg.erase(seg.begin(), seg.begin() + 3);
  std::string ns, name, resource;
  if (seg[0] == "namespaces" && seg.size() >= 3 && seg.size() <= 4 && seg[2] == "pods") {
    ns = seg[1];
    resource = "pods";
    if (seg.size() == 4) name = seg[3];
  } else if ((seg[0] == "pods" || seg[0] == "nodes") && seg.size() <= 2) {
    resource = seg[0];
    if (seg.size() == 2) name = seg[1];
  } else {
    return ErrorResponse(NotFoundError("the server could not find the requested resource"));
  }
  if (resource == "pods" && ns.empty() && !name.empty()) {
    return ErrorResponse(NotFoundError("the server could not find the requested resource"));
  }
  if (request.method != "GET") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  auto selector = LabelSelector::Parse(QueryParam(request, "labelSelector"));
  if (!selector.ok()) return ErrorResponse(BadRequest(selector.status().message()));

  // The pods that may have metrics: running ones (of the namespace, or all).
  std::vector<json> pods;
  if (resource == "pods" && !name.empty()) {
    auto pod = store.Get({"pods", ns, name});
    if (pod.ok()) pods.push_back(std::move(*pod));
  } else {
    auto list = store.List("pods", resource == "pods" ? ns : "");
    if (list.ok()) pods = std::move(list->items);
  }
  auto key_of = [](const json& p) -> PodMetrics::PodKey {
    const json& metadata = control::ObjectField(p, "metadata");
    return {control::StringField(metadata, "namespace"), control::StringField(metadata, "name")};
  };
  std::vector<PodMetrics::PodKey> keys;
  for (const json& p : pods) {
    if (control::StringField(control::ObjectField(p, "status"), "phase") != "Running") continue;
    keys.push_back(key_of(p));
  }
  const auto usage = metrics != nullptr ? metrics->Sample(keys)
                                        : std::map<PodMetrics::PodKey, PodMetrics::Usage>{};
  auto usage_of = [&](const json& p) -> const PodMetrics::Usage* {
    auto it = usage.find(key_of(p));
    return it == usage.end() ? nullptr : &it->second;
  };

  if (resource == "pods") {
    json items = json::array();
    for (const json& p : pods) {
      const PodMetrics::Usage* u = usage_of(p);
      if (u == nullptr) continue;
      if (!name.empty()) return JsonResponse(200, PodMetricsItem(p, *u));
      if (selector->Matches(p)) items.push_back(PodMetricsItem(p, *u));
    }
    if (!name.empty()) {
      return ErrorResponse(MakeError(
          404, "NotFound", "podmetrics.metrics.k8s.io \"" + ns + "/" + name + "\" not found"));
    }
    return JsonResponse(200, MetricsList("PodMetricsList", std::move(items)));
  }
  // Nodes: the sum of their pods'.
  std::map<std::string, PodMetrics::Usage> by_node;
  for (const json& p : pods) {
    const PodMetrics::Usage* u = usage_of(p);
    if (u == nullptr) continue;
    PodMetrics::Usage& n =
        by_node[control::StringField(control::ObjectField(p, "spec"), "nodeName")];
    n.nanocores += u->nanocores;
    n.memory_bytes += u->memory_bytes;
    n.window_seconds = std::max(n.window_seconds, u->window_seconds);
  }
  auto nodes = store.List("nodes", "");
  json items = json::array();
  if (nodes.ok()) {
    for (const json& node : nodes->items) {
      const std::string node_name =
          control::StringField(control::ObjectField(node, "metadata"), "name");
      if (!name.empty() ? node_name != name : !selector->Matches(node)) continue;
      const PodMetrics::Usage u =
          by_node.count(node_name) != 0 ? by_node[node_name] : PodMetrics::Usage{};
      json item = {
          {"kind", "NodeMetrics"},
          {"apiVersion", std::string(kMetricsGroup) + "/" + kMetricsVersion},
          {"metadata", MetricsMeta(node)},
          {"timestamp", NowRfc3339()},
          {"window", MetricsWindow(u.window_seconds)},
          {"usage", {{"cpu", MetricsCpu(u.nanocores)}, {"memory", MetricsMemory(u.memory_bytes)}}}};
      if (!name.empty()) return JsonResponse(200, item);
      items.push_back(std::move(item));
    }
  }
  if (!name.empty()) {
    return ErrorResponse(
        MakeError(404, "NotFound", "nodemetrics.metrics.k8s.io \"" + name + "\" not found"));
  }
  return JsonResponse(200, MetricsList("NodeMetricsList", std::move(items)));
}

}  // namespace muster::server
