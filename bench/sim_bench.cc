// Simulation throughput: a synthetic cluster (nodes x 8 GPUs, one ClusterQueue)
// and a seeded stream of gang jobs (1-8 pods, 1-8 GPUs each, random durations and
// arrivals). Parameterised by nodes x jobs so growth with size is visible; the
// counters report simulated jobs per second and scheduling cycles.
#include <benchmark/benchmark.h>

#include <string>

#include "core/clock.h"
#include "core/quantity.h"
#include "model/manifest_set.h"
#include "sim/simulator.h"

namespace muster {
namespace {

model::QuantityMap Q(std::initializer_list<std::pair<const char*, std::string>> named) {
  model::QuantityMap out;
  for (const auto& [k, v] : named) out[k] = Quantity::Parse(v).value();
  return out;
}

model::ManifestSet MakeCluster(int nodes, int jobs, uint64_t seed) {
  model::ManifestSet m;
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.meta.kind = "Node";
    n.meta.name = "node-" + std::to_string(i);
    n.meta.labels["kubernetes.io/hostname"] = n.meta.name;
    n.meta.labels["example.com/rack"] = "rack-" + std::to_string(i / 16);
    n.allocatable = ResourceList::FromQuantities(
        Q({{"cpu", "128"}, {"memory", "1Ti"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}));
    m.nodes.push_back(std::move(n));
  }
  model::ResourceFlavor flavor;
  flavor.meta.name = "gpu";
  m.resource_flavors.push_back(flavor);
  model::ClusterQueue cq;
  cq.meta.name = "cq";
  cq.namespace_selector = model::LabelSelector{};
  model::ResourceGroup rg;
  rg.covered_resources = {"cpu", "nvidia.com/gpu"};
  model::FlavorQuotas fq;
  fq.name = "gpu";
  fq.resources.push_back({"cpu", Quantity::FromInt(128LL * nodes), std::nullopt, std::nullopt});
  fq.resources.push_back(
      {"nvidia.com/gpu", Quantity::FromInt(8LL * nodes), std::nullopt, std::nullopt});
  rg.flavors.push_back(fq);
  cq.resource_groups.push_back(rg);
  m.cluster_queues.push_back(cq);
  model::LocalQueue lq;
  lq.meta.name = "lq";
  lq.meta.namespace_ = "bench";
  lq.cluster_queue = "cq";
  m.local_queues.push_back(lq);

  Rng rng(seed);
  double t = 0;
  for (int j = 0; j < jobs; ++j) {
    model::BatchJob job;
    job.meta.api_version = "batch/v1";
    job.meta.kind = "Job";
    job.meta.name = "job-" + std::to_string(j);
    job.meta.namespace_ = "bench";
    job.meta.order = j;
    job.meta.labels["kueue.x-k8s.io/queue-name"] = "lq";
    t += static_cast<double>(rng.Uniform(60));
    job.meta.annotations["sim.muster.dev/submit-at"] = std::to_string(static_cast<int>(t));
    job.meta.annotations["sim.muster.dev/duration"] =
        std::to_string(300 + static_cast<int>(rng.Uniform(3600)));
    int pods = 1 + static_cast<int>(rng.Uniform(8));
    int gpus = 1 << rng.Uniform(4);  // 1, 2, 4, 8
    job.spec.parallelism = pods;
    job.spec.completions = pods;
    model::Container c;
    c.name = "trainer";
    c.requests = Q({{"cpu", "8"}, {"nvidia.com/gpu", std::to_string(gpus)}});
    job.spec.tmpl.spec.containers.push_back(c);
    m.jobs.emplace_back(std::move(job));
  }
  return m;
}

void BM_Simulate(benchmark::State& state) {
  model::ManifestSet m =
      MakeCluster(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), /*seed=*/42);
  int64_t cycles = 0;
  for (auto _ : state) {
    auto sim = sim::Simulator::Create(m, {});
    if (!sim.ok()) {
      state.SkipWithError(sim.status().ToString().c_str());
      return;
    }
    Status st = (*sim)->Run();
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
    cycles = (*sim)->engine().cycles();
    benchmark::DoNotOptimize((*sim)->BuildResult());
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(state.range(1)),
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["cycles"] = static_cast<double>(cycles);
}

BENCHMARK(BM_Simulate)
    ->ArgNames({"nodes", "jobs"})
    ->Args({16, 100})
    ->Args({64, 1000})
    ->Args({256, 1000})
    ->Args({1024, 5000})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace muster
