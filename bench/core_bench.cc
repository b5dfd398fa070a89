// Core micro-benchmarks: Quantity parsing over a realistic mix of manifest
// strings, and the ResourceList arithmetic on the scheduler's fit-check path.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/quantity.h"
#include "core/resource_list.h"

namespace muster {
namespace {

// The spellings seen in pod specs and node capacities, plus a few slow-path ones.
const std::vector<std::string>& QuantityMix() {
  static const std::vector<std::string> kMix = {
      "100m", "500m", "1",     "2",      "4",    "32",        "1.5",   "250m",
      "1Gi",  "16Gi", "1.5Gi", "512Mi",  "64Ki", "100M",      "1e3",   "110",
      "8",    "1Ti",  "0.5",   "3.001n", "7Ei",  "123456789", "1.1Ki", "0.000000000001Ki",
  };
  return kMix;
}

void BM_QuantityParse(benchmark::State& state) {
  const auto& mix = QuantityMix();
  size_t i = 0;
  for (auto _ : state) {
    auto q = Quantity::Parse(mix[i]);
    benchmark::DoNotOptimize(q);
    if (++i == mix.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuantityParse);

void BM_QuantityToString(benchmark::State& state) {
  std::vector<Quantity> qs;
  for (const auto& s : QuantityMix()) {
    // Round-trip through an int so ToString computes the canonical form.
    Quantity q = *Quantity::Parse(s);
    qs.push_back(Quantity::FromMilli(q.MilliValue(), q.format()));
  }
  size_t i = 0;
  for (auto _ : state) {
    std::string s = qs[i].ToString();
    benchmark::DoNotOptimize(s);
    if (++i == qs.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuantityToString);

ResourceList MakeList(int64_t scale) {
  ResourceList r;
  r.Set(kCpu, 4000 * scale);
  r.Set(kMemory, (int64_t{16} << 30) * scale);
  r.Set(kPods, 10 * scale);
  r.Set(kNvidiaGpu, 1 * scale);
  r.Set(kEphemeralStorage, (int64_t{100} << 30) * scale);
  return r;
}

void BM_ResourceListAdd(benchmark::State& state) {
  const ResourceList request = MakeList(1);
  ResourceList total;
  for (auto _ : state) {
    total += request;
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ResourceListAdd);

void BM_ResourceListLessEqual(benchmark::State& state) {
  const ResourceList request = MakeList(1);
  const ResourceList free = MakeList(8);
  for (auto _ : state) {
    bool fits = request.LessEqual(free);
    benchmark::DoNotOptimize(fits);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ResourceListLessEqual);

}  // namespace
}  // namespace muster
