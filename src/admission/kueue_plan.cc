// One Kueue head: does its assignment fit quota and nodes, which workloads would it
// preempt, and, for a Job with kueue.x-k8s.io/job-min-parallelism, which smaller
// counts would fit (Kueue's partial admission, pkg/scheduler/flavorassigner
// podset_reducer.go). Planning has no side effects beyond oracle queries, so the
// partial-admission search can probe as many counts as it needs.
#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "admission/admitter_impl.h"
#include "admission/fair_sharing.h"
#include "workloads/keys.h"

namespace muster::admission {
namespace {

std::vector<FrId> FrsOf(const FrAmounts& usage) {
  std::vector<FrId> out;
  for (const auto& [fr, v] : usage) {
    if (v > 0) out.push_back(fr);
  }
  return out;
}

}  // namespace

// Kueue sets PodSet.minCount only for batch Jobs carrying the annotation; other
// kinds' min_count is a gang minimum (Volcano minAvailable, Kubeflow
// schedulingPolicy), which never shrinks what Kueue admits.
bool CanBePartiallyAdmitted(const model::Workload& wl) {
  // Asked of every pending head each round: the cheap test first, and no key
  // string built per call.
  static const std::string kKey(workloads::kJobMinParallelismAnnotation);
  bool shrinkable =
      std::any_of(wl.pod_sets.begin(), wl.pod_sets.end(),
                  [](const model::PodSet& ps) { return std::max(ps.min_count, 1) < ps.count; });
  return shrinkable && wl.meta.annotations.count(kKey) > 0;
}

AdmitterImpl::Plan AdmitterImpl::PlanKueue(WorkloadState& ws, const FlavorAssignment& fa,
                                           Cycle& cycle, PlacementOracle& oracle) {
  Plan plan;  // flavors are copied only into a plan that admits or preempts
  auto pending = [&](std::string reason, std::string message, bool physical) {
    plan.kind = Plan::Kind::kPending;
    plan.reason = std::move(reason);
    plan.message = std::move(message);
    plan.physical = physical;
    return std::move(plan);
  };
  auto unschedulable = [&](const PlacementOracle::Check& check) {
    return pending(check.reason.empty() ? "Unschedulable" : check.reason, check.message, true);
  };
  auto preempt = [&](std::vector<Victim> victims) {
    plan.kind = Plan::Kind::kPreempt;
    plan.flavors = fa;
    plan.victims = std::move(victims);
    return std::move(plan);
  };
  auto message = [&] { return fa.Message(ws.wl(), cqs_[ws.queue], flavors_); };
  if (fa.mode == FitMode::kNoFit) return pending(fa.reason, message(), false);

  int32_t cq = ws.queue;
  IncomingWorkload in;
  in.cq = cq;
  in.priority = ws.wl().priority;
  in.created = ws.qkey.created;
  in.order = ws.qkey.order;
  in.usage = &fa.usage;
  in.preempt_frs = fa.preempt_frs;
  in.max_admit_seq = cycle.first_admit_seq;  // AdmittedInTree's list may hold this cycle's
  // Built only when asked: most heads admit, or find their targets memoized.
  auto admitted = [&]() -> const std::vector<PreemptionCandidate>& {
    return AdmittedInTree(cq, cycle);
  };
  auto as_victims = [](const CandidateList& cands, int32_t own_cq,
                       const std::vector<Victim>& skip) {
    std::vector<Victim> v;
    std::unordered_set<std::string_view> skipped;
    for (const Victim& s : skip) skipped.insert(s.workload_key);
    for (const PreemptionCandidate* c : cands) {
      if (!skipped.count(c->key)) {
        v.push_back(
            {std::string(c->key), c->cq == own_cq ? kInClusterQueue : kInCohortReclamation});
      }
    }
    return v;
  };

  if (fa.mode == FitMode::kFit) {
    PlacementOracle::Check check = oracle.CanPlace(ws.wl(), fa.assignment, {});
    if (check.fits) {
      plan.kind = Plan::Kind::kAdmit;
      plan.flavors = fa;
      return plan;
    }
    // Quota fits, nodes do not: preempt what the policies allow, if that helps.
    if (PreemptsNow(ws)) {
      auto cands = FindCandidates(in, FrsOf(fa.usage), tree_, cqs_, admitted());
      auto victims =
          PhysicalPreemption(ws, fa.assignment, {}, as_victims(cands, cq, {}), cycle, oracle);
      if (victims) {
        plan.physical = true;
        return preempt(std::move(*victims));
      }
    }
    return unschedulable(check);
  }

  // Preempt mode: quota is short.
  if (ws.wl().preemption_never) {
    return pending(fa.reason, message() + " (its PriorityClass never preempts)", false);
  }
  if (ws.preempts_later) {  // short of quota, and it may not preempt at this instant
    return pending(fa.reason, message() + PreemptsLaterNote(ws), false);
  }
  // The memoized list is read in place (nothing below asks for targets again).
  std::vector<PreemptionTarget> fair_targets;
  if (fair_sharing_) {
    fair_targets =
        FairSharingTargets(in, tree_, cqs_, admitted(), fair_sharing_config_, node_weight_);
  }
  const std::vector<PreemptionTarget>& targets =
      fair_sharing_ ? fair_targets : CachedClassicalTargets(in, cycle);
  if (targets.empty()) return pending(fa.reason, message(), false);
  std::vector<Victim> required;
  for (const auto& t : targets) {
    if (cycle.victims.count(t.key)) {
      plan.kind = Plan::Kind::kBlocked;
      plan.reason = "Pending";
      plan.message = "Workload has overlapping preemption targets with another workload";
      return plan;
    }
    required.push_back({t.key, t.detail});
  }
  std::vector<std::string> keys;
  keys.reserve(required.size());
  for (const auto& v : required) keys.push_back(v.workload_key);
  PlacementOracle::Check check = oracle.CanPlace(ws.wl(), fa.assignment, keys);
  if (check.fits) return preempt(std::move(required));
  auto cands = FindCandidates(in, FrsOf(fa.usage), tree_, cqs_, admitted());
  auto victims = PhysicalPreemption(ws, fa.assignment, required, as_victims(cands, cq, required),
                                    cycle, oracle);
  if (victims) {
    plan.physical = true;
    return preempt(std::move(*victims));
  }
  return unschedulable(check);
}

// ClassicalTargets reads the incoming workload's queue, priority, usage and short
// (flavor, resource) pairs, its creation and order only for equal priorities under
// LowerOrNewerEqualPriority, and the tree's usage and admitted workloads, which
// hold while the root's generation does (within one cycle: AdmittedInTree).
const std::vector<PreemptionTarget>& AdmitterImpl::CachedClassicalTargets(
    const IncomingWorkload& in, Cycle& cycle) {
  const int64_t gen = root_gen_[RootOf(in.cq)];
  const bool order_matters = cqs_[in.cq].preemption.within_cluster_queue ==
                             model::PreemptionPolicy::kLowerOrNewerEqualPriority;
  if (cycle.targets_memo.size() < cqs_.size()) cycle.targets_memo.resize(cqs_.size());
  std::vector<Cycle::TargetsMemo>& memo = cycle.targets_memo[static_cast<size_t>(in.cq)];
  if (!memo.empty() && memo.front().gen != gen) memo.clear();
  for (const Cycle::TargetsMemo& m : memo) {
    if (m.priority == in.priority && m.usage == *in.usage && m.preempt_frs == in.preempt_frs &&
        (!order_matters || (m.created == in.created && m.order == in.order))) {
      return m.targets;
    }
  }
  // A queue's heads come in a few shapes; bound the list for the rare one with many.
  constexpr size_t kMaxShapes = 16;
  if (memo.size() >= kMaxShapes) memo.erase(memo.begin());
  Cycle::TargetsMemo& m = memo.emplace_back();
  m.gen = gen;
  m.priority = in.priority;
  m.created = in.created;
  m.order = in.order;
  m.usage = *in.usage;
  m.preempt_frs = in.preempt_frs;
  m.targets = ClassicalTargets(in, tree_, cqs_, AdmittedInTree(in.cq, cycle));
  return m.targets;
}

// Kueue's PodSetReducer: binary search over how much of the slack (count -
// minCount, summed over pod sets) to give up, spreading each step over the pod
// sets in proportion to their slack (rounded up, so the last step reaches every
// minCount). The smallest reduction that can be admitted or can preempt its way in
// wins. Counts are carried in PodSetAssignment::count; the usage charged is that of
// the reduced counts only.
std::optional<AdmitterImpl::Plan> AdmitterImpl::PlanPartial(WorkloadState& ws, Cycle& cycle,
                                                            PlacementOracle& oracle) {
  const model::Workload& wl = ws.wl();
  if (!CanBePartiallyAdmitted(wl)) return std::nullopt;
  std::vector<int32_t> full, slack;
  int64_t total = 0;
  for (const model::PodSet& ps : wl.pod_sets) {
    full.push_back(ps.count);
    slack.push_back(std::max(0, ps.count - std::clamp(ps.min_count, 1, ps.count)));
    total += slack.back();
  }
  model::Workload reduced = wl;
  auto probe = [&](int64_t step) {
    for (size_t i = 0; i < full.size(); ++i) {
      int64_t cut = (slack[i] * step + total - 1) / total;
      reduced.pod_sets[i].count = full[i] - static_cast<int32_t>(cut);
    }
    FlavorAssignment fa =
        AssignFlavors(reduced, cqs_[ws.queue], tree_, flavors_, AssignOptionsFor(ws));
    return PlanKueue(ws, fa, cycle, oracle);
  };
  // Smallest step in [1, total] whose plan is not pending; monotone as in Kueue.
  int64_t lo = 1, hi = total + 1;
  std::optional<Plan> best;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    Plan p = probe(mid);
    if (p.kind == Plan::Kind::kAdmit || p.kind == Plan::Kind::kPreempt) {
      best = std::move(p);
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return best;
}

}  // namespace muster::admission
