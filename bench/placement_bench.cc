// Gang placement throughput on a large cluster: 10,000 nodes x 8 GPUs, two NUMA
// zones per node (best-effort), 100 racks in 10 blocks (a Kueue Topology).
// A stream of mixed workloads (1-GPU pods, 8-GPU pods, 64-pod rack-required gangs)
// is planned and committed; the oldest workloads are released to make room, so the
// cluster stays busy. Reports pods placed per second and the per-gang latency
// (plan + commit, evictions to make room excluded) at p50 and p99.
//
// The run length is fixed (about 100,000 pods on 10,000 nodes, the issue's
// benchmark) so that runs compare the same workload: throughput depends on how
// full the cluster is, and a time-based run length would change that.
//
// Built against the placement library alone (the muster_bench target links the
// whole CLI), from a build dir B configured with the default RelWithDebInfo:
//   g++ -std=c++20 -O2 -g -DNDEBUG -Isrc bench/placement_bench.cc -o placement_bench
//     B/libmuster_placement.a B/libmuster_workloads.a B/libmuster_model.a
//     B/libmuster_core.a -lbenchmark_main -lbenchmark -lfmt -lpthread   (one line)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "placement/placement.h"

namespace muster::placement {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

std::unique_ptr<ClusterState> BuildCluster(int nodes) {
  std::vector<model::Node> ns;
  std::vector<model::NodeTopology> numa;
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.meta.name = "node-" + std::to_string(100000 + i);
    int rack = i / 100;
    n.meta.labels = {{"kubernetes.io/hostname", n.meta.name},
                     {"example.com/gpu-product", "h100"},
                     {"example.com/rack", "rack-" + std::to_string(1000 + rack)},
                     {"example.com/block", "block-" + std::to_string(100 + rack / 10)}};
    n.allocatable.Set(kCpu, 128000);
    n.allocatable.Set(kMemory, 1024 * kGi);
    n.allocatable.Set(kNvidiaGpu, 8);
    n.allocatable.Set(kPods, 110);
    ns.push_back(n);
    model::NodeTopology t;
    t.meta.name = n.meta.name;
    // best-effort: 1- and 4-GPU pods align to a zone, 8-GPU pods span both.
    t.policy = model::TopologyManagerPolicy::kBestEffort;
    t.scope = model::TopologyManagerScope::kPod;
    for (int z = 0; z < 2; ++z) {
      model::NumaZone zone;
      zone.name = "node-" + std::to_string(z);
      zone.id = z;
      zone.allocatable.Set(kCpu, 64000);
      zone.allocatable.Set(kMemory, 512 * kGi);
      zone.allocatable.Set(kNvidiaGpu, 4);
      t.zones.push_back(zone);
    }
    numa.push_back(t);
  }
  model::Topology topo;
  topo.meta.name = "default";
  topo.levels = {"example.com/block", "example.com/rack", "kubernetes.io/hostname"};
  return std::move(BuildClusterState(ns, numa, {topo}, {})).value();
}

model::Workload MakeJob(int64_t seq) {
  model::Workload w;
  w.key = "bench/job-" + std::to_string(seq);
  model::PodSet ps;
  ps.name = "worker";
  switch (seq % 10) {
    case 9:  // 64-pod gang of 4-GPU pods in one rack
      ps.count = 64;
      ps.requests.Set(kNvidiaGpu, 4);
      ps.topology.mode = model::TopologyRequest::Mode::kRequired;
      ps.topology.level = "example.com/rack";
      break;
    case 7:
    case 8:  // 8-GPU pods: whole nodes (best-effort zones would split them, so
             // these nodes' policy allows it; see BuildCluster)
      ps.count = 1;
      ps.requests.Set(kNvidiaGpu, 8);
      break;
    default:
      ps.count = 1;
      ps.requests.Set(kNvidiaGpu, 1);
  }
  ps.requests.Set(kCpu, 8000);
  ps.requests.Set(kMemory, 64 * kGi);
  ps.min_count = ps.count;
  w.pod_sets.push_back(ps);
  w.min_available = ps.count;
  return w;
}

void BM_PlaceMixed(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  auto cluster = BuildCluster(nodes);
  model::SchedulerConfiguration cfg;
  auto planner = MakeGangPlanner(cfg);
  std::deque<model::Workload> running;
  int64_t seq = 0;
  int64_t pods = 0;
  int64_t failures = 0;
  std::vector<double> latency_us;
  latency_us.reserve(static_cast<size_t>(state.max_iterations));
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    model::Workload w = MakeJob(seq++);
    PlacementRequest req;
    req.workload = &w;
    Clock::time_point start = Clock::now();
    auto r = planner->Plan(*cluster, req);
    while (std::holds_alternative<PlacementFailure>(r) && !running.empty()) {
      ++failures;
      for (int k = 0; k < 8 && !running.empty(); ++k) {
        cluster->Release(running.front().key);
        running.pop_front();
      }
      start = Clock::now();
      r = planner->Plan(*cluster, req);
    }
    if (auto* plan = std::get_if<GangPlan>(&r)) {
      if (cluster->Commit(*plan, w).ok()) {
        pods += static_cast<int64_t>(plan->pods.size());
        running.push_back(std::move(w));
      }
    }
    latency_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(latency_us.begin(), latency_us.end());
  auto pct = [&](double q) {
    return latency_us.empty() ? 0.0 : latency_us[static_cast<size_t>(q * (latency_us.size() - 1))];
  };
  state.counters["gang_p50_us"] = pct(0.50);
  state.counters["gang_p99_us"] = pct(0.99);
  state.counters["gang_max_us"] = pct(1.0);
  state.counters["pods_per_s"] =
      benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kIsRate);
  state.counters["gangs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["evict_rounds"] = static_cast<double>(failures);
}
// 13,700 gangs of the 10-job mix (7 + 2 one-pod jobs and one 64-pod gang) are
// 100,010 pods.
BENCHMARK(BM_PlaceMixed)->Arg(1000)->Arg(10000)->Iterations(13700)->Unit(benchmark::kMicrosecond);

// A full cluster where one 1-GPU pod finishes and another arrives, over and over:
// the new pod's search must find the one free slot. With a flavor's node labels
// (range(1) = 1; every node carries them, as when one flavor covers the cluster) the
// candidates are narrowed through the label index; 0 searches the whole cluster.
// Reports the per-pod latency of plan + commit.
void BM_PlaceIntoFullCluster(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool narrowed = state.range(1) != 0;
  auto cluster = BuildCluster(nodes);
  auto planner = MakeGangPlanner(model::SchedulerConfiguration{});
  auto one_gpu = [](int64_t seq) {
    model::Workload w = MakeJob(seq * 10);  // seq % 10 == 0: one 1-GPU pod
    return w;
  };
  PodSetConstraints flavor;
  flavor.flavor_node_labels = {{"example.com/gpu-product", "h100"}};
  auto plan_and_commit = [&](model::Workload& w) {
    PlacementRequest req;
    req.workload = &w;
    if (narrowed) req.constraints = {flavor};
    auto r = planner->Plan(*cluster, req);
    auto* plan = std::get_if<GangPlan>(&r);
    return plan != nullptr && cluster->Commit(*plan, w).ok();
  };
  std::vector<model::Workload> running;
  int64_t seq = 0;
  for (;;) {  // fill it
    model::Workload w = one_gpu(seq++);
    if (!plan_and_commit(w)) break;
    running.push_back(std::move(w));
  }
  std::mt19937 rng(1);
  int64_t failed = 0;
  for (auto _ : state) {
    size_t victim = rng() % running.size();
    cluster->Release(running[victim].key);
    model::Workload w = one_gpu(seq++);
    if (plan_and_commit(w)) {
      running[victim] = std::move(w);
    } else {
      ++failed;
      state.SkipWithError("the freed slot was not found");
      break;
    }
  }
  state.counters["running"] = static_cast<double>(running.size());
  state.counters["failed"] = static_cast<double>(failed);
}
BENCHMARK(BM_PlaceIntoFullCluster)
    ->ArgNames({"nodes", "narrowed"})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace muster::placement
