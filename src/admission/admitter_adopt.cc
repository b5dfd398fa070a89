// Adopt: takes over a workload that already runs (after a server restart or a
// configuration change the engine is rebuilt and must not start it again) and
// charges exactly the assignment it runs with. Everything is validated against the
// current tree before anything changes, so a refusal leaves the admitter as it was.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

// The engine binds exactly these pods, so the assignment must describe the
// workload's own pod sets, in order, with counts it could have been admitted with.
Status CheckShape(const model::Workload& wl, const Assignment& assignment) {
  if (assignment.pod_sets.size() != wl.pod_sets.size()) {
    return InvalidArgument(
        fmt::format("cannot adopt {}: the assignment has {} pod sets, the workload {}", wl.key,
                    assignment.pod_sets.size(), wl.pod_sets.size()));
  }
  for (size_t i = 0; i < wl.pod_sets.size(); ++i) {
    const model::PodSet& ps = wl.pod_sets[i];
    const PodSetAssignment& psa = assignment.pod_sets[i];
    if (psa.pod_set != ps.name) {
      return InvalidArgument(fmt::format("cannot adopt {}: pod set {} of the assignment is {}",
                                         wl.key, ps.name, psa.pod_set));
    }
    if (psa.count < 0 || psa.count > ps.count) {
      return InvalidArgument(fmt::format("cannot adopt {}: {} pods of pod set {}, which has {}",
                                         wl.key, psa.count, ps.name, ps.count));
    }
  }
  return Status::Ok();
}

}  // namespace

// Usage as AssignFlavors computes it: per pod set, count x per-pod request of each
// requested resource on its assigned flavor, summed per (flavor, resource).
Result<FrAmounts> AdmitterImpl::AssignmentUsage(const WorkloadState& ws,
                                                const Assignment& assignment) const {
  const ClusterQueueSpec& cq = cqs_[ws.queue];
  std::map<FrId, int64_t> charged;
  for (size_t i = 0; i < ws.wl().pod_sets.size() && i < assignment.pod_sets.size(); ++i) {
    const model::PodSet& ps = ws.wl().pod_sets[i];
    const PodSetAssignment& psa = assignment.pod_sets[i];
    ResourceList requests = ps.requests.Scaled(psa.count);
    for (ResourceId r : requests.SortedIds()) {
      int64_t amount = requests.Get(r);
      if (amount <= 0) continue;
      const std::string& resource = ResourceNames::Name(r);
      auto assigned = psa.flavors.find(resource);
      if (assigned == psa.flavors.end()) {
        return FailedPrecondition(
            fmt::format("{}: pod set {} has no flavor for {}", ws.wl().key, ps.name, resource));
      }
      std::optional<int32_t> flavor = flavors_.Find(assigned->second);
      bool in_queue =
          flavor && std::any_of(cq.groups.begin(), cq.groups.end(), [&](const auto& g) {
            return std::find(g.covered.begin(), g.covered.end(), r) != g.covered.end() &&
                   std::find(g.flavors.begin(), g.flavors.end(), *flavor) != g.flavors.end();
          });
      std::optional<FrId> fr = in_queue ? tree_.FindFr(*flavor, r) : std::nullopt;
      if (!fr) {
        return FailedPrecondition(
            fmt::format("{}: flavor {} of {} is not in the quota of ClusterQueue {}", ws.wl().key,
                        assigned->second, resource, cq.name));
      }
      charged[*fr] += amount;
    }
  }
  return FrAmounts(charged.begin(), charged.end());
}

Result<FrAmounts> AdmitterImpl::AdoptedKueueUsage(const WorkloadState& ws,
                                                  const Assignment& assignment) const {
  const ClusterQueueSpec& cq = cqs_[ws.queue];
  auto usage = AssignmentUsage(ws, assignment);
  if (!usage.ok()) return FailedPrecondition("cannot adopt " + usage.status().message());
  const FrAmounts& charged = *usage;
  // The same bound the flavor assigner's Fit uses: own unlent quota plus what the
  // cohort can lend within borrowingLimit, given everything admitted now.
  for (const auto& [fr, amount] : charged) {
    int64_t available = tree_.Available(cq.node, fr);
    if (amount > available) {
      auto [flavor, r] = tree_.FrOf(fr);
      return FailedPrecondition(fmt::format(
          "cannot adopt {}: {} {} in flavor {} exceeds what ClusterQueue {} may use now ({})",
          ws.wl().key, ResourceList::FormatAmount(r, amount), ResourceNames::Name(r),
          flavors_.flavors[flavor].meta.name, cq.name,
          ResourceList::FormatAmount(r, std::max<int64_t>(0, available))));
    }
  }
  return charged;
}

// Capability is a hard limit for the queue and for every ancestor (as in
// VolcanoProportion::NotAllocatable); deserved is not: reclaim evens that out.
std::string AdmitterImpl::VolcanoCapabilityExceeded(int32_t queue,
                                                    const ResourceList& request) const {
  for (ResourceId id : request.SortedIds()) {
    int64_t want = request.Get(id);
    if (want <= 0) continue;
    for (int32_t a = queue; a >= 0; a = volcano_.queue(a).parent) {
      const VolcanoProportion::Queue& q = volcano_.queue(a);
      auto cap = q.capability.find(id);
      if (cap == q.capability.end()) continue;
      int64_t used = 0;  // the ancestor's whole subtree
      for (int32_t c = 0; c < volcano_.size(); ++c) {
        for (int32_t x = c; x >= 0; x = volcano_.queue(x).parent) {
          if (x == a) {
            used += volcano_.queue(c).allocated.Get(id);
            break;
          }
        }
      }
      if (used + want > cap->second) {
        return fmt::format("{} {} exceeds the capability of Volcano queue {} ({}, allocated {})",
                           ResourceList::FormatAmount(id, want), ResourceNames::Name(id), q.name,
                           ResourceList::FormatAmount(id, cap->second),
                           ResourceList::FormatAmount(id, used));
      }
    }
  }
  return "";
}

Status AdmitterImpl::Adopt(const std::shared_ptr<const model::Workload>& shared,
                           const Assignment& assignment, Time now) {
  const model::Workload& workload = *shared;
  auto existing = workloads_.find(workload.key);
  if (existing != workloads_.end() && existing->second.admitted) {
    return FailedPrecondition("cannot adopt " + workload.key + ": it is admitted already");
  }
  if (Status st = CheckShape(workload, assignment); !st.ok()) return st;

  // Resolved into a scratch state first: nothing changes until every check passed.
  WorkloadState ws;
  InitState(ws, shared, existing != workloads_.end() ? existing->second.qkey.created : now);
  switch (ws.route) {
    case Route::kHeld:
      return FailedPrecondition("cannot adopt " + workload.key + ": " + NoteMessage(ws));
    case Route::kKueue: {
      auto usage = AdoptedKueueUsage(ws, assignment);
      if (!usage.ok()) return usage.status();
      ws.usage = std::move(usage).value();
      break;
    }
    case Route::kVolcano: {
      std::string why = VolcanoCapabilityExceeded(ws.queue, AssignedRequest(workload, assignment));
      if (!why.empty()) return FailedPrecondition("cannot adopt " + workload.key + ": " + why);
      break;
    }
    case Route::kNoQueue:
      break;
  }
  ws.assignment = assignment;
  ws.allocated = AssignedRequest(workload, assignment);

  // Validated: from here on nothing fails. A pending copy (from Enqueue) leaves its queue.
  if (existing != workloads_.end()) Remove(workload.key);
  auto [pos, inserted] = workloads_.emplace(workload.key, std::move(ws));
  WorkloadState& stored = pos->second;
  Place(stored);
  Charge(stored);
  stored.pending = nullptr;
  stored.pending_text = -1;
  return Status::Ok();
}

}  // namespace muster::admission
