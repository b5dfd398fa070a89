// Admission throughput: one cycle over 1,000 ClusterQueues in 100 cohorts with
// 50,000 pending workloads, and quota checks up a deep cohort chain.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "admission/admission.h"
#include "admission/quota_tree.h"
#include "model/manifest_set.h"

namespace muster::admission {
namespace {

class AlwaysFits : public PlacementOracle {
 public:
  Check CanPlace(const model::Workload&, const Assignment&, const std::vector<std::string>&) override {
    return {true, "", ""};
  }
  std::optional<std::vector<std::string>> PhysicalVictims(const model::Workload&, const Assignment&,
                                                          const std::vector<std::string>&) override {
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

void BM_CycleWithPending(benchmark::State& state) {
  const int queues = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  model::ManifestSet m = Cluster(queues, queues / 10 > 0 ? queues / 10 : 1);
  for (auto _ : state) {
    state.PauseTiming();
    auto admitter = std::move(MakeAdmitter(m)).value();
    for (int w = 0; w < workloads; ++w) {
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
      admitter->Enqueue(wl, 0);
    }
    AlwaysFits oracle;
    state.ResumeTiming();
    auto decisions = admitter->RunCycle(0, oracle);
    benchmark::DoNotOptimize(decisions);
  }
  state.SetItemsProcessed(state.iterations() * workloads);
}
BENCHMARK(BM_CycleWithPending)->Args({100, 5000})->Args({1000, 50000})->Unit(benchmark::kMillisecond);

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
