// The scheduler view served as read-only Kubernetes API resources of group
// muster.dev/v1alpha1 (transport-free: request in, status code and JSON out):
//
//   queueviews     QueueView     cluster-scoped  cohorts, ClusterQueues, Volcano queues
//   workloadviews  WorkloadView  namespaced      why each workload waits, in numbers
//   nodeviews      NodeView      cluster-scoped  GPUs, NUMA zones and their holders
//   clusterviews   ClusterView   cluster-scoped  one object "cluster": totals and
//                                                counts; subresources /utilization
//                                                (samples over time) and /timeline
//                                                (admissions, preemptions, evictions;
//                                                `limit` = the latest N)
//
// get and list only. Lists take `limit` and `continue` (the token is the last
// namespace/name returned: stable while the view changes underneath), `fieldSelector`
// (`=`, `==`, `!=` on any dotted path of the object, e.g. state=Pending,
// queue.clusterQueue=team-a) and `labelSelector` (views carry no labels: only an empty
// selector matches). The API server that mounts these renders Tables for kubectl from
// the objects (server/table_printer.cc has their columns). Watches answer 405: the views are
// derived from objects that can be watched (the dashboard watches those and re-reads).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/resource_types.h"
#include "control/scheduler_view.h"
#include "ui/view_reader.h"

namespace muster::ui {

// The view kinds: the kind table's entries with `view` set (control/resource_types.h).
std::vector<const control::ResourceType*> ViewKinds();
const control::ResourceType* FindViewKind(const std::string& plural);

struct ViewRequest {
  std::string plural;       // "workloadviews"
  std::string namespace_;   // "" for every namespace / cluster-scoped
  std::string name;         // "" for a list
  std::string subresource;  // "utilization" | "timeline" (clusterviews only)
  std::map<std::string, std::string> query;
};

struct ViewResponse {
  int code = 200;
  nlohmann::json body;  // the object, the list, or a metav1.Status
};

// Largest page a list returns (a larger or absent `limit` is capped here, and the
// answer carries a continue token).
inline constexpr int64_t kMaxViewPage = 5000;

// "/apis/muster.dev/v1alpha1/[namespaces/NS/]PLURAL[/NAME[/SUBRESOURCE]]" for one of
// the view kinds (query not included): the request, else nullopt.
std::optional<ViewRequest> ParseViewPath(std::string_view path);

// `view` may be null (nothing published yet): 503. `reader` cuts the answer to what
// its reader may see (view_reader.h); the default reads everything.
ViewResponse HandleViewRead(const control::SchedulerView* view, const ViewRequest& request,
                            const ViewReader& reader = ViewReader());

}  // namespace muster::ui
