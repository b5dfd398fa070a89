// Decoding throughput: a generated 10,000-node cluster (ARCHITECTURE: large
// clusters are normal), text built in-process so the benchmark needs no files.
#include <benchmark/benchmark.h>

#include <string>

#include "api/decode.h"

namespace {

std::string ClusterYaml(int nodes) {
  std::string text;
  text.reserve(static_cast<size_t>(nodes) * 400);
  for (int i = 0; i < nodes; ++i) {
    std::string name = "gpu-node-" + std::to_string(i);
    text += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
            "\n  labels:\n    kubernetes.io/hostname: " + name + "\n    example.com/rack: rack-" +
            std::to_string(i / 16) + "\n    example.com/block: block-" + std::to_string(i / 256) +
            "\nspec:\n  taints:\n  - {key: nvidia.com/gpu, effect: NoSchedule}\n"
            "status:\n  allocatable:\n    cpu: \"96\"\n    memory: 1536Gi\n"
            "    nvidia.com/gpu: \"8\"\n    pods: \"110\"\n";
  }
  return text;
}

void BM_DecodeCluster10k(benchmark::State& state) {
  const std::string text = ClusterYaml(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    muster::api::DecodeResult result;
    muster::api::DecodeText(text, "cluster.yaml", result);
    muster::api::ValidateCrossObject(result);
    benchmark::DoNotOptimize(result.manifests.nodes.data());
    if (result.manifests.nodes.size() != static_cast<size_t>(state.range(0))) {
      state.SkipWithError("nodes lost while decoding");
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DecodeCluster10k)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
