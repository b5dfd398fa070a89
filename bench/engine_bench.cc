// Engine bookkeeping as a long-running server uses it: N workloads added and
// submitted, then every one deleted, oldest first (a server deleting its jobs in the
// order it created them). The time per workload should not grow with N.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/engine.h"
#include "model/manifest_set.h"
#include "sim/event_queue.h"

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

}  // namespace
}  // namespace muster
