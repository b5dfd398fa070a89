// MakeAdmitter: compiles the manifests' queue objects into the quota tree, the
// ClusterQueue specs, LocalQueues and Volcano queues.
#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "admission/admitter_impl.h"

namespace muster::admission {
namespace {

Quota ToQuota(ResourceId id, const model::ResourceQuota& rq) {
  Quota q;
  q.nominal = ResourceList::Amount(id, rq.nominal_quota);
  if (rq.borrowing_limit) q.borrowing_limit = ResourceList::Amount(id, *rq.borrowing_limit);
  if (rq.lending_limit) q.lending_limit = ResourceList::Amount(id, *rq.lending_limit);
  return q;
}

}  // namespace

Result<std::unique_ptr<AdmitterImpl>> AdmitterImpl::Build(const model::ManifestSet& m) {
  std::unique_ptr<AdmitterImpl> a(new AdmitterImpl());
  for (const auto& rf : m.resource_flavors) {
    if (a->flavors_.Find(rf.meta.name)) {
      return InvalidArgument("ResourceFlavor " + rf.meta.name + " defined twice");
    }
    a->flavors_.flavors.push_back(rf);
    a->flavors_.defined.push_back(true);
  }

  // Cohort nodes: explicit Cohort objects first, then names only referenced.
  std::map<std::string, NodeId> cohorts;
  auto cohort_node = [&](const std::string& name) {
    auto it = cohorts.find(name);
    if (it != cohorts.end()) return it->second;
    NodeId n = a->tree_.AddNode(name, false);
    cohorts.emplace(name, n);
    return n;
  };
  for (const auto& c : m.cohorts) {
    if (cohorts.count(c.meta.name))
      return InvalidArgument("Cohort " + c.meta.name + " defined twice");
    cohort_node(c.meta.name);
  }
  // Quotas are set on nodes through `resource_groups`; shared by CQs and Cohorts.
  auto set_quotas = [&](NodeId node, const std::vector<model::ResourceGroup>& groups,
                        ClusterQueueSpec* spec) {
    for (const auto& g : groups) {
      CompiledResourceGroup cg;
      for (const auto& r : g.covered_resources) cg.covered.push_back(ResourceNames::Intern(r));
      for (const auto& fq : g.flavors) {
        int32_t f = a->flavors_.Intern(fq.name);
        if (!a->flavors_.defined[f] && spec && spec->inactive_message.empty()) {
          spec->inactive_message =
              "ClusterQueue " + spec->name + " is inactive: flavor " + fq.name + " not found";
        }
        cg.flavors.push_back(f);
        for (ResourceId r : cg.covered) a->tree_.InternFr(f, r);  // unlisted = 0 quota
        for (const auto& rq : fq.resources) {
          ResourceId id = ResourceNames::Intern(rq.name);
          a->tree_.SetQuota(node, a->tree_.InternFr(f, id), ToQuota(id, rq));
        }
      }
      if (spec) spec->groups.push_back(std::move(cg));
    }
  };
  std::map<NodeId, int64_t> weights;  // fairSharing.weight of explicit Cohorts
  for (const auto& c : m.cohorts) {
    NodeId n = cohorts.at(c.meta.name);
    if (!c.parent.empty()) a->tree_.SetParent(n, cohort_node(c.parent));
    set_quotas(n, c.resource_groups, nullptr);
    weights[n] = c.fair_sharing.weight_milli;
  }
  // By name, for the duplicate check and the LocalQueues below (a search of every
  // queue per queue was O(queues^2) at start-up and on every configuration change).
  std::unordered_map<std::string_view, int32_t> cq_index;
  cq_index.reserve(m.cluster_queues.size());
  for (const auto& cq : m.cluster_queues) {
    if (!cq_index.emplace(cq.meta.name, static_cast<int32_t>(a->cqs_.size())).second) {
      return InvalidArgument("ClusterQueue " + cq.meta.name + " defined twice");
    }
    ClusterQueueSpec spec;
    spec.name = cq.meta.name;
    spec.node = a->tree_.AddNode(cq.meta.name, true);
    if (!cq.cohort.empty()) a->tree_.SetParent(spec.node, cohort_node(cq.cohort));
    spec.strategy = cq.queueing_strategy;
    spec.namespace_selector = cq.namespace_selector;
    spec.preemption = cq.preemption;
    spec.fungibility = cq.flavor_fungibility;
    spec.fair_weight_milli = cq.fair_sharing.weight_milli;
    weights[spec.node] = cq.fair_sharing.weight_milli;
    spec.stop_policy = cq.stop_policy;
    spec.terminating = cq.terminating;
    set_quotas(spec.node, cq.resource_groups, &spec);
    a->cqs_.push_back(std::move(spec));
  }
  a->tree_.Finalize();
  // Cohorts only named by a ClusterQueue have the default weight 1.
  a->node_weight_.assign(a->tree_.NodeCount(), 1000);
  for (const auto& [node, w] : weights) a->node_weight_[node] = w;
  a->root_gen_.assign(a->tree_.NodeCount(), 0);
  a->admitted_gen_.assign(a->tree_.NodeCount(), 0);

  size_t n = a->cqs_.size();
  a->cq_pending_.resize(n);
  a->cq_admitted_.resize(n);
  a->cq_by_name_.resize(n);
  std::iota(a->cq_by_name_.begin(), a->cq_by_name_.end(), 0);
  std::sort(a->cq_by_name_.begin(), a->cq_by_name_.end(),
            [&](int32_t x, int32_t y) { return a->cqs_[x].name < a->cqs_[y].name; });
  a->cq_name_rank_.resize(n);
  for (size_t r = 0; r < n; ++r) a->cq_name_rank_[a->cq_by_name_[r]] = static_cast<int32_t>(r);
  a->cq_root_.resize(n);
  a->cqs_by_root_.resize(static_cast<size_t>(a->tree_.NodeCount()));
  a->admitted_by_root_.assign(static_cast<size_t>(a->tree_.NodeCount()), {-1, {}});
  for (int32_t i : a->cq_by_name_) {
    a->cq_root_[i] = a->tree_.Root(a->cqs_[i].node);
    a->cqs_by_root_[a->cq_root_[i]].push_back(i);
  }

  for (const auto& ns : m.namespaces) a->namespace_labels_[ns.meta.name] = ns.meta.labels;
  for (const auto& lq : m.local_queues) {
    LocalQueueState s;
    s.name = lq.meta.name;
    s.cluster_queue = lq.cluster_queue;
    s.stop = lq.stop_policy;
    if (auto it = cq_index.find(lq.cluster_queue); it != cq_index.end()) s.cq = it->second;
    const std::string ns = NamespaceOf(lq.meta.namespace_);
    a->local_queues_[ns + "/" + lq.meta.name] = s;
  }

  // Volcano always has a "default" queue (weight 1, reclaimable).
  bool has_default = false;
  for (const auto& q : m.volcano_queues) {
    if (a->volcano_.Find(q.meta.name))
      return InvalidArgument("Volcano Queue " + q.meta.name + " defined twice");
    a->volcano_.AddQueue(q);
    has_default |= q.meta.name == "default";
  }
  if (!has_default) {
    model::VolcanoQueue def;
    def.meta.name = "default";
    a->volcano_.AddQueue(def);
  }
  a->volcano_.SetParents();
  a->vq_pending_.resize(a->volcano_.size());
  a->vq_admitted_.resize(a->volcano_.size());
  ResourceList total;
  for (const auto& node : m.nodes) {
    if (!node.unschedulable) total += node.allocatable;
  }
  a->volcano_.SetTotal(total);

  if (m.scheduler_config) a->volcano_cfg_ = m.scheduler_config->volcano;
  if (m.kueue_config) {
    a->fair_sharing_ = m.kueue_config->fair_sharing.enable;
    a->fair_sharing_config_ = m.kueue_config->fair_sharing;
  }
  return a;
}

Status AdmitterImpl::UpdateQuotas(const std::string& name,
                                  const std::vector<model::ResourceGroup>& groups) {
  const ClusterQueueSpec* spec = nullptr;
  NodeId node = -1;
  if (std::optional<int32_t> cq = FindClusterQueue(name)) {
    spec = &cqs_[*cq];
    node = spec->node;
  } else {
    for (NodeId n = 0; n < tree_.NodeCount() && node < 0; ++n) {
      if (!tree_.IsClusterQueue(n) && tree_.Name(n) == name) node = n;
    }
  }
  if (node < 0) return NotFound("no ClusterQueue or Cohort " + name);
  auto refuse = [&](const std::string& why) {
    return FailedPrecondition(name + ": " + why + "; the queues are rebuilt");
  };
  // The same groups, resources and flavors as compiled before: only the numbers move.
  if (spec != nullptr && spec->groups.size() != groups.size()) return refuse("resource groups");
  std::vector<std::pair<FrId, Quota>> quotas;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<ResourceId> covered;
    for (const auto& r : groups[g].covered_resources) covered.push_back(ResourceNames::Intern(r));
    std::vector<int32_t> flavors;
    for (const auto& fq : groups[g].flavors) {
      std::optional<int32_t> f = flavors_.Find(fq.name);
      if (!f) return refuse("flavor " + fq.name);
      flavors.push_back(*f);
      for (const auto& rq : fq.resources) {
        ResourceId id = ResourceNames::Intern(rq.name);
        std::optional<FrId> fr = tree_.FindFr(*f, id);
        if (!fr) return refuse("resource " + rq.name + " of flavor " + fq.name);
        quotas.emplace_back(*fr, ToQuota(id, rq));
      }
    }
    if (spec != nullptr &&
        (spec->groups[g].covered != covered || spec->groups[g].flavors != flavors)) {
      return refuse("resource groups");
    }
  }
  if (Status s = tree_.ReplaceQuotas(node, quotas); !s.ok()) return refuse(s.message());
  // The tree's cached assignments and candidate lists read the old quotas, and its
  // parked workloads may fit now (Kueue requeues the cohort's inadmissible ones).
  // Fair sharing compares shares across trees: then every tree is looked at again.
  if (fair_sharing_) {
    DropCaches();
    NotifyCapacityChanged();
    return Status::Ok();
  }
  const NodeId root = tree_.Root(node);
  root_gen_[root] = ++generation_;
  unpark_due_.resize(root_gen_.size(), 0);
  unpark_due_[root] = 1;
  return Status::Ok();
}

Result<std::unique_ptr<Admitter>> MakeAdmitter(const model::ManifestSet& manifests) {
  auto built = AdmitterImpl::Build(manifests);
  if (!built.ok()) return built.status();
  return std::unique_ptr<Admitter>(std::move(built).value());
}

}  // namespace muster::admission
