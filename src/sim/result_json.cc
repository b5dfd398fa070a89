#include "sim/result_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace muster::sim {
namespace {

using Json = nlohmann::ordered_json;

// Microsecond rounding hides floating-point noise from sums of durations; + 0.0
// turns -0 into 0.
double Round(double x) { return std::round(x * 1e6) / 1e6 + 0.0; }

Json TimeOrNull(const std::optional<double>& t) { return t ? Json(Round(*t)) : Json(nullptr); }

Json String(const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); }

Json StatsJson(const Stats& s) {
  Json j = Json::object();
  j["mean"] = Round(s.mean);
  j["p50"] = Round(s.p50);
  j["p99"] = Round(s.p99);
  j["p90"] = Round(s.p90);  // added later: last, so the contract's keys keep their order
  return j;
}

Json WorkloadJson(const WorkloadResult& w) {
  Json j = Json::object();
  j["name"] = w.name;
  j["kind"] = w.kind;
  j["queue"] = String(w.queue);
  j["clusterQueue"] = String(w.cluster_queue);
  j["priority"] = w.priority;
  j["submitTime"] = TimeOrNull(w.submit_time);
  j["admitTime"] = TimeOrNull(w.admit_time);
  j["startTime"] = TimeOrNull(w.start_time);
  j["finishTime"] = TimeOrNull(w.finish_time);
  j["phase"] = w.phase;
  Json flavors = Json::object();
  for (const auto& [pod_set, resources] : w.flavors) {
    Json r = Json::object();
    for (const auto& [resource, flavor] : resources) r[resource] = flavor;
    flavors[pod_set] = std::move(r);
  }
  j["flavors"] = std::move(flavors);
  Json pods = Json::array();
  for (const auto& p : w.pods) {
    Json pj = Json::object();
    pj["podSet"] = p.pod_set;
    pj["index"] = p.index;
    pj["node"] = p.node;
    if (!p.gpus.empty()) pj["gpus"] = p.gpus;
    if (p.numa >= 0) pj["numa"] = p.numa;
    pods.push_back(std::move(pj));
  }
  j["pods"] = std::move(pods);
  Json evictions = Json::array();
  for (const auto& e : w.evictions) {
    Json ej = Json::object();
    ej["time"] = Round(e.time);
    ej["reason"] = e.reason;
    ej["detail"] = e.detail;
    ej["by"] = e.by.empty() ? Json(nullptr) : Json(e.by);
    evictions.push_back(std::move(ej));
  }
  j["evictions"] = std::move(evictions);
  if (!w.resizes.empty()) {
    Json resizes = Json::array();
    for (const auto& z : w.resizes) {
      Json zj = Json::object();
      zj["time"] = Round(z.time);
      zj["kind"] = z.kind;
      zj["from"] = z.from;
      zj["pods"] = z.pods;
      zj["detail"] = z.detail.empty() ? Json(nullptr) : Json(z.detail);
      zj["by"] = z.by.empty() ? Json(nullptr) : Json(z.by);
      resizes.push_back(std::move(zj));
    }
    j["resizes"] = std::move(resizes);
  }
  j["pendingReason"] = String(w.pending_reason);
  return j;
}

}  // namespace

std::string ToJson(const SimulationResult& result) {
  Json j = Json::object();
  j["apiVersion"] = "muster.dev/v1alpha1";
  j["kind"] = "SimulationResult";
  j["endTime"] = Round(result.end_time);
  Json workloads = Json::array();
  for (const auto& w : result.workloads) workloads.push_back(WorkloadJson(w));
  j["workloads"] = std::move(workloads);
  const Summary& s = result.summary;
  Json summary = Json::object();
  summary["workloads"] = s.workloads;
  summary["succeeded"] = s.succeeded;
  summary["pending"] = s.pending;
  summary["gpuUtilization"] = Round(s.gpu_utilization);
  summary["makespan"] = Round(s.makespan);
  summary["jct"] = StatsJson(s.jct);
  summary["queueingDelay"] = StatsJson(s.queueing_delay);
  summary["preemptions"] = s.preemptions;
  // Beyond the contract's fields (extending is allowed): after them, stable order.
  summary["running"] = s.running;
  summary["failed"] = s.failed;
  summary["gpuHoursLost"] = Round(s.gpu_hours_lost);
  // Report metrics (issue 5). Time series are left to --report: they would swamp the JSON.
  summary["cpuUtilization"] = Round(s.cpu_utilization);
  summary["gangWait"] = StatsJson(s.gang_wait);
  summary["multiPodGangs"] = s.multi_pod_gangs;
  if (s.gangs_within_one_rack) summary["gangsWithinOneRack"] = Round(*s.gangs_within_one_rack);
  if (s.pods_within_one_numa) summary["podsWithinOneNuma"] = Round(*s.pods_within_one_numa);
  summary["fragmentedGpus"] = s.fragmented_gpus;
  Json queues = Json::array();
  for (const auto& q : result.queues) {
    Json qj = Json::object();
    qj["name"] = q.name;
    qj["workloads"] = q.workloads;
    qj["gpuQuota"] = q.gpu_quota ? Json(Round(*q.gpu_quota)) : Json(nullptr);
    qj["jct"] = StatsJson(q.jct);
    qj["queueingDelay"] = StatsJson(q.queueing_delay);
    queues.push_back(std::move(qj));
  }
  summary["queues"] = std::move(queues);
  j["summary"] = std::move(summary);
  // Replace invalid UTF-8 instead of throwing: names come from user input.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace muster::sim
