// NoExecute taints on the nodes gangs run on, as Kubernetes' taint manager treats
// them: a pod that does not tolerate one is evicted at once; one that tolerates
// every such taint is evicted once the shortest tolerationSeconds of the tolerations
// it uses has passed (counted from when the first eviction was scheduled; a taint
// removed in time cancels it); a toleration without tolerationSeconds tolerates for
// ever. A gang runs whole or not at all: its pods' earliest eviction evicts it, and it
// waits again (DeletionByTaintManager, not counted against its restarts).
#include <fmt/format.h>

#include <limits>
#include <utility>

#include "engine/engine.h"
#include "placement/node_filter.h"

namespace muster::engine {
namespace {

// The NoExecute taint of `taints` that decides a pod's eviction, and after how many
// seconds (0: at once; nullopt when none evicts it). As Kubernetes'
// GetMatchingTolerations + getMinTolerationTime: each NoExecute taint is matched by
// the first toleration that tolerates it.
struct TaintVerdict {
  std::optional<int64_t> after_seconds;
  const model::Taint* taint = nullptr;
};

TaintVerdict VerdictFor(const std::vector<model::Taint>& taints,
                        const std::vector<model::Toleration>& tolerations) {
  TaintVerdict verdict;
  int64_t shortest = std::numeric_limits<int64_t>::max();
  for (const model::Taint& taint : taints) {
    if (taint.effect != model::TaintEffect::kNoExecute) continue;
    const model::Toleration* used = nullptr;
    for (const model::Toleration& t : tolerations) {
      if (placement::ToleratesTaint(t, taint)) {
        used = &t;
        break;
      }
    }
    if (used == nullptr) return {0, &taint};
    if (!used->toleration_seconds) continue;
    const int64_t seconds = std::max<int64_t>(*used->toleration_seconds, 0);
    if (seconds < shortest) {
      shortest = seconds;
      verdict = {seconds, &taint};
    }
  }
  return verdict;
}

bool HasNoExecute(const std::vector<model::Taint>& taints) {
  for (const model::Taint& taint : taints) {
    if (taint.effect == model::TaintEffect::kNoExecute) return true;
  }
  return false;
}

std::string TaintString(const model::Taint& taint) {
  return taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":NoExecute";
}

}  // namespace

std::optional<Engine::TaintEviction> Engine::NoExecuteVerdict(const WorkloadRecord& record) const {
  std::optional<TaintEviction> earliest;
  std::optional<placement::PlacementRequest> request;  // built only when a node has taints
  for (const placement::PodPlacement& pod : record.plan.pods) {
    const model::Node& node = parts_.cluster->GetNode(pod.node);
    if (!HasNoExecute(node.taints)) continue;  // most nodes: nothing to build
    if (pod.pod_set < 0 || static_cast<size_t>(pod.pod_set) >= record.workload.pod_sets.size())
      continue;
    // What the pod carries: its template's tolerations and its flavor's (Kueue
    // injects those).
    if (!request) request = bridge_.BuildRequest(record.workload, record.assignment);
    std::vector<model::Toleration> tolerations = record.workload.pod_sets[pod.pod_set].tolerations;
    if (static_cast<size_t>(pod.pod_set) < request->constraints.size()) {
      const auto& flavor = request->constraints[pod.pod_set].flavor_tolerations;
      tolerations.insert(tolerations.end(), flavor.begin(), flavor.end());
    }
    TaintVerdict verdict = VerdictFor(node.taints, tolerations);
    if (!verdict.after_seconds) continue;
    if (earliest && earliest->after_seconds <= *verdict.after_seconds) continue;
    const std::string pod_name =
        record.workload.pod_sets[pod.pod_set].name + "-" + std::to_string(pod.index);
    earliest = TaintEviction{
        *verdict.after_seconds,
        *verdict.after_seconds == 0
            ? fmt::format("node {} has taint {}, which pod {} does not tolerate", node.meta.name,
                          TaintString(*verdict.taint), pod_name)
            : fmt::format("node {} has taint {}, which pod {} tolerates for {}s", node.meta.name,
                          TaintString(*verdict.taint), pod_name, *verdict.after_seconds)};
  }
  return earliest;
}

bool Engine::ApplyNoExecute(WorkloadRecord& record, bool evict_now) {
  std::optional<TaintEviction> verdict = NoExecuteVerdict(record);
  if (!verdict) {
    taint_evictions_.erase(record.key());  // nothing evicts it (any more)
    return false;
  }
  if (verdict->after_seconds == 0 && evict_now) {
    taint_evictions_.erase(record.key());
    EvictAndRequeue(record, Eviction{Now(), kReasonTaintEviction, verdict->detail, ""});
    return true;
  }
  // An eviction already scheduled keeps its time, as the taint manager keeps its
  // timer while the pod stays tolerated.
  taint_evictions_.try_emplace(
      record.key(),
      ScheduledEviction{Now() + static_cast<Time>(verdict->after_seconds), verdict->detail});
  return false;
}

bool Engine::NodeTaintsChanged(placement::NodeIndex idx, const std::string& node) {
  bool evicted = false;
  for (WorkloadRecord* r : GangsOnNode(idx, node)) {
    if (r->phase == Phase::kRunning && r->bound) evicted |= ApplyNoExecute(*r, true);
  }
  return evicted;
}

bool Engine::RunTaintEvictions() {
  bool evicted = false;
  for (auto it = taint_evictions_.begin(); it != taint_evictions_.end();) {
    if (it->second.due > Now()) {
      ++it;
      continue;
    }
    ScheduledEviction due = std::move(it->second);
    WorkloadRecord* r = FindMutable(it->first);
    it = taint_evictions_.erase(it);
    if (r == nullptr || r->phase != Phase::kRunning || !r->bound) continue;
    EvictAndRequeue(*r, Eviction{Now(), kReasonTaintEviction, due.detail, ""});
    evicted = true;
  }
  if (evicted) {
    parts_.admitter->NotifyCapacityChanged();
    ++generation_;
  }
  return evicted;
}

std::optional<Time> Engine::NextTimedEvent() const {
  std::optional<Time> next = NextPodsReadyDeadline();
  for (const auto& [key, eviction] : taint_evictions_) {
    if (!next || eviction.due < *next) next = eviction.due;
  }
  return next;
}

}  // namespace muster::engine
