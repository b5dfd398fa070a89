// Engine bookkeeping as a long-running server uses it:
// - AddSubmitDeleteAll: N workloads added and submitted, then every one deleted,
//   oldest first (a server deleting its jobs in the order it created them). The time
//   per workload should not grow with N.
// - ReconfigureRunning: what a configuration change (a node relabelled, a queue's
//   quota edited) costs a server today: Engine::Reconfigured rebuilds admission and
//   placement and carries every workload over (running gangs re-adopted in memory).
//   Its cost grows with what runs, which is what an incremental path would remove.
// - ReadmitRunning: the same for a queue-only change (Engine::Readmitted: admission
//   rebuilt, placement kept); the other *Running benchmarks are in-place edits.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "admission/admission.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "engine/engine.h"
#include "model/manifest_set.h"
#include "sim/event_queue.h"
#include "sim/generator.h"

namespace muster {
namespace {

model::Workload OnePodWorkload(int i) {
  model::Workload w;
  w.key = "bench/job-" + std::to_string(1000000 + i);
  w.meta.name = "job-" + std::to_string(1000000 + i);
  w.meta.namespace_ = "bench";
  w.meta.order = i;
  model::PodSet ps;
  ps.name = "main";
  ps.count = 1;
  w.pod_sets.push_back(ps);
  return w;
}

void BM_AddSubmitDeleteAll(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<model::Workload> workloads;
  workloads.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) workloads.push_back(OnePodWorkload(i));
  model::ManifestSet m;
  sim::SimClock clock;
  for (auto _ : state) {
    state.PauseTiming();
    auto parts = engine::BuildEngineParts(m);
    if (!parts.ok()) {
      state.SkipWithError(parts.status().ToString().c_str());
      return;
    }
    engine::Engine eng(m, {}, std::move(parts).value(), clock, {});
    std::vector<model::Workload> batch = workloads;
    state.ResumeTiming();
    for (auto& w : batch) {
      std::string key = w.key;
      if (!eng.AddWorkload(std::move(w)).ok() || !eng.Submit(key).ok()) {
        state.SkipWithError("add or submit failed");
        return;
      }
    }
    for (const auto& w : workloads) {
      if (!eng.RemoveWorkload(w.key).ok()) {
        state.SkipWithError("remove failed");
        return;
      }
    }
  }
  state.counters["workloads/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_AddSubmitDeleteAll)
    ->ArgName("workloads")
    ->Arg(10000)
    ->Arg(40000)
    ->Unit(benchmark::kMillisecond);

// A cluster of `nodes` 8-GPU nodes in ClusterQueues of 10 nodes' quota (cohorts of
// 10 queues), every GPU taken by one-GPU workloads and as many again pending.
struct FullCluster {
  model::ManifestSet manifests;
  sim::SimClock clock;
  std::unique_ptr<engine::Engine> engine;
  int64_t running = 0;
  int64_t total = 0;

  std::map<std::string, const model::NodeTopology*> numa_by_node;

  // The node's NodeResourceTopology (the generated nodes have NUMA zones), or null.
  const model::NodeTopology* Numa(const std::string& node) const {
    auto it = numa_by_node.find(node);
    return it == numa_by_node.end() ? nullptr : it->second;
  }
};

// Null (with the state skipped) when the cluster cannot be built or filled.
std::unique_ptr<FullCluster> MakeFullCluster(benchmark::State& state, int32_t nodes) {
  auto out = std::make_unique<FullCluster>();
  sim::ClusterSpec cs;
  cs.nodes = nodes;
  cs.cluster_queues = cs.nodes / 10;
  cs.cohorts = cs.cluster_queues / 10;
  out->manifests = sim::GenerateCluster(cs);
  for (const auto& t : out->manifests.node_topologies) out->numa_by_node[t.meta.name] = &t;
  out->total = 2LL * 8 * cs.nodes;
  std::vector<model::Workload> workloads;
  std::vector<std::string> keys;
  for (int64_t i = 0; i < out->total; ++i) {
    sim::JobPlan p;
    p.name = "wl-" + std::to_string(1000000 + i);
    char ns[32];
    std::snprintf(ns, sizeof(ns), "team-%04lld", static_cast<long long>(i % cs.cluster_queues));
    p.namespace_ = ns;
    p.local_queue = "lq";
    p.pods = 1;
    p.gpus_per_pod = 1;
    p.cpu_milli_per_pod = 4000;
    p.memory_gi_per_pod = 32;
    workloads.push_back(sim::PlanToWorkload(p, i));
    keys.push_back(workloads.back().key);
  }
  auto parts = engine::BuildEngineParts(out->manifests);
  if (!parts.ok()) {
    state.SkipWithError(parts.status().ToString().c_str());
    return nullptr;
  }
  out->engine = std::make_unique<engine::Engine>(out->manifests, std::move(workloads),
                                                 std::move(parts).value(), out->clock,
                                                 engine::EngineOptions{});
  for (const auto& k : keys) {
    if (!out->engine->Submit(k).ok()) {
      state.SkipWithError("submit failed");
      return nullptr;
    }
  }
  if (!out->engine->RunCycle().ok()) {
    state.SkipWithError("cycle failed");
    return nullptr;
  }
  for (const auto& r : out->engine->workloads()) out->running += r.phase == engine::Phase::kRunning;
  return out;
}

// Runs `rebuild(engine)` (returns the engine that replaces it) once per iteration on
// a full cluster; the cycle after it (every pending head looked at again) is not
// counted.
template <typename Rebuild>
void RunRebuilds(benchmark::State& state, Rebuild rebuild) {
  auto full = MakeFullCluster(state, static_cast<int32_t>(state.range(0)));
  if (full == nullptr) return;
  for (auto _ : state) {
    full->engine = rebuild(std::move(full->engine), full->manifests);
    state.PauseTiming();
    Status cycle = full->engine->RunCycle();
    state.ResumeTiming();
    if (!cycle.ok()) {
      state.SkipWithError("cycle failed");
      return;
    }
  }
  state.counters["running"] = static_cast<double>(full->running);
  state.counters["workloads"] = static_cast<double>(full->total);
}

// A configuration change with every GPU taken: the whole engine rebuilt in memory.
void BM_ReconfigureRunning(benchmark::State& state) {
  RunRebuilds(state, [](std::unique_ptr<engine::Engine> old, const model::ManifestSet& m) {
    return engine::Engine::Reconfigured(std::move(old), m, engine::BuildEngineParts(m).value());
  });
}

// Runs `edit_pair(full, i)` (two in-place edits, the second undoing the first) once
// per iteration on a full cluster; the cycle after each pair is not counted.
template <typename EditPair>
void RunEditPairs(benchmark::State& state, EditPair edit_pair) {
  auto full = MakeFullCluster(state, static_cast<int32_t>(state.range(0)));
  if (full == nullptr) return;
  size_t next = 0;
  for (auto _ : state) {
    Status edited = edit_pair(*full, next++);
    state.PauseTiming();
    Status cycle = full->engine->RunCycle();
    state.ResumeTiming();
    if (!edited.ok() || !cycle.ok()) {
      state.SkipWithError("update or cycle failed");
      return;
    }
  }
  state.counters["running"] = static_cast<double>(full->running);
  state.counters["edits/s"] = benchmark::Counter(2, benchmark::Counter::kIsIterationInvariantRate);
}

// The same cluster, its queue configuration changed in a way the quota tree cannot
// take in place (a ClusterQueue created, a flavor or preemption policy edited):
// Engine::Readmitted rebuilds admission only, every running gang keeps its bound
// plan in the same cluster state. Compare with ReconfigureRunning.
void BM_ReadmitRunning(benchmark::State& state) {
  RunRebuilds(state, [](std::unique_ptr<engine::Engine> old, const model::ManifestSet& m) {
    return engine::Engine::Readmitted(std::move(old), m, admission::MakeAdmitter(m).value());
  });
}

// The same cluster, one node cordoned in place (Engine::UpdateNode) and uncordoned
// again: what `kubectl cordon` costs where the whole engine was rebuilt before.
void BM_CordonNodeRunning(benchmark::State& state) {
  RunEditPairs(state, [](FullCluster& full, size_t i) {
    model::Node node = full.manifests.nodes[i % full.manifests.nodes.size()];
    node.unschedulable = true;
    const model::NodeTopology* numa = full.Numa(node.meta.name);
    Status cordon = full.engine->UpdateNode(node, numa);
    node.unschedulable = false;
    Status uncordon = full.engine->UpdateNode(node, numa);
    return cordon.ok() ? uncordon : cordon;
  });
}

// The same cluster, one ClusterQueue's quota raised in place (Engine::UpdateQuotas)
// and set back: what editing a quota costs where the whole engine was rebuilt before.
void BM_QuotaEditRunning(benchmark::State& state) {
  RunEditPairs(state, [](FullCluster& full, size_t i) {
    const model::ClusterQueue& cq =
        full.manifests.cluster_queues[i % full.manifests.cluster_queues.size()];
    std::vector<model::ResourceGroup> raised = cq.resource_groups;
    model::ResourceQuota& quota = raised.at(0).flavors.at(0).resources.at(0);
    quota.nominal_quota = Quantity::FromInt(quota.nominal_quota.Value() + 1);
    Status up = full.engine->UpdateQuotas(cq.meta.name, raised);
    Status back = full.engine->UpdateQuotas(cq.meta.name, cq.resource_groups);
    return up.ok() ? back : up;
  });
}

// The same cluster, one more node joining (Engine::AddNode: the cluster's indexes
// rebuilt with every pod kept): what a kubelet registering costs where the whole
// engine was rebuilt before. Each iteration adds a node (labelled like an existing
// one); the cycle after it, which fills it, is not counted.
void BM_AddNodeRunning(benchmark::State& state) {
  auto full = MakeFullCluster(state, static_cast<int32_t>(state.range(0)));
  if (full == nullptr) return;
  size_t next = 0;
  for (auto _ : state) {
    model::Node node = full->manifests.nodes[next % full->manifests.nodes.size()];
    node.meta.name = "added-" + std::to_string(1000000 + next++);
    node.meta.labels["kubernetes.io/hostname"] = node.meta.name;
    Status added = full->engine->AddNode(node, nullptr);
    state.PauseTiming();
    Status cycle = full->engine->RunCycle();
    state.ResumeTiming();
    if (!added.ok() || !cycle.ok()) {
      state.SkipWithError(added.ok() ? "cycle failed" : added.message().c_str());
      return;
    }
  }
  state.counters["running"] = static_cast<double>(full->running);
  state.counters["nodes"] = static_cast<double>(full->engine->cluster().NodeCount());
}

// The same cluster, one node's allocatable doubled in place and set back (a device
// plugin registering devices, a node resized): the cluster's indexes rebuilt around
// the node, its pods charged again, where the whole engine was rebuilt before.
void BM_ResizeNodeRunning(benchmark::State& state) {
  RunEditPairs(state, [](FullCluster& full, size_t i) {
    const model::Node& node = full.manifests.nodes[i % full.manifests.nodes.size()];
    model::Node bigger = node;
    bigger.allocatable = node.allocatable + node.allocatable;
    const model::NodeTopology* numa = full.Numa(node.meta.name);
    Status grow = full.engine->UpdateNode(bigger, numa);
    Status back = full.engine->UpdateNode(node, numa);
    return grow.ok() ? back : grow;
  });
}

// The same cluster, one node deleted (Engine::RemoveNode: the gangs on it evicted
// and requeued, the node left as a tombstone and the indexes rebuilt around it):
// what deleting a Node object costs where the whole engine was rebuilt before. The
// cycle after it (the evicted gangs looked at again) is not counted.
void BM_RemoveNodeRunning(benchmark::State& state) {
  auto full = MakeFullCluster(state, static_cast<int32_t>(state.range(0)));
  if (full == nullptr) return;
  size_t next = 0;
  for (auto _ : state) {
    const std::vector<model::Node>& nodes = full->manifests.nodes;
    if (next >= nodes.size()) {
      state.SkipWithError("every node removed");
      return;
    }
    Status removed = full->engine->RemoveNode(nodes[next++].meta.name);
    state.PauseTiming();
    Status cycle = full->engine->RunCycle();
    state.ResumeTiming();
    if (!removed.ok() || !cycle.ok()) {
      state.SkipWithError(removed.ok() ? "cycle failed" : removed.message().c_str());
      return;
    }
  }
  state.counters["running"] = static_cast<double>(full->running);
  state.counters["removed"] = static_cast<double>(full->engine->cluster().RemovedNodeCount());
}

BENCHMARK(BM_RemoveNodeRunning)
    ->ArgName("nodes")
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_ResizeNodeRunning)
    ->ArgName("nodes")
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_AddNodeRunning)->ArgName("nodes")->Arg(1000)->Arg(4000)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_QuotaEditRunning)
    ->ArgName("nodes")
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_CordonNodeRunning)
    ->ArgName("nodes")
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_ReconfigureRunning)
    ->ArgName("nodes")
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_ReadmitRunning)->ArgName("nodes")->Arg(1000)->Arg(4000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace muster
