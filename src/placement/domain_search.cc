#include "placement/domain_search.h"

#include <algorithm>
#include <limits>

namespace muster::placement {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 4;

// One node's contribution to its domains, as the bound counts it.
struct Contribution {
  int64_t gpu_pods = 0;  // floor(free whole GPUs / pod GPUs)
  int64_t cpu = 0;
  int64_t memory = 0;
};

Contribution Of(const NodeInfo& info, const NodeUsage& usage, int32_t gpus) {
  Contribution c;
  if (gpus > 0) c.gpu_pods = usage.FreeWholeGpus() / gpus;
  c.cpu = info.allocatable.Get(kCpu) - usage.used.Get(kCpu);
  c.memory = info.allocatable.Get(kMemory) - usage.used.Get(kMemory);
  return c;
}

struct Correction {
  int32_t domain;
  Contribution delta;
};

// What the overlay changed, per domain, sorted by domain id. Only the nodes the
// plan touched differ from the committed aggregates.
std::vector<Correction> Corrections(const Overlay& ov, int32_t gpus) {
  std::vector<Correction> out;
  const IndexedClusterState& base = ov.Base();
  for (NodeIndex i : ov.TouchedNodes()) {
    const NodeInfo& info = base.Info(i);
    Contribution now = Of(info, ov.Usage(i), gpus);
    Contribution was = Of(info, base.Usage(i), gpus);
    Contribution d{now.gpu_pods - was.gpu_pods, now.cpu - was.cpu, now.memory - was.memory};
    for (int32_t dom : info.domains) out.push_back(Correction{dom, d});
  }
  std::sort(out.begin(), out.end(),
            [](const Correction& a, const Correction& b) { return a.domain < b.domain; });
  return out;
}

int64_t Bound(const Overlay& ov, int32_t d, const PodShape& shape,
              const std::vector<Correction>& corrections) {
  const IndexedClusterState& base = ov.Base();
  Contribution sum;
  if (shape.gpus > 0) {
    // Sum over nodes of floor(free / g) = sum over j >= 1 of #nodes with >= j*g free.
    for (int32_t k = shape.gpus; k <= base.MaxGpusPerNode(); k += shape.gpus) {
      sum.gpu_pods += base.DomainNodesWithFreeGpus(d, k);
    }
  }
  sum.cpu = base.DomainFreeCpu(d);
  sum.memory = base.DomainFreeMemory(d);
  auto it = std::lower_bound(corrections.begin(), corrections.end(), d,
                             [](const Correction& c, int32_t v) { return c.domain < v; });
  for (; it != corrections.end() && it->domain == d; ++it) {
    sum.gpu_pods += it->delta.gpu_pods;
    sum.cpu += it->delta.cpu;
    sum.memory += it->delta.memory;
  }
  int64_t bound = kUnbounded;
  if (shape.gpus > 0) bound = std::min(bound, sum.gpu_pods);
  int64_t cpu = shape.requests.Get(kCpu);
  if (cpu > 0) bound = std::min(bound, std::max<int64_t>(0, sum.cpu) / cpu);
  int64_t mem = shape.requests.Get(kMemory);
  if (mem > 0) bound = std::min(bound, std::max<int64_t>(0, sum.memory) / mem);
  return bound;
}

}  // namespace

std::vector<DomainBound> DomainsThatMayHold(const Overlay& overlay,
                                            const std::vector<int32_t>& domains,
                                            const PodShape& shape, int32_t count) {
  std::vector<Correction> corrections = Corrections(overlay, shape.gpus);
  std::vector<DomainBound> out;
  for (int32_t d : domains) {
    int64_t b = Bound(overlay, d, shape, corrections);
    if (b >= count) out.push_back(DomainBound{d, b});
  }
  return out;
}

int64_t LargestDomainBoundBelow(const Overlay& overlay, const std::vector<int32_t>& domains,
                                const PodShape& shape, int32_t count) {
  std::vector<Correction> corrections = Corrections(overlay, shape.gpus);
  int64_t best = 0;
  for (int32_t d : domains) {
    int64_t b = Bound(overlay, d, shape, corrections);
    if (b < count) best = std::max(best, b);
  }
  return best;
}

}  // namespace muster::placement
