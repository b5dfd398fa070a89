#include "admission/quota_tree.h"

#include <algorithm>

#include "core/resource_list.h"

namespace muster::admission {

NodeId QuotaTree::AddNode(std::string name, bool cluster_queue) {
  Node node;
  node.name = std::move(name);
  node.cluster_queue = cluster_queue;
  nodes_.push_back(std::move(node));
  pending_quota_.emplace_back();
  return static_cast<NodeId>(nodes_.size() - 1);
}

void QuotaTree::SetParent(NodeId child, NodeId parent) {
  // A cycle would make the recursion endless; the validator reports it, we ignore
  // the edge that closes it.
  for (NodeId p = parent; p >= 0; p = nodes_[p].parent) {
    if (p == child) return;
  }
  nodes_[child].parent = parent;
  nodes_[parent].children.push_back(child);
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
  size_t n_fr = frs_.size();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    node.quota.assign(n_fr, Quota{});
    node.subtree.assign(n_fr, 0);
    node.usage.assign(n_fr, 0);
    for (const auto& [fr, q] : pending_quota_[i]) node.quota[fr] = q;
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
  Node& node = nodes_[n];
  for (size_t fr = 0; fr < frs_.size(); ++fr) node.subtree[fr] = node.quota[fr].nominal;
  for (NodeId c : node.children) {
    ComputeSubtree(c, done);
    for (FrId fr = 0; fr < FrCount(); ++fr) {
      node.subtree[fr] += nodes_[c].subtree[fr] - GuaranteedQuota(c, fr);
    }
  }
}

void QuotaTree::ComputeCohortUsage(NodeId n) {
  Node& node = nodes_[n];
  if (node.cluster_queue) return;
  std::fill(node.usage.begin(), node.usage.end(), 0);
  for (NodeId c : node.children) {
    ComputeCohortUsage(c);
    for (FrId fr = 0; fr < FrCount(); ++fr) {
      node.usage[fr] += std::max<int64_t>(0, nodes_[c].usage[fr] - GuaranteedQuota(c, fr));
    }
  }
}

Status QuotaTree::ReplaceQuotas(NodeId n, const std::vector<std::pair<FrId, Quota>>& quotas) {
  std::vector<Quota> before = nodes_[n].quota;
  auto recompute = [this] {
    std::vector<bool> done(nodes_.size(), false);
    for (NodeId m = 0; m < NodeCount(); ++m) ComputeSubtree(m, done);
    for (NodeId m = 0; m < NodeCount(); ++m) {
      if (nodes_[m].parent < 0) ComputeCohortUsage(m);
    }
  };
  std::fill(nodes_[n].quota.begin(), nodes_[n].quota.end(), Quota{});
  for (const auto& [fr, q] : quotas) nodes_[n].quota[fr] = q;
  recompute();
  std::vector<std::string> broken = CheckInvariants();
  if (broken.empty()) return Status::Ok();
  nodes_[n].quota = std::move(before);
  recompute();
  return FailedPrecondition(broken.front());
}

NodeId QuotaTree::Root(NodeId n) const {
  while (nodes_[n].parent >= 0) n = nodes_[n].parent;
  return n;
}

int64_t QuotaTree::GuaranteedQuota(NodeId n, FrId fr) const {
  const auto& lending = nodes_[n].quota[fr].lending_limit;
  if (!lending) return 0;
  return std::max<int64_t>(0, nodes_[n].subtree[fr] - *lending);
}

int64_t QuotaTree::Available(NodeId n, FrId fr) const {
  const Node& node = nodes_[n];
  if (node.parent < 0) return node.subtree[fr] - node.usage[fr];
  int64_t guaranteed = GuaranteedQuota(n, fr);
  int64_t local_available = std::max<int64_t>(0, guaranteed - node.usage[fr]);
  int64_t parent_available = Available(node.parent, fr);
  if (const auto& limit = node.quota[fr].borrowing_limit) {
    int64_t stored_in_parent = node.subtree[fr] - guaranteed;
    int64_t used_in_parent = std::max<int64_t>(0, node.usage[fr] - guaranteed);
    int64_t with_max_from_parent = stored_in_parent - used_in_parent + *limit;
    parent_available = std::min(with_max_from_parent, parent_available);
  }
  return local_available + parent_available;
}

int64_t QuotaTree::PotentialAvailable(NodeId n, FrId fr) const {
  const Node& node = nodes_[n];
  if (node.parent < 0) return node.subtree[fr];
  int64_t available = GuaranteedQuota(n, fr) + PotentialAvailable(node.parent, fr);
  if (const auto& limit = node.quota[fr].borrowing_limit) {
    available = std::min(node.subtree[fr] + *limit, available);
  }
  return available;
}

// Usage beyond the unlent local part is stored in the parent, recursively.
void QuotaTree::AddUsage(NodeId n, FrId fr, int64_t amount) {
  Node& node = nodes_[n];
  int64_t local_available = std::max<int64_t>(0, GuaranteedQuota(n, fr) - node.usage[fr]);
  node.usage[fr] += amount;
  if (node.parent >= 0 && amount > local_available) {
    AddUsage(node.parent, fr, amount - local_available);
  }
}

void QuotaTree::RemoveUsage(NodeId n, FrId fr, int64_t amount) {
  Node& node = nodes_[n];
  int64_t stored_in_parent = node.usage[fr] - GuaranteedQuota(n, fr);
  node.usage[fr] -= amount;
  if (stored_in_parent <= 0 || node.parent < 0) return;
  RemoveUsage(node.parent, fr, std::min(amount, stored_in_parent));
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
      int64_t used = node.usage[fr];
      ResourceId res = frs_[fr].second;
      auto describe = [&](const std::string& limit_name, int64_t limit) {
        return what + node.name + ": usage of " + ResourceNames::Name(res) + " (" +
               ResourceList::FormatAmount(res, used) + ") exceeds " + limit_name + " " +
               ResourceList::FormatAmount(res, limit);
      };
      if (used < 0)
        out.push_back(what + node.name + ": negative usage of " + ResourceNames::Name(res));
      if (node.parent < 0 && used > node.subtree[fr]) {
        out.push_back(describe("its quota", node.subtree[fr]));
      }
      const auto& limit = node.quota[fr].borrowing_limit;
      if (node.parent >= 0 && limit && used > node.subtree[fr] + *limit) {
        out.push_back(describe("quota plus borrowingLimit", node.subtree[fr] + *limit));
      }
    }
  }
  return out;
}

}  // namespace muster::admission
