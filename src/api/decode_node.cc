// v1 Node, topology.node.k8s.io NodeResourceTopology, scheduling.k8s.io PriorityClass.
#include <cctype>
#include <string>

#include "api/decode_common.h"
#include "core/duration.h"

namespace muster::api::internal {
namespace {

// Reads one sim.muster.dev/* annotation into `out` (seconds from 0).
void ReadSimAnnotation(const YamlValue& root, const model::ObjectMeta& meta, const char* key,
                       std::optional<double>& out) {
  auto it = meta.annotations.find(key);
  if (it == meta.annotations.end()) return;
  auto seconds = ParseDurationSeconds(it->second);
  if (seconds.ok() && *seconds < 0)
    seconds = InvalidArgument("\"" + it->second + "\" must not be negative");
  if (seconds.ok()) {
    out = *seconds;
    return;
  }
  YamlValue field = root.Get("metadata").Get("annotations").Get(key);
  YamlValue(YAML::Node(), "metadata.annotations[" + std::string(key) + "]", field.line(),
            &root.ctx())
      .Error(seconds.status().message());
}

// Resources of a zone: a list of {name, capacity, allocatable, available}.
ResourceList ZoneResources(const YamlValue& v) {
  std::map<std::string, Quantity> named;
  for (const auto& r : v.Items()) {
    std::string name;
    r.Get("name").Read(name);
    if (name.empty()) {
      r.Get("name").Error("is required");
      continue;
    }
    // allocatable, else capacity; `available` is the exporter's view of usage, which
    // muster keeps itself from its own bindings.
    r.Known({"capacity", "available"});
    YamlValue amount = r.Get("allocatable").IsSet() ? r.Get("allocatable") : r.Get("capacity");
    if (!amount.IsSet()) {
      amount.Error("is required (allocatable or capacity)");
      continue;
    }
    if (auto q = amount.ResourceQty(name, QuantityScope::kNode)) named[name] = *q;
  }
  return ResourceList::FromQuantities(named);
}

// The zone id is the trailing number of its name ("node-1" -> 1), as NUMA ids are.
int ZoneId(const std::string& name, int index) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size() || name.size() - i > 6) return index;
  return std::stoi(name.substr(i));
}

}  // namespace

// Its labels are in `meta`; its finalizers and phase are the API server's business.
void DecodeNamespace(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  root.Known({"spec", "status"});
  model::Namespace ns;
  ns.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.namespaces.push_back(std::move(ns));
}

void DecodeNode(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::Node node;
  YamlValue status = root.Get("status");
  YamlValue allocatable = status.Get("allocatable");
  YamlValue capacity = status.Get("capacity");
  // Read both so a malformed capacity is reported even when allocatable wins.
  auto alloc = allocatable.QuantityMap(QuantityScope::kNode);
  auto cap = capacity.QuantityMap(QuantityScope::kNode);
  node.allocatable = ResourceList::FromQuantities(allocatable.IsSet() ? alloc : cap);
  YamlValue spec = root.Get("spec");
  node.taints = DecodeTaints(spec.Get("taints"));
  spec.Get("unschedulable").Read(node.unschedulable);
  ReadSimAnnotation(root, meta, "sim.muster.dev/fail-at", node.sim.fail_at);
  ReadSimAnnotation(root, meta, "sim.muster.dev/recover-at", node.sim.recover_at);
  ReadSimAnnotation(root, meta, "sim.muster.dev/reclaim-at", node.sim.reclaim_at);
  node.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.nodes.push_back(std::move(node));
}

void DecodeNodeResourceTopology(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  using Policy = model::TopologyManagerPolicy;
  using Scope = model::TopologyManagerScope;
  model::NodeTopology topo;
  // Older objects list one combined policy; newer ones use attributes, which win.
  for (const auto& p : root.Get("topologyPolicies").Items()) {
    auto which = p.Enum({"None", "BestEffort", "Restricted", "SingleNUMANodeContainerLevel",
                         "SingleNUMANodePodLevel"});
    if (!which) continue;
    static const Policy kPolicy[] = {Policy::kNone, Policy::kBestEffort, Policy::kRestricted,
                                     Policy::kSingleNumaNode, Policy::kSingleNumaNode};
    topo.policy = kPolicy[*which];
    topo.scope = *which == 4 ? Scope::kPod : Scope::kContainer;
  }
  for (const auto& a : root.Get("attributes").Items()) {
    std::string name;
    a.Get("name").Read(name);
    YamlValue value = a.Get("value");
    if (name == "topologyManagerPolicy") {
      if (auto p = value.Enum({"none", "best-effort", "restricted", "single-numa-node"})) {
        topo.policy = static_cast<Policy>(*p);
      }
    } else if (name == "topologyManagerScope") {
      if (auto s = value.Enum({"container", "pod"})) topo.scope = static_cast<Scope>(*s);
    }
  }
  int index = 0;
  for (const auto& z : root.Get("zones").Items()) {
    model::NumaZone zone;
    z.Get("name").Read(zone.name);
    if (zone.name.empty()) z.Get("name").Error("is required");
    std::string type = "Node";
    z.Get("type").Read(type);
    int position = index++;
    // Only NUMA-node zones hold resources a pod can be aligned to.
    if (type != "Node") continue;
    zone.id = ZoneId(zone.name, position);
    zone.allocatable = ZoneResources(z.Get("resources"));
    for (const auto& c : z.Get("costs").Items()) {
      std::string to;
      c.Get("name").Read(to);
      if (auto v = c.Get("value").Int(0, INT64_MAX)) zone.costs[to] = *v;
    }
    topo.zones.push_back(std::move(zone));
  }
  topo.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.node_topologies.push_back(std::move(topo));
}

void DecodePriorityClass(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::PriorityClass pc;
  root.Known({"description"});
  YamlValue value = root.Get("value");
  if (!value.IsSet()) value.Error("is required");
  if (auto v = value.Int(INT32_MIN, INT32_MAX)) pc.value = static_cast<int32_t>(*v);
  root.Get("globalDefault").Read(pc.global_default);
  YamlValue policy = root.Get("preemptionPolicy");
  if (policy.IsSet()) {
    if (auto p = policy.Enum({"PreemptLowerPriority", "Never"})) pc.preemption_never = *p == 1;
  }
  pc.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.priority_classes.push_back(std::move(pc));
}

}  // namespace muster::api::internal
