// The simulator's report metrics (issue 5): usage over time, per-queue usage and
// delays, gang wait, rack and NUMA locality, fragmentation. Collected as runs start
// and stop so a trace replay pays O(pods) per start, not O(nodes) per instant.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "sim/simulator.h"

namespace muster::sim {
namespace {

constexpr const char* kGpuResource = "nvidia.com/gpu";

double QuantityValue(const Quantity& q) { return static_cast<double>(q.MilliValue()) / 1000.0; }

// Appends (t, v) unless the series already ends on v: a step series needs only changes.
void AppendStep(std::vector<SeriesPoint>& series, Time t, double v) {
  if (!series.empty() && series.back().value == v) return;
  if (!series.empty() && series.back().time == t) {
    series.back().value = v;
    return;
  }
  series.push_back({t, v});
}

}  // namespace

std::map<std::string, double> QueueGpuQuotas(const model::ManifestSet& manifests) {
  std::map<std::string, double> out;
  for (const auto& cq : manifests.cluster_queues) {
    double total = 0;
    bool found = false;
    for (const auto& group : cq.resource_groups) {
      for (const auto& flavor : group.flavors) {
        for (const auto& r : flavor.resources) {
          if (r.name != kGpuResource) continue;
          total += QuantityValue(r.nominal_quota);
          found = true;
        }
      }
    }
    if (found) out[cq.meta.name] = total;
  }
  for (const auto& q : manifests.volcano_queues) {
    for (const auto* m : {&q.deserved, &q.capability}) {
      auto it = m->find(kGpuResource);
      if (it == m->end()) continue;
      out[q.meta.name] = QuantityValue(it->second);
      break;
    }
  }
  return out;
}

std::string RackOf(const model::Node& node) {
  const auto& labels = node.meta.labels;
  auto it = labels.find("topology.kubernetes.io/rack");
  if (it != labels.end()) return it->second;
  for (const auto& [key, value] : labels) {  // sorted: the choice is stable
    if (key.find("rack") != std::string::npos) return value;
  }
  return "";
}

void Simulator::NoteStart(const engine::WorkloadRecord& record, RunState& run, Time now) {
  if (!run.first_start) run.first_start = now;
  run.queue = engine_->QueueOf(record.key()).cluster_queue;
  const auto& pod_sets = record.workload.pod_sets;
  run.cpu_milli = 0;
  std::set<std::string> racks;
  bool unlabelled = false;
  for (const auto& p : record.plan.pods) {
    if (p.pod_set < 0 || static_cast<size_t>(p.pod_set) >= pod_sets.size()) continue;
    const ResourceList& req = pod_sets[p.pod_set].requests;
    run.cpu_milli += req.Get(kCpu);
    if (req.Get(kNvidiaGpu) > 0 || !p.gpus.empty()) {
      usage_.gpu_pods++;
      if (p.numa_zone >= 0) usage_.gpu_pods_one_numa++;
    }
    if (p.node >= 0 && static_cast<size_t>(p.node) < rack_of_node_.size() &&
        !rack_of_node_[p.node].empty()) {
      racks.insert(rack_of_node_[p.node]);
    } else {
      unlabelled = true;
    }
  }
  if (record.plan.pods.size() > 1) {
    usage_.multi_pod_starts++;
    if (!unlabelled && racks.size() == 1) usage_.multi_pod_one_rack++;
  }
  usage_.gpus += run.gpus;
  usage_.cpu_milli += run.cpu_milli;
  if (!run.queue.empty()) {
    usage_.queue_gpus[run.queue] += run.gpus;
    usage_.dirty_queues.insert(run.queue);
  }
}

void Simulator::NoteResize(const engine::WorkloadRecord& record, RunState& run) {
  const auto& pod_sets = record.workload.pod_sets;
  run.cpu_milli = 0;
  for (const auto& p : record.plan.pods) {
    if (p.pod_set < 0 || static_cast<size_t>(p.pod_set) >= pod_sets.size()) continue;
    run.cpu_milli += pod_sets[p.pod_set].requests.Get(kCpu);
  }
  usage_.gpus += run.gpus;
  usage_.cpu_milli += run.cpu_milli;
  if (!run.queue.empty()) {
    usage_.queue_gpus[run.queue] += run.gpus;
    usage_.dirty_queues.insert(run.queue);
  }
}

void Simulator::NoteStop(RunState& run, double elapsed) {
  run.cpu_milli_seconds_used += elapsed * static_cast<double>(run.cpu_milli);
  usage_.gpus -= run.gpus;
  usage_.cpu_milli -= run.cpu_milli;
  if (!run.queue.empty()) {
    usage_.queue_gpus[run.queue] -= run.gpus;
    usage_.dirty_queues.insert(run.queue);
  }
  run.cpu_milli = 0;
}

void Simulator::SampleUsage(Time t) {
  auto ratio = [](int64_t used, int64_t total) {
    return total > 0 ? static_cast<double>(used) / static_cast<double>(total) : 0.0;
  };
  AppendStep(usage_.gpu_series, t, ratio(usage_.gpus, cluster_gpus_));
  AppendStep(usage_.cpu_series, t, ratio(usage_.cpu_milli, cluster_cpu_milli_));
  for (const std::string& q : usage_.dirty_queues) {
    AppendStep(usage_.queue_series[q], t, static_cast<double>(usage_.queue_gpus[q]));
  }
  usage_.dirty_queues.clear();
}

int64_t Simulator::FragmentedGpus() const {
  // The smallest waiting GPU pod: fewest GPUs, then least cpu, then least memory.
  std::optional<ResourceList> smallest;
  auto key = [](const ResourceList& r) {
    return std::tuple(r.Get(kNvidiaGpu), r.Get(kCpu), r.Get(kMemory));
  };
  for (const auto& r : engine_->workloads()) {
    if (r.phase != engine::Phase::kPending && r.phase != engine::Phase::kAdmitted) continue;
    if (!r.submit_time) continue;  // not arrived yet (--until)
    for (const auto& ps : r.workload.pod_sets) {
      if (ps.requests.Get(kNvidiaGpu) <= 0) continue;
      if (!smallest || key(ps.requests) < key(*smallest)) smallest = ps.requests;
    }
  }
  if (!smallest) return 0;  // nothing waits for GPUs: no free GPU is unusable
  const placement::ClusterState& cluster = engine_->cluster();
  int64_t out = 0;
  for (placement::NodeIndex i = 0; i < cluster.NodeCount(); ++i) {
    if (!cluster.NodeReady(i)) continue;
    ResourceList free = cluster.Free(i);
    int64_t gpus = free.Get(kNvidiaGpu);
    if (gpus > 0 && !smallest->LessEqual(free)) out += gpus;
  }
  return out;
}

void Simulator::FillReportMetrics(SimulationResult& out) const {
  Summary& s = out.summary;
  double cpu_seconds = 0;
  std::vector<double> gang_wait;
  std::map<std::string, std::vector<double>> jct;
  std::map<std::string, std::vector<double>> delay;
  std::map<std::string, int64_t> count;
  for (const auto& r : engine_->workloads()) {
    auto run = runs_.find(r.key());
    std::string queue = engine_->QueueOf(r.key()).cluster_queue;
    if (!queue.empty()) {
      count[queue]++;
      if (r.phase == engine::Phase::kSucceeded && r.finish_time && r.submit_time) {
        jct[queue].push_back(*r.finish_time - *r.submit_time);
      }
      if (r.first_admit_time && r.submit_time) {
        delay[queue].push_back(*r.first_admit_time - *r.submit_time);
      }
    }
    if (run == runs_.end()) continue;
    cpu_seconds += run->second.cpu_milli_seconds_used / 1000.0;
    if (r.phase == engine::Phase::kRunning) {
      cpu_seconds += std::max(0.0, end_time_ - run->second.size_start) *
                     static_cast<double>(run->second.cpu_milli) / 1000.0;
    }
    int64_t pods = 0;
    for (const auto& ps : r.workload.pod_sets) pods += ps.count;
    if (pods > 1 && run->second.first_start && r.submit_time) {
      gang_wait.push_back(*run->second.first_start - *r.submit_time);
    }
  }
  double cpu_capacity = static_cast<double>(cluster_cpu_milli_) / 1000.0 * end_time_;
  s.cpu_utilization = cpu_capacity > 0 ? cpu_seconds / cpu_capacity : 0;
  s.gang_wait = ComputeStats(std::move(gang_wait));
  s.multi_pod_gangs = usage_.multi_pod_starts;
  if (any_rack_ && usage_.multi_pod_starts > 0) {
    s.gangs_within_one_rack = static_cast<double>(usage_.multi_pod_one_rack) /
                              static_cast<double>(usage_.multi_pod_starts);
  }
  if (usage_.gpu_pods_one_numa > 0) {
    s.pods_within_one_numa =
        static_cast<double>(usage_.gpu_pods_one_numa) / static_cast<double>(usage_.gpu_pods);
  }
  s.fragmented_gpus = FragmentedGpus();

  // Series end at the end time so the last step is drawn to the edge.
  out.gpu_utilization = usage_.gpu_series;
  out.cpu_utilization = usage_.cpu_series;
  for (auto* series : {&out.gpu_utilization, &out.cpu_utilization}) {
    if (!series->empty() && series->back().time < end_time_) {
      series->push_back({end_time_, series->back().value});
    }
  }
  std::set<std::string> names;
  for (const auto& [q, n] : count) names.insert(q);
  for (const auto& [q, quota] : queue_gpu_quota_) names.insert(q);
  for (const std::string& name : names) {
    QueueResult q;
    q.name = name;
    auto c = count.find(name);
    q.workloads = c == count.end() ? 0 : c->second;
    q.jct = ComputeStats(jct[name]);
    q.queueing_delay = ComputeStats(delay[name]);
    auto quota = queue_gpu_quota_.find(name);
    if (quota != queue_gpu_quota_.end()) q.gpu_quota = quota->second;
    auto series = usage_.queue_series.find(name);
    if (series != usage_.queue_series.end()) q.gpu_usage = series->second;
    if (q.gpu_usage.empty() || q.gpu_usage.front().time > 0) {
      q.gpu_usage.insert(q.gpu_usage.begin(), SeriesPoint{0, 0});
    }
    if (q.gpu_usage.back().time < end_time_) {
      q.gpu_usage.push_back({end_time_, q.gpu_usage.back().value});
    }
    out.queues.push_back(std::move(q));
  }
}

}  // namespace muster::sim
