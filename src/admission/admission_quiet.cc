// Quiet cohort trees: after a capacity change (a preemption anywhere, a node
// back), Kueue retries every inadmissible workload. A tree none of whose pending
// workloads can have changed its answer is not retried: each was last found short
// of quota in a cycle that left the tree's generation (its usage, its admitted
// workloads) as it still is, and no workload came, went or was unparked alone
// since. Retrying such a head only re-reads cached flavors, finds no preemption
// targets and parks it again, with no decision, no oracle query and no change to
// the tree, so skipping it changes no decision and no other head's order; it made
// every preempting cycle's cost grow with the whole backlog.
#include "admission/admitter_impl.h"

namespace muster::admission {

uint64_t AdmitterImpl::QueueChanges(NodeId root) const {
  uint64_t sum = 0;
  for (int32_t c : cqs_by_root_[root]) sum += cq_pending_[c].changes();
  return sum;
}

bool AdmitterImpl::Quiet(NodeId root) const {
  // Fair sharing compares shares across trees, and a draining workload leaves the
  // candidate lists without a generation bump: neither is tracked here.
  if (fair_sharing_ || !draining_.empty()) return false;
  const QuietRoot& q = quiet_[root];
  return q.gen >= 0 && q.gen == root_gen_[root] && q.changes == QueueChanges(root);
}

void AdmitterImpl::BeginQuiet(Cycle& cycle) {
  const size_t nodes = root_gen_.size();
  quiet_.resize(nodes);
  unpark_due_.resize(nodes, 0);
  cycle.gen_at_start = root_gen_;
  cycle.parked_at_start.assign(nodes, 0);
  cycle.stirred.assign(nodes, 0);
  for (NodeId root = 0; root < static_cast<NodeId>(cqs_by_root_.size()); ++root) {
    const std::vector<int32_t>& cqs = cqs_by_root_[root];
    if (cqs.empty()) continue;
    if (UnparkDue(root) && !Quiet(root)) {
      for (int32_t c : cqs) cq_pending_[c].UnparkAll();
    }
    unpark_due_[root] = 0;
    if (!Quiet(root)) quiet_[root] = QuietRoot{};
    for (int32_t c : cqs) {
      if (cq_pending_[c].HasParked()) cycle.parked_at_start[root] = 1;
    }
  }
  unpark_all_due_ = false;
}

void AdmitterImpl::EndQuiet(const Cycle& cycle) {
  for (NodeId root = 0; root < static_cast<NodeId>(cqs_by_root_.size()); ++root) {
    const std::vector<int32_t>& cqs = cqs_by_root_[root];
    if (cqs.empty()) continue;
    bool still = !cycle.stirred[root] && root_gen_[root] == cycle.gen_at_start[root] &&
                 !fair_sharing_ && draining_.empty();
    // Every pending workload must have been tried at this generation: all of them
    // were active when the cycle began, or the tree was quiet already.
    still = still && (!cycle.parked_at_start[root] || quiet_[root].gen == root_gen_[root]);
    for (int32_t c : cqs) still = still && cq_pending_[c].Head() == nullptr;
    quiet_[root] = still ? QuietRoot{root_gen_[root], QueueChanges(root)} : QuietRoot{};
  }
}

}  // namespace muster::admission
