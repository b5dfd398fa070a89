// Elastic workloads in admission (workloads/elastic.h).
//
// Admission: an elastic head is admitted with the most pods that fit without
// preempting anyone, down to its minimum (Volcano binds a job once minAvailable
// tasks fit and the rest as they fit; a PyTorch elastic job starts with what fits
// between minReplicas and its workers). Only the minimum may preempt: Volcano's
// preempt and reclaim act for starving jobs, those below minAvailable.
//
// Preemption: a victim that is elastic and runs above its minimum is shrunk
// instead of evicted when giving up pods above its minimum lets the preemptor in
// (Volcano's gang plugin lets preempt and reclaim take only the pods above
// minAvailable); it gives up as few as that needs, its highest indices first.
//
// Resizing: the engine grows admitted elastic workloads when capacity frees and
// shrinks them for preemptors; CheckResize / Resize keep quota equal to what runs.
#include <fmt/format.h>

#include <algorithm>

#include "admission/admitter_impl.h"
#include "workloads/elastic.h"

namespace muster::admission {
namespace {

std::vector<int32_t> CountsOf(const Assignment& a) {
  std::vector<int32_t> out;
  for (const PodSetAssignment& psa : a.pod_sets) out.push_back(psa.count);
  return out;
}

Assignment WithCounts(Assignment a, const std::vector<int32_t>& counts) {
  for (size_t i = 0; i < a.pod_sets.size() && i < counts.size(); ++i) {
    a.pod_sets[i].count = counts[i];
  }
  return a;
}

}  // namespace

ResourceList AssignedRequest(const model::Workload& wl, const Assignment& assignment) {
  ResourceList total;
  for (size_t i = 0; i < wl.pod_sets.size(); ++i) {
    int32_t n =
        i < assignment.pod_sets.size() ? assignment.pod_sets[i].count : wl.pod_sets[i].count;
    total += wl.pod_sets[i].requests.Scaled(n);
  }
  return total;
}

Assignment ElasticMinimum(const model::Workload& wl, const Assignment& base) {
  return WithCounts(base, workloads::MinCounts(wl));
}

bool AdmitterImpl::Elastic(const WorkloadState& ws) const {
  return ws.route == Route::kKueue ? ws.elastic_in_kueue : ws.elastic_elsewhere;
}

std::optional<Assignment> AdmitterImpl::LargestElasticFit(
    const model::Workload& wl, const Assignment& base,
    const std::function<bool(const Assignment&)>& fits) {
  std::vector<int32_t> lo = workloads::MinCounts(wl), hi = workloads::MaxCounts(wl);
  int64_t steps = workloads::StepsBetween(lo, hi);
  auto at = [&](int64_t s) { return WithCounts(base, workloads::Interpolate(lo, hi, s, steps)); };
  if (fits(at(steps))) return at(steps);
  int64_t last = steps;
  int64_t step = workloads::LargestFittingStep(0, steps - 1, [&](int64_t s) {
    last = s;
    return fits(at(s));
  });
  if (step < 0) return std::nullopt;
  // The oracle keeps the plan of its last fitting check: make it this one's.
  if (last != step && !fits(at(step))) return std::nullopt;
  return at(step);
}

AdmitterImpl::Plan AdmitterImpl::PlanElasticKueue(WorkloadState& ws, Cycle& cycle,
                                                  PlacementOracle& oracle) {
  std::vector<int32_t> lo = workloads::MinCounts(ws.wl()), hi = workloads::MaxCounts(ws.wl());
  int64_t steps = workloads::StepsBetween(lo, hi);
  model::Workload sized = ws.wl();
  auto plan_at = [&](int64_t s) {
    if (s == steps) return PlanKueue(ws, FlavorsFor(ws), cycle, oracle);
    std::vector<int32_t> counts = workloads::Interpolate(lo, hi, s, steps);
    for (size_t i = 0; i < counts.size(); ++i) sized.pod_sets[i].count = counts[i];
    FlavorAssignment fa =
        AssignFlavors(sized, cqs_[ws.queue], tree_, flavors_, AssignOptionsFor(ws));
    return PlanKueue(ws, fa, cycle, oracle);
  };
  Plan full = plan_at(steps);
  if (full.kind == Plan::Kind::kAdmit || full.kind == Plan::Kind::kBlocked || steps == 0) {
    return full;
  }
  std::optional<Plan> best;
  int64_t last = steps;
  int64_t step = workloads::LargestFittingStep(0, steps - 1, [&](int64_t s) {
    last = s;
    Plan p = plan_at(s);
    if (p.kind != Plan::Kind::kAdmit) return false;
    best = std::move(p);
    return true;
  });
  if (step >= 0) {
    if (last != step) {
      Plan again = plan_at(step);  // the oracle keeps the plan of its last fitting check
      if (again.kind == Plan::Kind::kAdmit) return again;
    }
    if (best) return *best;
  }
  // Not even the minimum fits as things are: the minimum may preempt.
  return plan_at(0);
}

std::vector<Victim> AdmitterImpl::PreferShrinking(const WorkloadState& preemptor,
                                                  const Assignment& assignment,
                                                  std::vector<Victim> victims,
                                                  PlacementOracle& oracle) {
  bool any = std::any_of(victims.begin(), victims.end(), [&](const Victim& v) {
    auto it = workloads_.find(v.workload_key);
    return it != workloads_.end() && it->second.admitted && Elastic(it->second);
  });
  if (!any) return victims;
  // Shrinking keeps the preemptor's borrowing as the whole evictions had it: it may
  // borrow only where it had to with every victim gone.
  bool allow_borrowing = !PreemptorFits(preemptor, assignment, victims, false, oracle);
  for (Victim& v : victims) {
    auto it = workloads_.find(v.workload_key);
    if (it == workloads_.end() || !it->second.admitted || !Elastic(it->second)) continue;
    const WorkloadState& vs = it->second;
    std::vector<int32_t> lo = workloads::MinCounts(vs.wl()), now = CountsOf(vs.assignment);
    for (size_t i = 0; i < lo.size() && i < now.size(); ++i) lo[i] = std::min(lo[i], now[i]);
    int64_t steps = workloads::StepsBetween(lo, now);
    if (steps == 0) continue;  // at its minimum: evicted whole, as before
    // Step s keeps Interpolate(lo, now, s): the most kept that still lets it in.
    int64_t s = workloads::LargestFittingStep(0, steps - 1, [&](int64_t step) {
      v.shrink_to = workloads::Interpolate(lo, now, step, steps);
      return PreemptorFits(preemptor, assignment, victims, allow_borrowing, oracle);
    });
    v.shrink_to = s < 0 ? std::vector<int32_t>{} : workloads::Interpolate(lo, now, s, steps);
  }
  return victims;
}

bool AdmitterImpl::PreemptorFits(const WorkloadState& preemptor, const Assignment& assignment,
                                 const std::vector<Victim>& victims, bool allow_borrowing,
                                 PlacementOracle& oracle) {
  const SplitVictims split(victims);
  if (preemptor.route == Route::kKueue) {
    auto usage = AssignmentUsage(preemptor, assignment);
    if (!usage.ok()) return false;
    // What the tree would hold with the victims gone or shrunk, then restored.
    std::vector<std::pair<NodeId, FrAmounts>> removed, added;
    for (const Victim& v : victims) {
      auto it = workloads_.find(v.workload_key);
      if (it == workloads_.end() || !it->second.admitted || it->second.route != Route::kKueue) {
        continue;
      }
      const WorkloadState& vs = it->second;
      NodeId node = cqs_[vs.queue].node;
      removed.emplace_back(node, vs.usage);
      if (!v.shrink_to.empty()) {
        auto kept = AssignmentUsage(vs, WithCounts(vs.assignment, v.shrink_to));
        if (kept.ok()) added.emplace_back(node, *kept);
      }
    }
    for (const auto& [node, u] : removed) tree_.RemoveUsage(node, u);
    for (const auto& [node, u] : added) tree_.AddUsage(node, u);
    IncomingWorkload in;
    in.cq = preemptor.queue;
    in.priority = preemptor.wl().priority;
    in.usage = &*usage;
    bool fits = WorkloadFits(in, tree_, cqs_, allow_borrowing);
    for (const auto& [node, u] : added) tree_.RemoveUsage(node, u);
    for (const auto& [node, u] : removed) tree_.AddUsage(node, u);
    if (!fits) return false;
  }
  if (split.shrunk.empty()) return oracle.CanPlace(preemptor.wl(), assignment, split.evicted).fits;
  return oracle.CanPlaceShrinking(preemptor.wl(), assignment, split.evicted, split.shrunk).fits;
}

Status AdmitterImpl::CheckResize(const std::string& key, const Assignment& assignment) {
  auto it = workloads_.find(key);
  if (it == workloads_.end() || !it->second.admitted) {
    return FailedPrecondition(key + " is not admitted");
  }
  const WorkloadState& ws = it->second;
  if (assignment.pod_sets.size() != ws.assignment.pod_sets.size()) {
    return InvalidArgument(fmt::format("{}: {} pod sets to resize to, it has {}", key,
                                       assignment.pod_sets.size(), ws.assignment.pod_sets.size()));
  }
  bool grows = false;
  for (size_t i = 0; i < assignment.pod_sets.size(); ++i) {
    const PodSetAssignment& want = assignment.pod_sets[i];
    const PodSetAssignment& have = ws.assignment.pod_sets[i];
    if (want.pod_set != have.pod_set || want.flavors != have.flavors) {
      return InvalidArgument(key + ": a resize keeps the pod sets and their flavors");
    }
    if (want.count < 0 || want.count > ws.wl().pod_sets[i].count) {
      return InvalidArgument(fmt::format("{}: {} pods of pod set {}, which has {}", key, want.count,
                                         want.pod_set, ws.wl().pod_sets[i].count));
    }
    grows = grows || want.count > have.count;
  }
  if (!grows) return Status::Ok();  // shrinking only gives back
  if (auto held = held_for_preemptor_.find(key); held != held_for_preemptor_.end()) {
    return FailedPrecondition(key + " gave up pods for " + held->second +
                              ", which is not admitted yet");
  }
  switch (ws.route) {
    case Route::kKueue: {
      const ClusterQueueSpec& cq = cqs_[ws.queue];
      if (cq.strategy == model::QueueingStrategy::kStrictFIFO) {
        // The new pods queue like a new workload slice: behind every pending one of
        // at least their priority.
        const QueueKey* first = cq_pending_[ws.queue].First();
        if (first != nullptr && first->priority >= ws.wl().priority) {
          return FailedPrecondition(fmt::format(
              "{} waits ahead of it in StrictFIFO ClusterQueue {}", first->key, cq.name));
        }
      }
      auto usage = AssignmentUsage(ws, assignment);
      if (!usage.ok()) return usage.status();
      // Against the tree without this workload's own usage: the new slice replaces it.
      QuotaTree& tree = tree_;  // changed and restored below
      tree.RemoveUsage(cq.node, ws.usage);
      std::string short_of;
      for (const auto& [fr, amount] : *usage) {
        int64_t available = tree.Available(cq.node, fr);
        if (amount > available) {
          auto [flavor, r] = tree.FrOf(fr);
          short_of = fmt::format("{} {} in flavor {} exceeds what ClusterQueue {} may use now ({})",
                                 ResourceList::FormatAmount(r, amount), ResourceNames::Name(r),
                                 flavors_.flavors[flavor].meta.name, cq.name,
                                 ResourceList::FormatAmount(r, std::max<int64_t>(0, available)));
          break;
        }
      }
      tree.AddUsage(cq.node, ws.usage);
      if (!short_of.empty()) return FailedPrecondition(short_of);
      return Status::Ok();
    }
    case Route::kVolcano: {
      ResourceList extra = AssignedRequest(ws.wl(), assignment);
      extra -= ws.allocated;
      std::string why = volcano_.NotAllocatable(ws.queue, extra);
      if (!why.empty()) return FailedPrecondition(why);
      return Status::Ok();
    }
    case Route::kNoQueue:
    case Route::kHeld:
      break;
  }
  return Status::Ok();
}

Status AdmitterImpl::Resize(const std::string& key, const Assignment& assignment) {
  auto it = workloads_.find(key);
  if (it == workloads_.end() || !it->second.admitted) {
    return FailedPrecondition(key + " is not admitted");
  }
  WorkloadState& ws = it->second;
  bool grows = false;
  for (size_t i = 0; i < assignment.pod_sets.size() && i < ws.assignment.pod_sets.size(); ++i) {
    grows = grows || assignment.pod_sets[i].count > ws.assignment.pod_sets[i].count;
  }
  if (grows) {
    if (Status st = CheckResize(key, assignment); !st.ok()) return st;
  } else if (assignment.pod_sets.size() != ws.assignment.pod_sets.size()) {
    return InvalidArgument(key + ": a resize keeps the pod sets");
  }
  FrAmounts usage;
  if (ws.route == Route::kKueue) {
    auto u = AssignmentUsage(ws, assignment);
    if (!u.ok()) return u.status();
    usage = std::move(*u);
  }
  // Release and charge again: the tree and queue totals follow what runs. The
  // admission order (admit_seq) is kept: a resize is not a new admission.
  int64_t seq = ws.admit_seq;
  Release(ws);
  ws.assignment = assignment;
  ws.usage = std::move(usage);
  ws.allocated = AssignedRequest(ws.wl(), ws.assignment);
  Charge(ws, seq);
  // Freed quota or capacity helps whoever waits for it.
  if (!grows) UnparkAfterRelease(ws);
  return Status::Ok();
}

}  // namespace muster::admission
