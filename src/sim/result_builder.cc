// Simulator::BuildResult: the engine's records and the simulator's accounting as
// a SimulationResult (CONTRACT section 3).
#include <algorithm>

#include "sim/simulator.h"

namespace muster::sim {
namespace {

WorkloadResult DescribeWorkload(const engine::Engine& engine, const engine::WorkloadRecord& r) {
  WorkloadResult w;
  w.name = r.key();
  w.kind = r.workload.meta.kind;
  admission::QueueInfo q = engine.QueueOf(r.key());
  if (q.volcano) {
    if (!q.cluster_queue.empty()) w.queue = q.cluster_queue;
  } else {
    if (!q.local_queue.empty()) w.queue = q.local_queue;
    if (!q.cluster_queue.empty()) w.cluster_queue = q.cluster_queue;
  }
  w.priority = r.workload.priority;
  w.submit_time = r.submit_time;
  w.admit_time = r.admit_time;
  w.start_time = r.start_time;
  w.finish_time = r.finish_time;
  w.phase = std::string(engine::PhaseName(r.phase));

  for (const auto& psa : r.assignment.pod_sets) {
    if (psa.flavors.empty()) continue;
    auto& out = w.flavors[psa.pod_set];
    for (const auto& [resource, flavor] : psa.flavors) out[resource] = flavor;
  }
  const auto& pod_sets = r.workload.pod_sets;
  for (const auto& p : r.plan.pods) {
    PodResult pr;
    pr.pod_set = (p.pod_set >= 0 && static_cast<size_t>(p.pod_set) < pod_sets.size())
                     ? pod_sets[p.pod_set].name
                     : std::to_string(p.pod_set);
    pr.index = p.index;
    if (p.node >= 0 && p.node < engine.cluster().NodeCount()) {
      pr.node = engine.cluster().GetNode(p.node).meta.name;
    }
    pr.gpus = p.gpus;
    pr.numa = p.numa_zone;
    w.pods.push_back(std::move(pr));
  }
  std::sort(w.pods.begin(), w.pods.end(), [](const PodResult& a, const PodResult& b) {
    return a.pod_set != b.pod_set ? a.pod_set < b.pod_set : a.index < b.index;
  });
  for (const auto& e : r.evictions) w.evictions.push_back({e.time, e.reason, e.detail, e.by});
  for (const auto& z : r.resizes)
    w.resizes.push_back({z.time, z.kind, z.from, z.to, z.detail, z.by});
  if (r.phase != engine::Phase::kRunning && r.phase != engine::Phase::kSucceeded) {
    w.pending_reason = engine.PendingMessage(r.key());
  }
  return w;
}

}  // namespace

SimulationResult Simulator::BuildResult() const {
  SimulationResult out;
  out.end_time = end_time_;
  Summary& s = out.summary;
  std::vector<double> jct;
  std::vector<double> delay;
  double gpu_seconds = 0;
  double lost_seconds = 0;
  bool all_finished = true;
  double last_finish = 0;

  for (const auto& r : engine_->workloads()) {
    WorkloadResult w = DescribeWorkload(*engine_, r);
    auto run = runs_.find(r.key());
    if (run != runs_.end()) {
      gpu_seconds += run->second.gpu_seconds_used;
      lost_seconds += run->second.gpu_seconds_lost;
      w.gpu_hours_lost = run->second.gpu_seconds_lost / 3600.0;
      if (r.phase == engine::Phase::kRunning) {
        // The open run counts up to the end of the simulation.
        gpu_seconds += std::max(0.0, end_time_ - run->second.size_start) *
                       static_cast<double>(run->second.gpus);
      }
    }
    s.workloads++;
    switch (r.phase) {
      case engine::Phase::kSucceeded:
        s.succeeded++;
        break;
      case engine::Phase::kFailed:
        s.failed++;
        break;
      case engine::Phase::kRunning:
        s.running++;
        break;
      case engine::Phase::kPending:
        s.pending++;
        break;
      case engine::Phase::kAdmitted:
        break;
    }
    if (r.Finished() && r.finish_time) {
      last_finish = std::max(last_finish, *r.finish_time);
    } else {
      all_finished = false;
    }
    if (r.phase == engine::Phase::kSucceeded && r.finish_time && r.submit_time) {
      jct.push_back(*r.finish_time - *r.submit_time);
    }
    if (r.first_admit_time && r.submit_time) delay.push_back(*r.first_admit_time - *r.submit_time);
    for (const auto& e : r.evictions) {
      if (e.reason == engine::kReasonPreempted) s.preemptions++;
    }
    out.workloads.push_back(std::move(w));
  }
  std::sort(out.workloads.begin(), out.workloads.end(),
            [](const WorkloadResult& a, const WorkloadResult& b) { return a.name < b.name; });

  double capacity = static_cast<double>(cluster_gpus_) * end_time_;
  s.gpu_utilization = capacity > 0 ? gpu_seconds / capacity : 0;
  // The last completion when everything finished; else the run's end.
  s.makespan = all_finished ? last_finish : end_time_;
  s.jct = ComputeStats(std::move(jct));
  s.queueing_delay = ComputeStats(std::move(delay));
  s.gpu_hours_lost = lost_seconds / 3600.0;
  FillReportMetrics(out);
  return out;
}

}  // namespace muster::sim
