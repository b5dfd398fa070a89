#include "admission/quota_tree.h"

#include <algorithm>

#include "core/resource_list.h"

namespace muster::admission {

NodeId QuotaTree::AddNode(std::string name, bool cluster_queue) {
  Node node;
  node.name = std::move(name);
  node.cluster_queue = cluster_queue;
  nodes_.push_back(std::move(node));
  const auto id = static_cast<NodeId>(nodes_.size() - 1);
  parent_.push_back(-1);
  root_.push_back(id);
  pending_quota_.emplace_back();
  return id;
}

void QuotaTree::SetParent(NodeId child, NodeId parent) {
  // A cycle would make the recursion endless; the validator reports it, we ignore
  // the edge that closes it.
  for (NodeId p = parent; p >= 0; p = parent_[p]) {
    if (p == child) return;
  }
  parent_[child] = parent;
  nodes_[parent].children.push_back(child);
  // The child's subtree now hangs under the parent's root.
  const NodeId root = root_[parent];
  std::vector<NodeId> stack{child};
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    root_[n] = root;
    stack.insert(stack.end(), nodes_[n].children.begin(), nodes_[n].children.end());
  }
}

FrId QuotaTree::InternFr(int32_t flavor, ResourceId resource) {
  auto [it, inserted] = fr_ids_.emplace(std::make_pair(flavor, resource), FrId{0});
  if (inserted) {
    it->second = static_cast<FrId>(frs_.size());
    frs_.emplace_back(flavor, resource);
  }
  return it->second;
}

std::optional<FrId> QuotaTree::FindFr(int32_t flavor, ResourceId resource) const {
  auto it = fr_ids_.find({flavor, resource});
  if (it == fr_ids_.end()) return std::nullopt;
  return it->second;
}

void QuotaTree::SetQuota(NodeId node, FrId fr, const Quota& quota) {
  pending_quota_[node].emplace_back(fr, quota);
}

void QuotaTree::Finalize() {
  cells_.assign(nodes_.size() * frs_.size(), FrCell{});
  for (NodeId n = 0; n < NodeCount(); ++n) {
    for (const auto& [fr, q] : pending_quota_[static_cast<size_t>(n)]) Cell(n, fr).quota = q;
  }
  pending_quota_.clear();
  std::vector<bool> done(nodes_.size(), false);
  for (NodeId n = 0; n < NodeCount(); ++n) ComputeSubtree(n, done);
}

// SubtreeQuota(node) = own nominal + what each child lends up (its subtree quota
// minus its guaranteed part), as updateCohortResourceNode does.
void QuotaTree::ComputeSubtree(NodeId n, std::vector<bool>& done) {
  if (done[n]) return;
  done[n] = true;
  for (FrId fr = 0; fr < FrCount(); ++fr) Cell(n, fr).subtree = Cell(n, fr).quota.nominal;
  for (NodeId c : nodes_[n].children) {
    ComputeSubtree(c, done);
    for (FrId fr = 0; fr < FrCount(); ++fr) {
      Cell(n, fr).subtree += Cell(c, fr).subtree - Cell(c, fr).guaranteed;
    }
  }
  for (FrId fr = 0; fr < FrCount(); ++fr) {
    FrCell& cell = Cell(n, fr);
    const auto& lending = cell.quota.lending_limit;
    cell.guaranteed = lending ? std::max<int64_t>(0, cell.subtree - *lending) : 0;
  }
}

void QuotaTree::ComputeCohortUsage(NodeId n) {
  if (nodes_[n].cluster_queue) return;
  for (FrId fr = 0; fr < FrCount(); ++fr) Cell(n, fr).usage = 0;
  for (NodeId c : nodes_[n].children) {
    ComputeCohortUsage(c);
    for (FrId fr = 0; fr < FrCount(); ++fr) {
      Cell(n, fr).usage += std::max<int64_t>(0, Cell(c, fr).usage - Cell(c, fr).guaranteed);
    }
  }
}

Status QuotaTree::ReplaceQuotas(NodeId n, const std::vector<std::pair<FrId, Quota>>& quotas) {
  std::vector<Quota> before(frs_.size());
  for (FrId fr = 0; fr < FrCount(); ++fr) before[static_cast<size_t>(fr)] = Cell(n, fr).quota;
  auto recompute = [this] {
    std::vector<bool> done(nodes_.size(), false);
    for (NodeId m = 0; m < NodeCount(); ++m) ComputeSubtree(m, done);
    for (NodeId m = 0; m < NodeCount(); ++m) {
      if (parent_[m] < 0) ComputeCohortUsage(m);
    }
  };
  for (FrId fr = 0; fr < FrCount(); ++fr) Cell(n, fr).quota = Quota{};
  for (const auto& [fr, q] : quotas) Cell(n, fr).quota = q;
  recompute();
  std::vector<std::string> broken = CheckInvariants();
  if (broken.empty()) return Status::Ok();
  for (FrId fr = 0; fr < FrCount(); ++fr) Cell(n, fr).quota = before[static_cast<size_t>(fr)];
  recompute();
  return FailedPrecondition(broken.front());
}

int64_t QuotaTree::Available(NodeId n, FrId fr) const {
  const FrCell& cell = Cell(n, fr);
  const NodeId parent = parent_[n];
  if (parent < 0) return cell.subtree - cell.usage;
  int64_t guaranteed = cell.guaranteed;
  int64_t local_available = std::max<int64_t>(0, guaranteed - cell.usage);
  int64_t parent_available = Available(parent, fr);
  if (const auto& limit = cell.quota.borrowing_limit) {
    int64_t stored_in_parent = cell.subtree - guaranteed;
    int64_t used_in_parent = std::max<int64_t>(0, cell.usage - guaranteed);
    int64_t with_max_from_parent = stored_in_parent - used_in_parent + *limit;
    parent_available = std::min(with_max_from_parent, parent_available);
  }
  return local_available + parent_available;
}

int64_t QuotaTree::PotentialAvailable(NodeId n, FrId fr) const {
  const FrCell& cell = Cell(n, fr);
  const NodeId parent = parent_[n];
  if (parent < 0) return cell.subtree;
  int64_t available = cell.guaranteed + PotentialAvailable(parent, fr);
  if (const auto& limit = cell.quota.borrowing_limit) {
    available = std::min(cell.subtree + *limit, available);
  }
  return available;
}

// Usage beyond the unlent local part is stored in the parent, recursively.
void QuotaTree::AddUsage(NodeId n, FrId fr, int64_t amount) {
  FrCell& cell = Cell(n, fr);
  int64_t local_available = std::max<int64_t>(0, cell.guaranteed - cell.usage);
  cell.usage += amount;
  if (parent_[n] >= 0 && amount > local_available) {
    AddUsage(parent_[n], fr, amount - local_available);
  }
}

void QuotaTree::RemoveUsage(NodeId n, FrId fr, int64_t amount) {
  FrCell& cell = Cell(n, fr);
  int64_t stored_in_parent = cell.usage - cell.guaranteed;
  cell.usage -= amount;
  if (stored_in_parent <= 0 || parent_[n] < 0) return;
  RemoveUsage(parent_[n], fr, std::min(amount, stored_in_parent));
}

void QuotaTree::AddUsage(NodeId n, const FrAmounts& amounts) {
  for (const auto& [fr, v] : amounts) AddUsage(n, fr, v);
}

void QuotaTree::RemoveUsage(NodeId n, const FrAmounts& amounts) {
  for (const auto& [fr, v] : amounts) RemoveUsage(n, fr, v);
}

std::vector<std::string> QuotaTree::CheckInvariants() const {
  std::vector<std::string> out;
  for (NodeId n = 0; n < NodeCount(); ++n) {
    const Node& node = nodes_[n];
    const char* what = node.cluster_queue ? "ClusterQueue " : "Cohort ";
    for (FrId fr = 0; fr < FrCount(); ++fr) {
      const FrCell& cell = Cell(n, fr);
      int64_t used = cell.usage;
      ResourceId res = frs_[fr].second;
      auto describe = [&](const std::string& limit_name, int64_t limit) {
        return what + node.name + ": usage of " + ResourceNames::Name(res) + " (" +
               ResourceList::FormatAmount(res, used) + ") exceeds " + limit_name + " " +
               ResourceList::FormatAmount(res, limit);
      };
      if (used < 0)
        out.push_back(what + node.name + ": negative usage of " + ResourceNames::Name(res));
      if (parent_[n] < 0 && used > cell.subtree) {
        out.push_back(describe("its quota", cell.subtree));
      }
      const auto& limit = cell.quota.borrowing_limit;
      if (parent_[n] >= 0 && limit && used > cell.subtree + *limit) {
        out.push_back(describe("quota plus borrowingLimit", cell.subtree + *limit));
      }
    }
  }
  return out;
}

}  // namespace muster::admission
