#include "ui/view_json.h"

#include "control/workload_objects.h"
#include "core/resource_list.h"
#include "core/resource_name.h"

namespace muster::ui {
namespace {

using nlohmann::json;

std::string Quantity(const std::string& resource, int64_t amount) {
  return ResourceList::FormatAmount(ResourceNames::Intern(resource), amount);
}

json Quantities(const control::Amounts& amounts) {
  json out = json::object();
  for (const auto& [k, v] : amounts) out[k] = Quantity(k, v);
  return out;
}

json Metadata(const std::string& name, const std::string& namespace_, int64_t generation) {
  json md = {{"name", name}, {"resourceVersion", std::to_string(generation)}};
  if (!namespace_.empty()) md["namespace"] = namespace_;
  return md;
}

json Object(const char* kind, json metadata) {
  return {{"apiVersion", kViewApiVersion}, {"kind", kind}, {"metadata", std::move(metadata)}};
}

void PutTime(json& out, const char* key, const std::optional<Time>& t) {
  if (t) out[key] = control::Rfc3339(*t);
}

// A weight in milli-units as a quantity ("1", "2.5").
std::string Weight(int64_t milli) {
  return ResourceList::FormatAmount(ResourceNames::Intern("cpu"), milli);
}

}  // namespace

json QueueViewJson(const control::QueueView& v, int64_t generation) {
  json o = Object("QueueView", Metadata(v.name, "", generation));
  o["queue"] = {{"kind", v.kind}, {"name", v.queue}};
  if (!v.parent.empty()) o["parent"] = v.parent;
  o["children"] = v.children;
  json quota = json::array();
  for (const auto& q : v.quota) {
    json cell = {{"resource", q.resource},
                 {"nominal", Quantity(q.resource, q.nominal)},
                 {"used", Quantity(q.resource, q.used)},
                 {"borrowed", Quantity(q.resource, q.borrowed)},
                 {"lent", Quantity(q.resource, q.lent)},
                 {"available", Quantity(q.resource, q.available)}};
    if (!q.flavor.empty()) cell["flavor"] = q.flavor;
    if (q.borrowing_limit) cell["borrowingLimit"] = Quantity(q.resource, *q.borrowing_limit);
    if (q.lending_limit) cell["lendingLimit"] = Quantity(q.resource, *q.lending_limit);
    quota.push_back(std::move(cell));
  }
  o["quota"] = std::move(quota);
  o["fairSharing"] = {{"weight", Weight(v.weight_milli)}, {"weightedShare", v.weighted_share}};
  o["workloads"] = {
      {"pending", v.pending}, {"inadmissible", v.inadmissible}, {"admitted", v.admitted}};
  o["pendingRequests"] = Quantities(v.pending_requests);
  if (v.kind == "ClusterQueue") {
    o["queueingStrategy"] = v.queueing_strategy;
    o["stopPolicy"] = v.stop_policy;
    o["preemption"] = v.preemption;
  }
  if (!v.inactive_message.empty()) o["inactiveMessage"] = v.inactive_message;
  if (v.kind == "VolcanoQueue") {
    o["volcano"] = {{"capability", Quantities(v.capability)},
                    {"guarantee", Quantities(v.guarantee)},
                    {"deserved", Quantities(v.deserved)},
                    {"allocated", Quantities(v.allocated)},
                    {"reclaimable", v.reclaimable}};
  }
  return o;
}

json WorkloadViewJson(const control::WorkloadView& v, int64_t generation) {
  json o = Object("WorkloadView", Metadata(v.name, v.namespace_, generation));
  o["job"] = {{"kind", v.job_kind}, {"name", v.job_name}};
  o["state"] = v.state;
  json queue = {{"localQueue", v.local_queue}, {"clusterQueue", v.cluster_queue}};
  if (!v.cohort.empty()) queue["cohort"] = v.cohort;
  if (v.volcano) queue["volcano"] = true;
  o["queue"] = std::move(queue);
  o["priority"] = v.priority;
  if (!v.priority_class.empty()) o["priorityClassName"] = v.priority_class;
  if (v.position_in_cluster_queue >= 0) o["positionInClusterQueue"] = v.position_in_cluster_queue;
  if (v.position_in_local_queue >= 0) o["positionInLocalQueue"] = v.position_in_local_queue;
  if (v.inadmissible) o["inadmissible"] = true;
  PutTime(o, "submitTime", v.submitted);
  PutTime(o, "admitTime", v.admitted);
  PutTime(o, "startTime", v.started);
  PutTime(o, "finishTime", v.finished);
  o["pods"] = v.pods;
  o["minPods"] = v.min_pods;
  o["requests"] = Quantities(v.requests);
  if (!v.reason.empty()) o["reason"] = v.reason;
  if (!v.message.empty()) o["message"] = v.message;
  json shortfall = json::array();
  for (const auto& s : v.shortfall) {
    json e = {{"resource", s.resource},
              {"requested", Quantity(s.resource, s.requested)},
              {"available", Quantity(s.resource, s.available)},
              {"missing", Quantity(s.resource, s.requested - s.available)}};
    if (!s.flavor.empty()) e["flavor"] = s.flavor;
    shortfall.push_back(std::move(e));
  }
  o["shortfall"] = std::move(shortfall);
  json candidates = json::array();
  for (const auto& c : v.candidates) {
    candidates.push_back({{"workload", c.workload},
                          {"clusterQueue", c.cluster_queue},
                          {"priority", c.priority},
                          {"reason", c.reason},
                          {"preempting", c.preempting}});
  }
  o["preemptionCandidates"] = std::move(candidates);
  if (!v.preempted_for.empty()) o["preemptedFor"] = v.preempted_for;
  o["flavors"] = v.flavors;
  json placement = json::array();
  for (const auto& p : v.placement) {
    json pod = {{"podSet", p.pod_set}, {"index", p.index}, {"node", p.node}, {"gpus", p.gpus}};
    if (p.numa_zone >= 0) pod["numaZone"] = p.numa_zone;
    placement.push_back(std::move(pod));
  }
  o["placement"] = std::move(placement);
  json evictions = json::array();
  for (const auto& e : v.evictions) {
    json ev = {{"time", control::Rfc3339(e.time)}, {"reason", e.reason}};
    if (!e.detail.empty()) ev["detail"] = e.detail;
    if (!e.by.empty()) ev["by"] = e.by;
    evictions.push_back(std::move(ev));
  }
  o["evictions"] = std::move(evictions);
  json decisions = json::array();
  for (const auto& d : v.decisions) {
    decisions.push_back({{"time", control::Rfc3339(d.time)},
                         {"action", d.action},
                         {"reason", d.reason},
                         {"message", d.message}});
  }
  o["decisions"] = std::move(decisions);
  o["failures"] = v.failures;
  return o;
}

json NodeViewJson(const control::NodeView& v, int64_t generation) {
  json o = Object("NodeView", Metadata(v.name, "", generation));
  json topology = json::array();
  for (const auto& [k, val] : v.topology) topology.push_back({{"key", k}, {"value", val}});
  o["topology"] = std::move(topology);
  o["ready"] = v.ready;
  o["unschedulable"] = v.unschedulable;
  o["allocatable"] = Quantities(v.allocatable);
  o["used"] = Quantities(v.used);
  json gpus = json::array();
  for (const auto& g : v.gpus) {
    json e = {{"index", g.index}, {"milliUsed", g.milli_used}};
    if (g.numa_zone >= 0) e["numaZone"] = g.numa_zone;
    if (g.nvlink_domain >= 0) e["nvlinkDomain"] = g.nvlink_domain;
    if (!g.holder.empty()) {
      e["workload"] = g.holder;
      e["pod"] = g.pod;
    }
    gpus.push_back(std::move(e));
  }
  o["gpus"] = std::move(gpus);
  json zones = json::array();
  for (const auto& z : v.zones) {
    zones.push_back({{"name", z.name},
                     {"allocatable", Quantities(z.allocatable)},
                     {"used", Quantities(z.used)},
                     {"gpus", z.gpus},
                     {"workloads", z.holders}});
  }
  o["numaZones"] = std::move(zones);
  o["workloads"] = v.workloads;
  return o;
}

json ClusterViewJson(const control::ClusterView& v, int64_t generation) {
  json o = Object("ClusterView", Metadata(kClusterViewName, "", generation));
  o["updateTime"] = control::Rfc3339(v.updated);
  o["nodes"] = {{"total", v.nodes}, {"ready", v.ready_nodes}};
  o["allocatable"] = Quantities(v.allocatable);
  o["used"] = Quantities(v.used);
  o["largestFreeGpus"] = v.largest_free_gpus;
  o["workloads"] = v.workloads;
  o["cycles"] = v.cycles;
  if (!v.engine_error.empty()) o["engineError"] = v.engine_error;
  return o;
}

json ClusterUtilizationJson(const control::ClusterView& v, int64_t generation) {
  json o = Object("ClusterUtilization", Metadata(kClusterViewName, "", generation));
  const auto& u = v.utilization;
  o["utilization"] = {{"time", u.time},
                      {"gpusUsed", u.gpus_used},
                      {"gpusTotal", u.gpus_total},
                      {"cpuUsedMilli", u.cpu_used},
                      {"cpuTotalMilli", u.cpu_total},
                      {"running", u.running},
                      {"pending", u.pending}};
  return o;
}

json ClusterTimelineJson(const control::ClusterView& v, int64_t generation, size_t limit) {
  json o = Object("ClusterTimeline", Metadata(kClusterViewName, "", generation));
  json entries = json::array();
  const size_t from = v.timeline.size() > limit ? v.timeline.size() - limit : 0;
  for (size_t i = from; i < v.timeline.size(); ++i) {
    const auto& e = v.timeline[i];
    json entry = {{"time", control::Rfc3339(e.time)}, {"unixTime", e.time}, {"action", e.action},
                  {"workload", e.workload},           {"reason", e.reason}, {"message", e.message}};
    if (!e.cluster_queue.empty()) entry["clusterQueue"] = e.cluster_queue;
    entries.push_back(std::move(entry));
  }
  o["entries"] = std::move(entries);
  return o;
}

}  // namespace muster::ui
