// Elastic gangs (workloads/elastic.h) in the engine: growing a running gang into
// capacity that admission left at this instant, and shrinking one that gave pods
// to a preemptor. Admission decides the initial size and which victims shrink; the
// engine binds, unbinds and tells the executor.
//
// Pod identity: a running elastic gang always holds the lowest indices of each pod
// set (0..n-1). Growth adds the next indices, shrinking stops the highest ones, as
// a Kubernetes scale-down of an indexed Job or a Kubeflow replica count does, and
// torch elastic's rendezvous renumbers the ranks that are present.
#include "workloads/elastic.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/engine.h"

namespace muster::engine {
namespace {

std::vector<int32_t> CountsOf(const admission::Assignment& a) {
  std::vector<int32_t> out;
  for (const auto& psa : a.pod_sets) out.push_back(psa.count);
  return out;
}

int32_t Total(const std::vector<int32_t>& counts) {
  int32_t n = 0;
  for (int32_t c : counts) n += c;
  return n;
}

admission::Assignment WithCounts(admission::Assignment a, const std::vector<int32_t>& counts) {
  for (size_t i = 0; i < a.pod_sets.size() && i < counts.size(); ++i)
    a.pod_sets[i].count = counts[i];
  return a;
}

// Growth keeps new pods beside the old only where no domain binds them: a gang
// that must sit in one topology domain is placed whole (Kueue's elastic jobs,
// too, support only unconstrained topology for now).
bool CanGrowInPlace(const model::Workload& w) {
  if (w.network_topology && w.network_topology->mode == model::NetworkTopologyMode::kHard) {
    return false;
  }
  return std::none_of(w.pod_sets.begin(), w.pod_sets.end(), [](const model::PodSet& ps) {
    return ps.topology.mode == model::TopologyRequest::Mode::kRequired;
  });
}

// Parts per million of the cluster in the resource the gang holds most of.
int64_t DominantSharePpm(const ResourceList& held, const ResourceList& total) {
  int64_t share = 0;
  for (ResourceId id : held.SortedIds()) {
    int64_t have = total.Get(id), used = held.Get(id);
    if (used <= 0) continue;
    // 128-bit: memory in bytes times a million overflows 64 bits on large clusters.
    int64_t s = have <= 0 ? 1000000
                          : static_cast<int64_t>(std::min<__int128>(
                                1000000, static_cast<__int128>(used) * 1000000 / have));
    share = std::max(share, s);
  }
  return share;
}

}  // namespace

bool Engine::IsElastic(const WorkloadRecord& record) const {
  return CanResize() && workloads::IsElastic(record.workload, !record.workload.local_queue.empty());
}

void Engine::TrackGrowth(const WorkloadRecord& record) {
  bool below = record.phase == Phase::kRunning && record.bound && IsElastic(record) &&
               CountsOf(record.assignment) != workloads::MaxCounts(record.workload) &&
               CanGrowInPlace(record.workload);
  if (below) {
    growable_.insert(record.key());
  } else {
    growable_.erase(record.key());
  }
}

bool Engine::GrowElastic() {
  if (growable_.empty()) return false;
  if (!cluster_total_) {
    ResourceList total;
    for (placement::NodeIndex i = 0; i < parts_.cluster->NodeCount(); ++i) {
      if (!parts_.cluster->NodeReady(i) || parts_.cluster->GetNode(i).unschedulable) continue;
      total += parts_.cluster->GetNode(i).allocatable;
    }
    cluster_total_ = total;
  }
  // Volcano's job order for jobs that are ready and still have pods to bind:
  // priority, then (drf) the lower dominant share of what the job holds, then the
  // gang running longest, then the key.
  struct Grower {
    WorkloadRecord* r;
    int64_t share;
  };
  std::vector<Grower> order;
  for (const std::string& key : growable_) {
    WorkloadRecord* r = FindMutable(key);
    if (r == nullptr) continue;
    int64_t share = 0;
    if (drf_growth_order_) {
      ResourceList held;
      for (const auto& pod : r->plan.pods) held += r->workload.pod_sets[pod.pod_set].requests;
      share = DominantSharePpm(held, *cluster_total_);
    }
    order.push_back({r, share});
  }
  std::sort(order.begin(), order.end(), [](const Grower& ga, const Grower& gb) {
    const WorkloadRecord* a = ga.r;
    const WorkloadRecord* b = gb.r;
    if (a->workload.priority != b->workload.priority) {
      return a->workload.priority > b->workload.priority;
    }
    if (ga.share != gb.share) return ga.share < gb.share;
    Time sa = a->start_time.value_or(0), sb = b->start_time.value_or(0);
    if (sa != sb) return sa < sb;
    return a->key() < b->key();
  });
  bool grew = false;
  for (const Grower& g : order) grew |= GrowOne(*g.r);
  return grew;
}

bool Engine::GrowOne(WorkloadRecord& r) {
  if (r.phase != Phase::kRunning || !r.bound) {
    growable_.erase(r.key());
    return false;
  }
  std::vector<int32_t> now = CountsOf(r.assignment);
  std::vector<int32_t> max = workloads::MaxCounts(r.workload);
  int64_t steps = workloads::StepsBetween(now, max);
  if (steps == 0 || now.size() != max.size()) {
    growable_.erase(r.key());
    return false;
  }
  std::optional<placement::GangPlan> plan;
  auto fits = [&](int64_t s) {
    admission::Assignment a = WithCounts(r.assignment, workloads::Interpolate(now, max, s, steps));
    if (!parts_.admitter->CheckResize(r.key(), a).ok()) return false;
    auto planned = bridge_.PlanGrowth(r.workload, r.assignment, a);
    auto* p = std::get_if<placement::GangPlan>(&planned);
    if (p == nullptr) return false;
    plan = std::move(*p);
    return true;
  };
  int64_t last = 1;
  int64_t step = workloads::LargestFittingStep(1, steps, [&](int64_t s) {
    last = s;
    return fits(s);
  });
  if (step < 1) return false;
  if (last != step && !fits(step)) return false;
  admission::Assignment grown =
      WithCounts(r.assignment, workloads::Interpolate(now, max, step, steps));
  if (Status st = parts_.admitter->Resize(r.key(), grown); !st.ok()) {
    errors_.push_back("growing " + r.key() + ": " + st.message());
    return false;
  }
  if (Status st = parts_.cluster->Commit(*plan, r.workload); !st.ok()) {
    errors_.push_back("growing " + r.key() + ": " + st.message());
    parts_.admitter->Resize(r.key(), r.assignment);  // give the quota back
    return false;
  }
  std::vector<placement::PodPlacement> added = plan->pods;
  r.plan.pods.insert(r.plan.pods.end(), added.begin(), added.end());
  std::sort(r.plan.pods.begin(), r.plan.pods.end(), [](const auto& a, const auto& b) {
    return std::tie(a.pod_set, a.index) < std::tie(b.pod_set, b.index);
  });
  int32_t from = Total(now), to = Total(CountsOf(grown));
  r.assignment = std::move(grown);
  r.resizes.push_back(Resize{Now(), "Grow", "", "", from, to});
  log_.Add({Now(), r.key(), "Grow", "CapacityFreed",
            fmt::format("{} -> {} pods ({})", from, to,
                        workloads::ElasticSourceName(r.workload.elastic))});
  ++generation_;
  TrackGrowth(r);
  ApplyNoExecute(r, false);  // its new pods' nodes
  if (executor_ != nullptr) executor_->Resized(r, added, {}, Now());
  return true;
}

void Engine::ShrinkGang(WorkloadRecord& r, const std::vector<int32_t>& keep, const Eviction& why) {
  std::vector<int32_t> now = CountsOf(r.assignment);
  std::vector<placement::PodPlacement> removed, kept;
  for (placement::PodPlacement& pod : r.plan.pods) {
    bool stops = pod.pod_set >= 0 && static_cast<size_t>(pod.pod_set) < keep.size() &&
                 pod.index >= keep[pod.pod_set];
    (stops ? removed : kept).push_back(std::move(pod));
  }
  if (Status st = parts_.cluster->ReleaseAbove(r.key(), keep); !st.ok()) {
    errors_.push_back("shrinking " + r.key() + ": " + st.message());
  }
  r.plan.pods = std::move(kept);
  admission::Assignment shrunk = WithCounts(r.assignment, keep);
  if (Status st = parts_.admitter->Resize(r.key(), shrunk); !st.ok()) {
    errors_.push_back("shrinking " + r.key() + ": " + st.message());
  }
  int32_t from = Total(now), to = Total(CountsOf(shrunk));
  r.assignment = std::move(shrunk);
  r.resizes.push_back(Resize{why.time, "Shrink", why.detail, why.by, from, to});
  log_.Add({why.time, r.key(), "Shrink", why.reason,
            fmt::format("{} -> {} pods: {}{}", from, to, why.detail,
                        why.by.empty() ? "" : " by " + why.by)});
  ++generation_;
  TrackGrowth(r);
  ApplyNoExecute(r, false);  // the pods it kept
  if (executor_ != nullptr) executor_->Resized(r, {}, removed, Now());
}

}  // namespace muster::engine
