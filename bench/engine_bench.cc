// Engine bookkeeping as a long-running server uses it:
// - AddSubmitDeleteAll: N workloads added and submitted, then every one deleted,
//   oldest first (a server deleting its jobs in the order it created them). The time
//   per workload should not grow with N.
// - ReconfigureRunning: what a configuration change (a node relabelled, a queue's
//   quota edited) costs a server today: Engine::Reconfigured rebuilds admission and
//   placement and carries every workload over (running gangs re-adopted in memory).
//   Its cost grows with what runs, which is what an incremental path would remove.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
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
void BM_ReconfigureRunning(benchmark::State& state) {
  sim::ClusterSpec cs;
  cs.nodes = static_cast<int32_t>(state.range(0));
  cs.cluster_queues = cs.nodes / 10;
  cs.cohorts = cs.cluster_queues / 10;
  model::ManifestSet m = sim::GenerateCluster(cs);
  const int64_t total = 2LL * 8 * cs.nodes;
  std::vector<model::Workload> workloads;
  std::vector<std::string> keys;
  for (int64_t i = 0; i < total; ++i) {
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
  auto parts = engine::BuildEngineParts(m);
  if (!parts.ok()) {
    state.SkipWithError(parts.status().ToString().c_str());
    return;
  }
  sim::SimClock clock;
  auto eng = std::make_unique<engine::Engine>(m, std::move(workloads), std::move(parts).value(),
                                              clock, engine::EngineOptions{});
  for (const auto& k : keys) {
    if (!eng->Submit(k).ok()) {
      state.SkipWithError("submit failed");
      return;
    }
  }
  if (!eng->RunCycle().ok()) {
    state.SkipWithError("cycle failed");
    return;
  }
  int64_t running = 0;
  for (const auto& r : eng->workloads()) running += r.phase == engine::Phase::kRunning;
  for (auto _ : state) {
    auto fresh = engine::BuildEngineParts(m);
    eng = engine::Engine::Reconfigured(std::move(eng), m, std::move(fresh).value());
    // The cycle after it (every pending head looked at again) is not counted.
    state.PauseTiming();
    Status cycle = eng->RunCycle();
    state.ResumeTiming();
    if (!cycle.ok()) {
      state.SkipWithError("cycle failed");
      return;
    }
  }
  state.counters["running"] = static_cast<double>(running);
  state.counters["workloads"] = static_cast<double>(total);
}

BENCHMARK(BM_ReconfigureRunning)
    ->ArgName("nodes")
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace muster
