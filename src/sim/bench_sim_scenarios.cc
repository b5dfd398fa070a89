// The virtual-time scenarios of `muster bench`: Kueue's baseline performance test
// re-expressed for the simulator, and the full Philly trace replay.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/resource_name.h"
#include "sim/bench_decisions.h"
#include "sim/bench_scenarios.h"
#include "sim/simulator.h"
#include "sim/trace_philly.h"

namespace muster::sim::bench_internal {
namespace {

// kubernetes-sigs/kueue test/performance/scheduler/configs/baseline/generator.yaml:
// per ClusterQueue three workload sets created concurrently, each a sequence of
// `count` workloads spaced `interval` apart (the first after one interval), each
// running `runtime` once admitted.
struct KueueClass {
  const char* name;
  int count;
  double interval;  // seconds
  double runtime;   // seconds
  int32_t priority;
  int64_t cpu;              // cores
  double published_mean_s;  // Kueue's published average time to admission
};
constexpr KueueClass kKueueClasses[] = {
    {"small", 350, 0.1, 0.2, 50, 1, 215.5},
    {"medium", 100, 0.5, 0.5, 100, 5, 76.8},
    {"large", 50, 1.2, 1.0, 200, 20, 16.5},
};
constexpr double kKueuePublishedUsage = 55.9;  // % of ClusterQueue nominal quota
constexpr double kKueuePublishedWallSeconds = 351.1;

std::string Name(const char* prefix, int i) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%02d", prefix, i);
  return buf;
}

struct TimedRun {
  SimulationResult result;
  int64_t cycles = 0;  // engine cycles the run took
};

// Builds the simulator (counted as setup) and runs it, timing the run alone.
Result<TimedRun> RunTimed(const model::ManifestSet& m, std::vector<model::Workload> workloads,
                          const Stopwatch& setup, BenchResult& r, std::string* decisions) {
  auto sim = Simulator::Create(m, std::move(workloads), SimOptions{});
  if (!sim.ok()) return sim.status();
  r.setup_seconds = setup.WallSeconds();
  Stopwatch sw;
  Status s = (*sim)->Run();
  if (!s.ok()) return s;
  r.wall_seconds = sw.WallSeconds();
  r.cpu_seconds = sw.CpuSeconds();
  if (decisions != nullptr) AppendEngineDecisions((*sim)->engine(), *decisions);
  return TimedRun{(*sim)->BuildResult(), static_cast<int64_t>((*sim)->engine().cycles())};
}

}  // namespace

Result<BenchResult> KueueBaseline(const BenchOptions& options) {
  BenchResult r;
  r.scenario = "kueue-baseline";
  r.unit = "workloads";
  r.path = "simulator";
  Stopwatch setup;
  // Scale multiplies the cohorts (5 at 1x); fractions keep one cohort and thin
  // the workload sets instead, for tests.
  const int cohorts = static_cast<int>(Scaled(5, options.scale >= 1 ? options.scale : 0.2));
  const double thin = options.scale >= 1 ? 1 : options.scale * 5;
  const int cqs_per_cohort = 6;
  const int cqs = cohorts * cqs_per_cohort;
  model::ManifestSet m;
  model::ResourceFlavor rf;
  rf.meta.name = "default";
  m.resource_flavors.push_back(rf);
  for (int q = 0; q < cqs; ++q) {
    model::ClusterQueue cq;
    cq.meta.name = Name("cq-", q);
    cq.cohort = Name("cohort-", q / cqs_per_cohort);
    cq.namespace_selector = model::LabelSelector{};
    cq.preemption.reclaim_within_cohort = model::PreemptionPolicy::kAny;
    cq.preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
    model::FlavorQuotas fq;
    fq.name = "default";
    fq.resources.push_back({"cpu", Quantity::FromInt(20), Quantity::FromInt(100), std::nullopt});
    cq.resource_groups.push_back({{"cpu"}, {fq}});
    m.cluster_queues.push_back(cq);
    model::LocalQueue lq;
    lq.meta.name = "lq";
    lq.meta.namespace_ = Name("ns-", q);
    lq.cluster_queue = cq.meta.name;
    m.local_queues.push_back(lq);
  }
  // Kueue's test runs quota-only (no nodes); here admission also places, so the
  // nodes hold twice the total nominal quota and never bind first.
  const int nodes = cqs * 20 * 2 / 64 + 1;
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.meta.name = Name("node-", i);
    n.meta.labels["kubernetes.io/hostname"] = n.meta.name;
    n.allocatable.Set(kCpu, 64000);
    n.allocatable.Set(kMemory, int64_t{256} << 30);
    n.allocatable.Set(kPods, 1000);
    m.nodes.push_back(n);
  }
  std::vector<model::Workload> workloads;
  int64_t order = 0;
  for (int q = 0; q < cqs; ++q) {
    for (int c = 0; c < 3; ++c) {
      const KueueClass& k = kKueueClasses[c];
      int count = static_cast<int>(Scaled(k.count, thin));
      for (int i = 0; i < count; ++i) {
        model::Workload w;
        w.meta.kind = "Workload";
        w.meta.namespace_ = Name("ns-", q);
        w.meta.name = std::string(k.name) + "-" + std::to_string(i);
        w.meta.order = order++;
        w.key = w.meta.namespace_ + "/" + w.meta.name;
        w.local_queue = "lq";
        w.priority = k.priority;
        w.sim.submit_at = (i + 1) * k.interval;
        w.sim.duration = k.runtime;
        model::PodSet ps;
        ps.name = "main";
        ps.requests.Set(kCpu, k.cpu * 1000);
        w.pod_sets.push_back(ps);
        w.min_available = 1;
        workloads.push_back(std::move(w));
      }
    }
  }
  const int64_t total = static_cast<int64_t>(workloads.size());
  r.size = std::to_string(cohorts) + " cohorts x 6 ClusterQueues, " + std::to_string(total) +
           " workloads";
  auto run = RunTimed(m, std::move(workloads), setup, r, options.decisions);
  if (!run.ok()) return run.status();
  const SimulationResult& result = run->result;
  std::map<std::string, std::pair<double, int64_t>> wait;  // class -> (sum, n)
  double cpu_seconds_used = 0;
  double first_submit = -1, last_finish = 0;
  int64_t admitted = 0;
  for (const auto& w : result.workloads) {
    std::string name = w.name.substr(w.name.find('/') + 1);
    std::string cls = name.substr(0, name.find('-'));
    if (w.submit_time && (first_submit < 0 || *w.submit_time < first_submit))
      first_submit = *w.submit_time;
    if (!w.admit_time || !w.submit_time) continue;
    ++admitted;
    wait[cls].first += *w.admit_time - *w.submit_time;
    wait[cls].second += 1;
    for (const auto& k : kKueueClasses) {
      if (cls == k.name) cpu_seconds_used += static_cast<double>(k.cpu) * k.runtime;
    }
    if (w.finish_time) last_finish = std::max(last_finish, *w.finish_time);
  }
  r.work = admitted;
  r.throughput = r.wall_seconds > 0 ? static_cast<double>(admitted) / r.wall_seconds : 0;
  for (const auto& k : kKueueClasses) {
    const auto& [sum, n] = wait[k.name];
    r.details.push_back(
        {std::string("avg_admission_s_") + k.name, n > 0 ? sum / static_cast<double>(n) : 0});
    r.details.push_back({std::string("kueue_avg_admission_s_") + k.name, k.published_mean_s});
  }
  // Usage as the share of the total nominal quota busy over the run (first
  // submission to last completion), Kueue's ClusterQueue usage averaged over queues.
  double span = last_finish - std::max(0.0, first_submit);
  double usage = span > 0 ? 100 * cpu_seconds_used / (20.0 * cqs * span) : 0;
  r.details.push_back({"usage_pct", usage});
  r.details.push_back({"kueue_usage_pct", kKueuePublishedUsage});
  r.details.push_back({"virtual_makespan_s", last_finish});
  r.details.push_back({"kueue_wall_s", kKueuePublishedWallSeconds});
  r.details.push_back({"muster_cpu_s", r.cpu_seconds});
  return r;
}

Result<BenchResult> SimPhilly(const BenchOptions& options) {
  BenchResult r;
  r.scenario = "sim-philly";
  r.unit = "events";
  r.path = "simulator";
  Stopwatch setup;
  std::string path = options.shared_dir + "/traces/philly/philly_jobs.csv";
  auto reader = OpenPhillyTrace(path);
  if (!reader.ok()) return reader.status();
  const TraceCluster& tc = (*reader)->cluster();
  model::ManifestSet m = tc.queues;
  m.nodes = tc.nodes;
  // The trace has one size: scales above 1 replay it once (noted); fractions take
  // its first jobs (tests).
  int64_t limit = (*reader)->size();
  if (options.scale < 1) limit = Scaled(limit, options.scale);
  if (options.scale > 1) r.note = "the trace has one size; replayed at 1x";
  std::vector<model::Workload> workloads;
  while (static_cast<int64_t>(workloads.size()) < limit) {
    auto w = (*reader)->Next();
    if (!w) break;
    workloads.push_back(std::move(*w));
  }
  const int64_t jobs = static_cast<int64_t>(workloads.size());
  r.size = std::to_string(m.nodes.size()) + " nodes, " + std::to_string(jobs) + " jobs";
  auto run = RunTimed(m, std::move(workloads), setup, r, options.decisions);
  if (!run.ok()) return run.status();
  const SimulationResult& result = run->result;
  // Events: every submission, every start and every end (success, failure,
  // eviction), the state changes the loop processed.
  int64_t events = 0;
  for (const auto& w : result.workloads) {
    events += w.submit_time.has_value();
    events += w.start_time.has_value();
    events += w.finish_time.has_value();
    events += 2 * static_cast<int64_t>(w.evictions.size());
  }
  r.work = events;
  r.throughput = r.wall_seconds > 0 ? static_cast<double>(events) / r.wall_seconds : 0;
  r.details.push_back({"jobs", static_cast<double>(jobs)});
  r.details.push_back({"succeeded", static_cast<double>(result.summary.succeeded)});
  r.details.push_back({"cycles", static_cast<double>(run->cycles)});
  r.details.push_back({"virtual_days", result.end_time / 86400});
  return r;
}

}  // namespace muster::sim::bench_internal
