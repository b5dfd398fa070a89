// Kueue's visibility API (visibility.kueue.x-k8s.io v1beta1 and v1beta2): the pending
// workloads of a ClusterQueue or a LocalQueue, in the order the admitter would admit
// them, as upstream's PendingWorkloadsSummary:
//
//   GET /apis/visibility.kueue.x-k8s.io/<v>/clusterqueues/<cq>/pendingworkloads
//   GET /apis/visibility.kueue.x-k8s.io/<v>/namespaces/<ns>/localqueues/<lq>/pendingworkloads
//
// with `limit` (1000 by default and at most) and `offset` (0). The order and the
// positions are the admitter's own (admission::AdmissionSnapshot's pending lists, as
// the scheduler view publishes them per workload: control/scheduler_view.h), read from
// the view the scheduler controller published last, so a request never takes the
// scheduler's lock and sees one consistent state. Authorization is the generic one
// (resources clusterqueues/pendingworkloads and localqueues/pendingworkloads of this
// group); the bootstrap `view` role grants both.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/object_reader.h"
#include "control/scheduler_view.h"
#include "server/api_handler.h"
#include "server/api_status.h"

namespace muster::ui {
class ViewPublisher;
}  // namespace muster::ui

namespace muster::server {

inline constexpr const char* kVisibilityGroup = "visibility.kueue.x-k8s.io";
// Upstream's default limit; muster also refuses to return more in one answer.
inline constexpr int64_t kPendingWorkloadsLimit = 1000;

// Served versions, preferred first.
const std::vector<std::string>& VisibilityVersions();
// The APIResource entries of one version for discovery; empty for another version.
nlohmann::json VisibilityApiResources(const std::string& version);

struct PendingWorkloadsQuery {
  int64_t limit = kPendingWorkloadsLimit;
  int64_t offset = 0;
};
// `limit` and `offset` from the query string: a value that is not an integer is a 400;
// negative values count as 0 and a limit of 0 or above the maximum as the maximum,
// as upstream bounds them.
Result<PendingWorkloadsQuery> ParsePendingWorkloadsQuery(
    const std::map<std::string, std::string>& query);

// The pending workloads of ClusterQueue `cluster_queue` (or of LocalQueue
// `namespace_`/`local_queue` when `local_queue` is set) in `view`, in queue order,
// windowed by `q`. `reader` (may be null) supplies each Workload object's
// creationTimestamp and ownerReferences; without the object, the submit time is used.
nlohmann::json PendingWorkloadsSummary(const control::SchedulerView& view,
                                       const std::string& version, const std::string& cluster_queue,
                                       const std::string& namespace_,
                                       const std::string& local_queue,
                                       const PendingWorkloadsQuery& q,
                                       const control::ObjectReader* reader);

// nullopt when `request` is not under /apis/visibility.kueue.x-k8s.io/. Unknown queues
// are 404s naming them; 503 while no view is published.
std::optional<ApiResponse> HandleVisibilityRoute(const ui::ViewPublisher* views,
                                                 const control::ObjectReader& store,
                                                 const ApiRequest& request);

}  // namespace muster::server
