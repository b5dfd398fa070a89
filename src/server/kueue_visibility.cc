#include "server/kueue_visibility.h"

#include <algorithm>

#include "control/workload_objects.h"
#include "server/path_segments.h"
#include "ui/view_publisher.h"

namespace muster::server {
namespace {

using nlohmann::json;

// Upstream's NewNotFound(visibility.Resource("clusterqueue"), name) wording.
ApiError QueueNotFound(const std::string& resource, const std::string& name) {
  ApiError e =
      MakeError(404, "NotFound", resource + "." + kVisibilityGroup + " \"" + name + "\" not found");
  e.name = name;
  e.group = kVisibilityGroup;
  e.kind = resource;
  return e;
}

// The pending workloads of `cluster_queue` in the admitter's order (the positions the
// view carries come from AdmissionSnapshot's pending list; sorting by them restores
// that list, it does not re-order by other keys).
std::vector<const control::WorkloadView*> InQueueOrder(const control::SchedulerView& view,
                                                       const std::string& cluster_queue) {
  std::vector<const control::WorkloadView*> out;
  for (const auto& w : view.workloads) {
    if (!w.volcano && w.cluster_queue == cluster_queue && w.position_in_cluster_queue >= 0) {
      out.push_back(&w);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    return a->position_in_cluster_queue < b->position_in_cluster_queue;
  });
  return out;
}

json Item(const control::WorkloadView& w, int32_t in_cq, int32_t in_lq,
          const control::ObjectReader* reader) {
  json md = {{"name", w.name}, {"namespace", w.namespace_}};
  if (w.submitted) md["creationTimestamp"] = control::Rfc3339(*w.submitted);
  if (reader != nullptr) {
    // Upstream reports the Workload object's own creationTimestamp and owners.
    auto object = reader->Get({"workloads.kueue.x-k8s.io", w.namespace_, w.name});
    if (object.ok() && (*object)["metadata"].is_object()) {
      const json& om = (*object)["metadata"];
      if (om.contains("creationTimestamp")) md["creationTimestamp"] = om["creationTimestamp"];
      if (om.contains("ownerReferences") && om["ownerReferences"].is_array()) {
        json owners = json::array();
        for (const auto& ref : om["ownerReferences"]) {
          if (!ref.is_object()) continue;
          json o = json::object();
          for (const char* k : {"apiVersion", "kind", "name", "uid"}) {
            if (ref.contains(k)) o[k] = ref[k];
          }
          owners.push_back(std::move(o));
        }
        if (!owners.empty()) md["ownerReferences"] = std::move(owners);
      }
    }
  }
  return {{"metadata", std::move(md)},
          {"priority", w.priority},
          {"localQueueName", w.local_queue},
          {"positionInClusterQueue", in_cq},
          {"positionInLocalQueue", in_lq}};
}

}  // namespace

const std::vector<std::string>& VisibilityVersions() {
  static const std::vector<std::string> kVersions = {"v1beta1", "v1beta2"};
  return kVersions;
}

json VisibilityApiResources(const std::string& version) {
  const auto& versions = VisibilityVersions();
  if (std::find(versions.begin(), versions.end(), version) == versions.end()) return json::array();
  // As upstream's visibility server registers them: the queues are there only to hold
  // their subresource (no verbs), and every entry's kind is the summary's.
  auto entry = [](const char* name, const char* singular, bool namespaced, json verbs) {
    return json{{"name", name},
                {"singularName", singular},
                {"namespaced", namespaced},
                {"kind", "PendingWorkloadsSummary"},
                {"verbs", std::move(verbs)}};
  };
  return json::array({
      entry("clusterqueues", "clusterqueue", false, json::array()),
      entry("clusterqueues/pendingworkloads", "", false, json::array({"get"})),
      entry("localqueues", "localqueue", true, json::array()),
      entry("localqueues/pendingworkloads", "", true, json::array({"get"})),
  });
}

Result<PendingWorkloadsQuery> ParsePendingWorkloadsQuery(
    const std::map<std::string, std::string>& query) {
  PendingWorkloadsQuery q;
  if (auto it = query.find("limit"); it != query.end()) {
    auto v = ParseIntParam("limit", it->second);
    if (!v.ok()) return v.status();
    // Upstream defaults 0 to 1000, then bounds a negative limit to 0.
    q.limit = *v == 0 ? kPendingWorkloadsLimit : std::clamp<int64_t>(*v, 0, kPendingWorkloadsLimit);
  }
  if (auto it = query.find("offset"); it != query.end()) {
    auto v = ParseIntParam("offset", it->second);
    if (!v.ok()) return v.status();
    q.offset = std::max<int64_t>(*v, 0);
  }
  return q;
}

json PendingWorkloadsSummary(const control::SchedulerView& view, const std::string& version,
                             const std::string& cluster_queue, const std::string& namespace_,
                             const std::string& local_queue, const PendingWorkloadsQuery& q,
                             const control::ObjectReader* reader) {
  json items = json::array();
  std::map<std::string, int32_t> in_local;  // "<namespace>/<local queue>" -> seen so far
  int64_t matched = 0;
  const auto ordered = InQueueOrder(view, cluster_queue);
  for (size_t i = 0; i < ordered.size(); ++i) {
    const control::WorkloadView& w = *ordered[i];
    const int32_t lq_pos = in_local[w.namespace_ + "/" + w.local_queue]++;
    if (!local_queue.empty() && (w.namespace_ != namespace_ || w.local_queue != local_queue)) {
      continue;
    }
    if (matched++ < q.offset) continue;
    if (static_cast<int64_t>(items.size()) >= q.limit) break;
    items.push_back(Item(w, static_cast<int32_t>(i), lq_pos, reader));
  }
  return {{"kind", "PendingWorkloadsSummary"},
          {"apiVersion", std::string(kVisibilityGroup) + "/" + version},
          {"metadata", json::object()},
          {"items", std::move(items)}};
}

std::optional<ApiResponse> HandleVisibilityRoute(const ui::ViewPublisher* views,
                                                 const control::ObjectReader& store,
                                                 const ApiRequest& request) {
  const std::string prefix = std::string("/apis/") + kVisibilityGroup + "/";
  if (request.path.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const auto seg = PathSegments(request.path);
  if (seg.size() < 2 || seg[0] != "apis" || seg[1] != kVisibilityGroup) return std::nullopt;
  // /apis/<group> and /apis/<group>/<version> are discovery (discovery.cc).
  if (seg.size() <= 3) return std::nullopt;
  const auto& versions = VisibilityVersions();
  const bool served = std::find(versions.begin(), versions.end(), seg[2]) != versions.end();
  const bool cq = seg.size() == 6 && seg[3] == "clusterqueues" && seg[5] == "pendingworkloads";
  const bool lq = seg.size() == 8 && seg[3] == "namespaces" && seg[5] == "localqueues" &&
                  seg[7] == "pendingworkloads";
  if (!served || (!cq && !lq)) {
    return ErrorResponse(NotFoundError("the server could not find the requested resource"));
  }
  if (request.method != "GET") {
    return ErrorResponse(MethodNotAllowed(std::string("pendingworkloads of ") + kVisibilityGroup +
                                          " are read only: get"));
  }
  auto q = ParsePendingWorkloadsQuery(request.query);
  if (!q.ok()) return ErrorResponse(BadRequest(q.status().message()));

  std::string cluster_queue, ns, local_queue;
  if (cq) {
    cluster_queue = seg[4];
    if (!store.Get({"clusterqueues.kueue.x-k8s.io", "", cluster_queue}).ok()) {
      return ErrorResponse(QueueNotFound("clusterqueue", cluster_queue));
    }
  } else {
    ns = seg[4];
    local_queue = seg[6];
    auto object = store.Get({"localqueues.kueue.x-k8s.io", ns, local_queue});
    if (!object.ok()) return ErrorResponse(QueueNotFound("localqueue", local_queue));
    const json spec = object->value("spec", json::object());
    cluster_queue = spec.is_object() ? spec.value("clusterQueue", "") : "";
  }
  auto current = views != nullptr ? views->Current() : nullptr;
  if (current == nullptr) {
    return ErrorResponse(
        MakeError(503, "ServiceUnavailable",
                  "the scheduler has not published its queues yet; retry shortly"));
  }
  return JsonResponse(
      200, PendingWorkloadsSummary(*current, seg[2], cluster_queue, ns, local_queue, *q, &store));
}

}  // namespace muster::server
