// Admission throughput: one cycle over 1,000 ClusterQueues in 100 cohorts with
// 50,000 pending workloads (admissions/s), steady-state cycles where some admitted
// workloads finish between cycles (cycle latency p50/p99), and quota checks up a
// deep cohort chain.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "admission/admission.h"
#include "admission/quota_tree.h"
#include "model/manifest_set.h"

namespace muster::admission {
namespace {

class AlwaysFits : public PlacementOracle {
 public:
  Check CanPlace(const model::Workload&, const Assignment&,
                 const std::vector<std::string>&) override {
    return {true, "", ""};
  }
  std::optional<std::vector<std::string>> PhysicalVictims(
      const model::Workload&, const Assignment&, const std::vector<std::string>&) override {
    return std::nullopt;
  }
  void Commit(const model::Workload&, const Assignment&) override {}
};

model::ManifestSet Cluster(int queues, int cohorts) {
  model::ManifestSet m;
  model::ResourceFlavor rf;
  rf.meta.name = "default";
  m.resource_flavors.push_back(rf);
  for (int i = 0; i < queues; ++i) {
    model::ClusterQueue cq;
    cq.meta.name = "cq-" + std::to_string(i);
    cq.cohort = "cohort-" + std::to_string(i % cohorts);
    cq.namespace_selector = model::LabelSelector{};
    cq.preemption.reclaim_within_cohort = model::PreemptionPolicy::kAny;
    model::FlavorQuotas fq;
    fq.name = "default";
    fq.resources.push_back({"cpu", Quantity::FromInt(32), std::nullopt, std::nullopt});
    fq.resources.push_back({"nvidia.com/gpu", Quantity::FromInt(8), std::nullopt, std::nullopt});
    cq.resource_groups.push_back({{"cpu", "nvidia.com/gpu"}, {fq}});
    m.cluster_queues.push_back(cq);
    model::LocalQueue lq;
    lq.meta.name = "lq";
    lq.meta.namespace_ = "ns-" + std::to_string(i);
    lq.cluster_queue = cq.meta.name;
    m.local_queues.push_back(lq);
  }
  return m;
}

model::Workload Pending(int w, int queues) {
  model::Workload wl;
  int q = w % queues;
  wl.meta.namespace_ = "ns-" + std::to_string(q);
  wl.meta.name = "w-" + std::to_string(w);
  wl.meta.order = w;
  wl.key = wl.meta.namespace_ + "/" + wl.meta.name;
  wl.local_queue = "lq";
  wl.priority = w % 7;
  model::PodSet ps;
  ps.name = "main";
  ps.count = 1 + w % 2;
  ps.requests.Set(kCpu, 1000);
  ps.requests.Set(kNvidiaGpu, 1);
  wl.pod_sets.push_back(ps);
  return wl;
}

void BM_CycleWithPending(benchmark::State& state) {
  const int queues = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  model::ManifestSet m = Cluster(queues, queues / 10 > 0 ? queues / 10 : 1);
  int64_t admitted = 0;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto admitter = std::move(MakeAdmitter(m)).value();
    for (int w = 0; w < workloads; ++w) admitter->Enqueue(Pending(w, queues), 0);
    AlwaysFits oracle;
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    auto decisions = admitter->RunCycle(0, oracle);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& d : decisions) admitted += d.kind == Decision::Kind::kAdmit;
    benchmark::DoNotOptimize(decisions);
  }
  state.SetItemsProcessed(state.iterations() * workloads);
  state.counters["admitted"] =
      static_cast<double>(admitted) / static_cast<double>(state.iterations());
  state.counters["admissions/s"] = seconds > 0 ? static_cast<double>(admitted) / seconds : 0;
}
BENCHMARK(BM_CycleWithPending)
    ->Args({100, 5000})
    ->Args({1000, 50000})
    ->Unit(benchmark::kMillisecond);

// Steady state after the first cycle: between cycles the engine finishes some
// admitted workloads (freeing quota in their cohorts) and applies preemptions; each
// cycle's latency is recorded. Parked workloads must not be rescanned unless their
// cohort freed quota.
void BM_SteadyStateCycles(benchmark::State& state) {
  const int queues = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  const int cycles = 50;
  model::ManifestSet m = Cluster(queues, queues / 10 > 0 ? queues / 10 : 1);
  std::vector<double> latencies;
  int64_t admitted = 0;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto admitter = std::move(MakeAdmitter(m)).value();
    for (int w = 0; w < workloads; ++w) admitter->Enqueue(Pending(w, queues), 0);
    AlwaysFits oracle;
    std::vector<std::string> running;
    auto apply = [&](const std::vector<Decision>& decisions, Time now) {
      for (const auto& d : decisions) {
        if (d.kind == Decision::Kind::kAdmit) {
          running.push_back(d.workload_key);
        } else if (d.kind == Decision::Kind::kPreempt) {
          for (const auto& v : d.victims) {
            admitter->Requeue(v.workload_key, now);
            running.erase(std::remove(running.begin(), running.end(), v.workload_key),
                          running.end());
          }
        }
      }
    };
    apply(admitter->RunCycle(0, oracle), 0);  // the initial fill is BM_CycleWithPending
    state.ResumeTiming();
    for (int c = 1; c <= cycles; ++c) {
      state.PauseTiming();
      // A deterministic slice of the running workloads finishes.
      std::vector<std::string> keep;
      for (size_t i = 0; i < running.size(); ++i) {
        if ((i + static_cast<size_t>(c)) % 7 == 0) {
          admitter->Remove(running[i]);
        } else {
          keep.push_back(running[i]);
        }
      }
      running.swap(keep);
      state.ResumeTiming();
      auto start = std::chrono::steady_clock::now();
      auto decisions = admitter->RunCycle(c, oracle);
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      latencies.push_back(dt);
      seconds += dt;
      state.PauseTiming();
      for (const auto& d : decisions) admitted += d.kind == Decision::Kind::kAdmit;
      apply(decisions, c);
      state.ResumeTiming();
    }
  }
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    if (latencies.empty()) return 0.0;
    size_t i = std::min(latencies.size() - 1,
                        static_cast<size_t>(p * static_cast<double>(latencies.size())));
    return latencies[i] * 1e3;
  };
  state.counters["cycle_p50_ms"] = pct(0.50);
  state.counters["cycle_p99_ms"] = pct(0.99);
  state.counters["admissions/s"] = seconds > 0 ? static_cast<double>(admitted) / seconds : 0;
}
BENCHMARK(BM_SteadyStateCycles)->Args({1000, 50000})->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_DeepCohortAvailable(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  QuotaTree tree;
  FrId gpu = tree.InternFr(0, kNvidiaGpu);
  NodeId parent = -1, leaf = -1;
  for (int i = 0; i < depth; ++i) {
    NodeId n = tree.AddNode("n" + std::to_string(i), i == depth - 1);
    if (parent >= 0) tree.SetParent(n, parent);
    tree.SetQuota(n, gpu, {8, 16, 4});
    parent = leaf = n;
  }
  tree.Finalize();
  for (auto _ : state) {
    tree.AddUsage(leaf, gpu, 3);
    benchmark::DoNotOptimize(tree.Available(leaf, gpu));
    tree.RemoveUsage(leaf, gpu, 3);
  }
}
BENCHMARK(BM_DeepCohortAvailable)->Arg(4)->Arg(16)->Arg(64);

}  // namespace
}  // namespace muster::admission
