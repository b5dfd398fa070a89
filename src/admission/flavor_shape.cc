// Flavor shapes: a workload's flavor inputs (priority, preemption, pod set names,
// counts and per-pod requests) interned to an integer when it is enqueued. A cycle
// asks "same inputs as the shared assignment?" and "same shortfall as the head?"
// of every head many times; one integer compare replaces the string and
// ResourceList compares each time.
#include <cstring>

#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

void Append(std::string& out, int64_t v) {
  char b[sizeof(v)];
  std::memcpy(b, &v, sizeof(v));
  out.append(b, sizeof(v));
}

}  // namespace

int64_t AdmitterImpl::ShapeOf(const model::Workload& wl) {
  // Only workloads without tolerations, node selector or required affinity share
  // assignments (FlavorInputsShareable): the others get no shape.
  if (!FlavorInputsShareable(wl)) return -1;
  // Lengths first and every number at full width: two inputs give the same key
  // only when they are equal.
  std::string key;
  Append(key, wl.priority);
  Append(key, wl.preemption_never ? 1 : 0);
  Append(key, static_cast<int64_t>(wl.pod_sets.size()));
  for (const model::PodSet& ps : wl.pod_sets) {
    Append(key, static_cast<int64_t>(ps.name.size()));
    key += ps.name;
    Append(key, ps.count);
    // ResourceList equality reads absent as 0: only the non-zero amounts count.
    for (size_t id = 0; id < ps.requests.size(); ++id) {
      int64_t v = ps.requests.Get(static_cast<ResourceId>(id));
      if (v == 0) continue;
      Append(key, static_cast<int64_t>(id));
      Append(key, v);
    }
    Append(key, -1);  // ResourceIds are never negative: ends the pod set
  }
  // A long-running server sees ever new shapes (priorities, counts, requests):
  // the table stays bounded.
  constexpr size_t kMaxShapes = 1 << 16;
  if (shapes_.size() >= kMaxShapes) shapes_.clear();
  auto [it, inserted] = shapes_.try_emplace(std::move(key), next_shape_);
  if (inserted) ++next_shape_;
  return it->second;
}

// Elastic and partial admission read the workload and its route only.
bool AdmitterImpl::PlainShape(const WorkloadState& ws) const {
  return ws.shape >= 0 && !Elastic(ws) && !CanBePartiallyAdmitted(ws.wl());
}

}  // namespace muster::admission
