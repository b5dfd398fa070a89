// kueue.x-k8s.io v1beta1 / v1beta2: ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
// WorkloadPriorityClass, Topology. Both versions decode to the same structs.
#include <map>
#include <set>
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

std::optional<Quantity> QuotaField(const YamlValue& v, const std::string& resource) {
  return v.IsSet() ? v.ResourceQty(resource, QuantityScope::kQuota) : std::nullopt;
}

// spec.resourceGroups with the checks Kueue's webhook makes inside one object: a
// flavor appears in one group only, a resource is covered by one group only, and
// every flavor sets a quota for exactly the covered resources.
std::vector<model::ResourceGroup> DecodeResourceGroups(const YamlValue& v) {
  std::vector<model::ResourceGroup> groups;
  std::map<std::string, std::string> flavor_seen;    // flavor -> path of first use
  std::map<std::string, std::string> resource_seen;  // resource -> path of its group
  for (const auto& g : v.Items()) {
    model::ResourceGroup group;
    YamlValue covered = g.Get("coveredResources");
    for (const auto& c : covered.Items()) {
      std::string name;
      c.Read(name);
      auto [it, inserted] = resource_seen.emplace(name, g.path());
      if (!inserted) {
        c.Error("resource " + Quote(name) + " is already covered by " + it->second +
                "; each resource belongs to one resource group");
      }
      group.covered_resources.push_back(name);
    }
    if (!covered.IsSet()) covered.Error("is required");
    std::set<std::string> covered_set(group.covered_resources.begin(),
                                      group.covered_resources.end());
    for (const auto& f : g.Get("flavors").Items()) {
      model::FlavorQuotas fq;
      f.Get("name").Read(fq.name);
      if (fq.name.empty()) {
        f.Get("name").Error("is required");
      } else {
        auto [it, inserted] = flavor_seen.emplace(fq.name, f.path());
        if (!inserted) {
          f.Get("name").Error("flavor " + Quote(fq.name) + " is already listed at " + it->second +
                              "; a flavor appears once per ClusterQueue");
        }
        f.Get("name").Ref("ResourceFlavor", "", fq.name);
      }
      YamlValue resources = f.Get("resources");
      std::set<std::string> quota_set;
      for (const auto& r : resources.Items()) {
        model::ResourceQuota q;
        r.Get("name").Read(q.name);
        if (q.name.empty()) {
          r.Get("name").Error("is required");
        } else if (!covered_set.count(q.name)) {
          r.Get("name").Error(Quote(q.name) + " is not in coveredResources of this resource group");
        } else if (!quota_set.insert(q.name).second) {
          r.Get("name").Error(Quote(q.name) + " is listed twice");
        }
        YamlValue nominal = r.Get("nominalQuota");
        if (!nominal.IsSet()) nominal.Error("is required");
        if (auto n = QuotaField(nominal, q.name)) q.nominal_quota = *n;
        q.borrowing_limit = QuotaField(r.Get("borrowingLimit"), q.name);
        q.lending_limit = QuotaField(r.Get("lendingLimit"), q.name);
        if (q.lending_limit && nominal.IsSet() && *q.lending_limit > q.nominal_quota) {
          r.Get("lendingLimit")
              .Error("must be less than or equal to nominalQuota (" + q.nominal_quota.ToString() +
                     ")");
        }
        fq.resources.push_back(std::move(q));
      }
      if (resources.IsList() && fq.resources.size() != group.covered_resources.size()) {
        resources.Error("has " + std::to_string(fq.resources.size()) +
                        " resources but coveredResources lists " +
                        std::to_string(group.covered_resources.size()) +
                        "; every flavor needs a nominalQuota for each covered resource");
      }
      group.flavors.push_back(std::move(fq));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

model::FairSharingSpec DecodeFairSharing(const YamlValue& v) {
  model::FairSharingSpec fs;
  // A weight is a plain number: bounded like cpu so its milli value fits int64.
  if (auto w = QuotaField(v.Get("weight"), "weight")) fs.weight_milli = w->MilliValue();
  return fs;
}

model::StopPolicy DecodeStopPolicy(const YamlValue& v) {
  if (!v.IsSet()) return model::StopPolicy::kNone;
  if (auto p = v.Enum({"None", "Hold", "HoldAndDrain"})) return static_cast<model::StopPolicy>(*p);
  return model::StopPolicy::kNone;
}

model::ClusterQueuePreemption DecodePreemption(const YamlValue& v) {
  using P = model::PreemptionPolicy;
  model::ClusterQueuePreemption p;
  YamlValue within = v.Get("withinClusterQueue");
  if (within.IsSet()) {
    static const P kWithin[] = {P::kNever, P::kLowerPriority, P::kLowerOrNewerEqualPriority};
    if (auto e = within.Enum({"Never", "LowerPriority", "LowerOrNewerEqualPriority"})) {
      p.within_cluster_queue = kWithin[*e];
    }
  }
  YamlValue reclaim = v.Get("reclaimWithinCohort");
  if (reclaim.IsSet()) {
    static const P kReclaim[] = {P::kNever, P::kLowerPriority, P::kAny};
    if (auto e = reclaim.Enum({"Never", "LowerPriority", "Any"})) {
      p.reclaim_within_cohort = kReclaim[*e];
    }
  }
  YamlValue borrow = v.Get("borrowWithinCohort");
  YamlValue policy = borrow.Get("policy");
  if (policy.IsSet()) {
    if (auto e = policy.Enum({"Never", "LowerPriority"})) {
      p.borrow_within_cohort.policy = *e == 0 ? P::kNever : P::kLowerPriority;
    }
  }
  if (auto t = borrow.Get("maxPriorityThreshold").Int(INT32_MIN, INT32_MAX)) {
    p.borrow_within_cohort.max_priority_threshold = static_cast<int32_t>(*t);
  }
  return p;
}

// v1beta1 writes the "stop searching" choice as Borrow / Preempt, v1beta2 as
// MayStopSearch; either spelling is accepted in both versions.
model::FlavorFungibility DecodeFungibility(const YamlValue& v) {
  using F = model::FungibilityPolicy;
  model::FlavorFungibility f;
  YamlValue borrow = v.Get("whenCanBorrow");
  if (borrow.IsSet()) {
    if (auto e = borrow.Enum({"Borrow", "MayStopSearch", "TryNextFlavor"})) {
      f.when_can_borrow = *e == 2 ? F::kTryNextFlavor : F::kMayStopSearch;
    }
  }
  YamlValue preempt = v.Get("whenCanPreempt");
  if (preempt.IsSet()) {
    if (auto e = preempt.Enum({"Preempt", "MayStopSearch", "TryNextFlavor"})) {
      f.when_can_preempt = *e == 2 ? F::kTryNextFlavor : F::kMayStopSearch;
    }
  }
  YamlValue pref = v.Get("preference");
  if (pref.IsSet()) {
    if (auto e = pref.Enum({"BorrowingOverPreemption", "PreemptionOverBorrowing"})) {
      f.preference = *e == 0 ? model::FlavorPreference::kBorrowingOverPreemption
                             : model::FlavorPreference::kPreemptionOverBorrowing;
    }
  }
  return f;
}

}  // namespace

void DecodeResourceFlavor(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::ResourceFlavor rf;
  YamlValue spec = root.Get("spec");
  rf.node_labels = spec.Get("nodeLabels").StringMap();
  rf.node_taints = DecodeTaints(spec.Get("nodeTaints"));
  rf.tolerations = DecodeTolerations(spec.Get("tolerations"));
  spec.Get("topologyName").Read(rf.topology_name);
  if (!rf.topology_name.empty()) spec.Get("topologyName").Ref("Topology", "", rf.topology_name);
  rf.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.resource_flavors.push_back(std::move(rf));
}

void DecodeClusterQueue(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::ClusterQueue cq;
  YamlValue spec = root.Get("spec");
  YamlValue cohort = spec.Get("cohortName").IsSet() ? spec.Get("cohortName") : spec.Get("cohort");
  cohort.Read(cq.cohort);
  // Cohorts may exist only implicitly; the reference serves the cycle check.
  if (!cq.cohort.empty()) cohort.Ref("Cohort", "", cq.cohort);
  cq.resource_groups = DecodeResourceGroups(spec.Get("resourceGroups"));
  YamlValue strategy = spec.Get("queueingStrategy");
  if (strategy.IsSet()) {
    if (auto s = strategy.Enum({"StrictFIFO", "BestEffortFIFO"})) {
      cq.queueing_strategy =
          *s == 0 ? model::QueueingStrategy::kStrictFIFO : model::QueueingStrategy::kBestEffortFIFO;
    }
  }
  // Absent or null matches no namespace; {} matches every namespace.
  YamlValue selector = spec.Get("namespaceSelector");
  if (selector.IsSet()) cq.namespace_selector = DecodeLabelSelector(selector);
  cq.preemption = DecodePreemption(spec.Get("preemption"));
  cq.flavor_fungibility = DecodeFungibility(spec.Get("flavorFungibility"));
  cq.fair_sharing = DecodeFairSharing(spec.Get("fairSharing"));
  cq.stop_policy = DecodeStopPolicy(spec.Get("stopPolicy"));
  // Kueue's TerminateClusterQueue: being deleted, it admits nothing new and what it
  // admitted runs on.
  cq.terminating = root.Get("metadata").Get("deletionTimestamp").IsSet();
  if (cq.terminating && cq.stop_policy == model::StopPolicy::kNone)
    cq.stop_policy = model::StopPolicy::kHold;
  cq.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.cluster_queues.push_back(std::move(cq));
}

void DecodeLocalQueue(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::LocalQueue lq;
  YamlValue spec = root.Get("spec");
  YamlValue cq = spec.Get("clusterQueue");
  cq.Read(lq.cluster_queue);
  if (lq.cluster_queue.empty()) {
    cq.Error("is required");
  } else {
    cq.Ref("ClusterQueue", "", lq.cluster_queue);
  }
  lq.stop_policy = DecodeStopPolicy(spec.Get("stopPolicy"));
  lq.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.local_queues.push_back(std::move(lq));
}

void DecodeCohort(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::Cohort c;
  YamlValue spec = root.Get("spec");
  // v1alpha1 spelled the field `parent`.
  YamlValue parent = spec.Get("parentName").IsSet() ? spec.Get("parentName") : spec.Get("parent");
  parent.Read(c.parent);
  if (!c.parent.empty()) parent.Ref("Cohort", "", c.parent);
  c.resource_groups = DecodeResourceGroups(spec.Get("resourceGroups"));
  c.fair_sharing = DecodeFairSharing(spec.Get("fairSharing"));
  c.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.cohorts.push_back(std::move(c));
}

void DecodeWorkloadPriorityClass(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::WorkloadPriorityClass wpc;
  root.Known({"description"});
  YamlValue value = root.Get("value");
  if (!value.IsSet()) value.Error("is required");
  if (auto v = value.Int(INT32_MIN, INT32_MAX)) wpc.value = static_cast<int32_t>(*v);
  wpc.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.workload_priority_classes.push_back(std::move(wpc));
}

void DecodeTopology(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::Topology t;
  YamlValue levels = root.Get("spec").Get("levels");
  std::set<std::string> seen;
  for (const auto& l : levels.Items()) {
    std::string label;
    l.Get("nodeLabel").Read(label);
    if (label.empty()) {
      l.Get("nodeLabel").Error("is required");
    } else if (!seen.insert(label).second) {
      l.Get("nodeLabel").Error(Quote(label) + " is already a level; levels must be distinct");
    }
    t.levels.push_back(label);
  }
  if (t.levels.empty()) levels.Error("is required (at least one level)");
  t.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.topologies.push_back(std::move(t));
}

}  // namespace muster::api::internal
