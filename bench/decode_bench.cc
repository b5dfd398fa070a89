// Decoding throughput: a generated 10,000-node cluster (ARCHITECTURE: large
// clusters are normal), text built in-process so the benchmark needs no files.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
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

// One API create's validation: a queued Indexed Job as JSON, without (0) and with (1)
// the unread-field warnings the API asks for.
void BM_DecodeJobObject(benchmark::State& state) {
  const nlohmann::json job = nlohmann::json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "default",
                 "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
    "spec": {"completions": 8, "parallelism": 8, "completionMode": "Indexed",
      "template": {"metadata": {"labels": {"app": "train"}},
        "spec": {"restartPolicy": "Never", "subdomain": "train",
          "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "true"],
            "env": [{"name": "A", "value": "1"}],
            "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"},
                          "limits": {"nvidia.com/gpu": "1"}}}]}}}})");
  for (auto _ : state) {
    muster::api::DecodeResult result;
    result.warn_unread_fields = state.range(0) != 0;
    muster::api::DecodeObject(job, "request", result);
    benchmark::DoNotOptimize(result.manifests.jobs.data());
    if (result.manifests.jobs.size() != 1) state.SkipWithError("the Job was not decoded");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeJobObject)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
