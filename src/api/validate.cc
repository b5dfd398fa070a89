// ValidateCrossObject: problems that need more than one object to see.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "api/decode.h"
#include "api/yaml_value.h"

namespace muster::api {
namespace {

std::string Group(const std::string& api_version) {
  auto slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

Diagnostic At(const model::ObjectMeta& meta, std::string field, std::string message, bool warning) {
  Diagnostic d;
  d.file = meta.source.file;
  d.line = meta.source.line;
  d.kind = meta.kind;
  d.namespace_ = meta.namespace_;
  d.name = meta.name;
  d.field = std::move(field);
  d.message = std::move(message);
  d.warning = warning;
  return d;
}

// Every object of the set, for checks that treat all kinds alike.
void ForEachMeta(const model::ManifestSet& m,
                 const std::function<void(const model::ObjectMeta&)>& fn) {
  for (const auto& o : m.nodes) fn(o.meta);
  for (const auto& o : m.namespaces) fn(o.meta);
  for (const auto& o : m.node_topologies) fn(o.meta);
  for (const auto& o : m.priority_classes) fn(o.meta);
  for (const auto& o : m.resource_flavors) fn(o.meta);
  for (const auto& o : m.cluster_queues) fn(o.meta);
  for (const auto& o : m.local_queues) fn(o.meta);
  for (const auto& o : m.cohorts) fn(o.meta);
  for (const auto& o : m.workload_priority_classes) fn(o.meta);
  for (const auto& o : m.topologies) fn(o.meta);
  for (const auto& o : m.volcano_queues) fn(o.meta);
  for (const auto& o : m.pod_groups) fn(o.meta);
  for (const auto& o : m.hyper_nodes) fn(o.meta);
  for (const auto& o : m.training_runtimes) fn(o.meta);
  for (const auto& j : m.jobs) fn(model::MetaOf(j));
}

void CheckDuplicates(DecodeResult& r) {
  std::map<std::string, const model::ObjectMeta*> first;
  std::vector<const model::ObjectMeta*> all;
  ForEachMeta(r.manifests, [&](const model::ObjectMeta& m) { all.push_back(&m); });
  // Report the later definition, in input order.
  std::sort(all.begin(), all.end(), [](const model::ObjectMeta* a, const model::ObjectMeta* b) {
    return a->order < b->order;
  });
  for (const auto* m : all) {
    std::string key = Group(m->api_version) + "/" + m->kind + "/" + m->Key();
    auto [it, inserted] = first.emplace(key, m);
    if (inserted) continue;
    r.diagnostics.push_back(At(*m, "metadata.name",
                               m->kind + " " + internal::Quote(m->Key()) +
                                   " is already defined at " + it->second->source.file + ":" +
                                   std::to_string(it->second->source.line),
                               false));
  }
}

// Names defined per reference target kind ("ClusterQueue" -> {"cq-a", ...}).
std::map<std::string, std::set<std::string>> DefinedTargets(const model::ManifestSet& m) {
  std::map<std::string, std::set<std::string>> defined;
  for (const auto& o : m.cluster_queues) defined["ClusterQueue"].insert(o.meta.name);
  for (const auto& o : m.local_queues) defined["LocalQueue"].insert(o.meta.Key());
  for (const auto& o : m.resource_flavors) defined["ResourceFlavor"].insert(o.meta.name);
  for (const auto& o : m.topologies) defined["Topology"].insert(o.meta.name);
  for (const auto& o : m.priority_classes) defined["PriorityClass"].insert(o.meta.name);
  for (const auto& o : m.workload_priority_classes) {
    defined["WorkloadPriorityClass"].insert(o.meta.name);
  }
  for (const auto& o : m.cohorts) defined["Cohort"].insert(o.meta.name);
  for (const auto& o : m.volcano_queues) defined["Queue"].insert(o.meta.name);
  for (const auto& o : m.training_runtimes) defined[o.meta.kind].insert(o.meta.Key());
  return defined;
}

void CheckReferences(DecodeResult& r) {
  auto defined = DefinedTargets(r.manifests);
  // Built into every cluster; never in manifests.
  static const std::set<std::string> kBuiltinPriorityClasses = {"system-cluster-critical",
                                                                "system-node-critical"};
  for (const auto& ref : r.references) {
    // Cohorts exist implicitly once a ClusterQueue names them.
    if (ref.target_kind == "Cohort") continue;
    if (ref.target_kind == "PriorityClass" && kBuiltinPriorityClasses.count(ref.target_name))
      continue;
    std::string key = ref.target_namespace.empty() ? ref.target_name
                                                   : ref.target_namespace + "/" + ref.target_name;
    if (defined[ref.target_kind].count(key)) continue;
    Diagnostic d = ref.at;
    d.warning = true;
    d.message = ref.target_kind + " " + internal::Quote(key) + " is not in the input";
    r.diagnostics.push_back(std::move(d));
  }
}

// Parent edges of one tree (Cohort parentName, Volcano Queue parent): reports each
// cycle once, at the member that comes first in the input.
void CheckCycles(DecodeResult& r, const std::string& kind,
                 const std::vector<std::pair<const model::ObjectMeta*, std::string>>& parents) {
  std::map<std::string, std::string> parent_of;
  std::map<std::string, const model::ObjectMeta*> meta_of;
  for (const auto& [meta, parent] : parents) {
    if (parent_of.emplace(meta->name, parent).second) meta_of[meta->name] = meta;
  }
  std::set<std::string> reported;
  for (const auto& [meta, parent] : parents) {
    // Walk up from this node; a bounded walk finds a cycle through it.
    std::vector<std::string> path = {meta->name};
    std::string cur = parent;
    bool cycle = false;
    for (size_t steps = 0; !cur.empty() && steps <= parent_of.size(); ++steps) {
      if (cur == meta->name) {
        cycle = true;
        break;
      }
      path.push_back(cur);
      auto it = parent_of.find(cur);
      if (it == parent_of.end()) break;
      cur = it->second;
    }
    if (!cycle || reported.count(meta->name)) continue;
    std::string text;
    for (const auto& p : path) {
      reported.insert(p);
      text += p + " -> ";
    }
    text += meta->name;
    // Point at the parent field of this object when the decoder recorded it.
    Diagnostic d = At(*meta, "", kind + " cycle: " + text, false);
    for (const auto& ref : r.references) {
      if (ref.at.kind == meta->kind && ref.at.name == meta->name && ref.target_kind == kind &&
          ref.at.file == meta->source.file) {
        d.line = ref.at.line;
        d.field = ref.at.field;
        break;
      }
    }
    r.diagnostics.push_back(std::move(d));
  }
}

}  // namespace

void ValidateCrossObject(DecodeResult& result) {
  CheckDuplicates(result);
  CheckReferences(result);
  std::vector<std::pair<const model::ObjectMeta*, std::string>> cohorts, queues;
  for (const auto& c : result.manifests.cohorts) cohorts.emplace_back(&c.meta, c.parent);
  for (const auto& q : result.manifests.volcano_queues) queues.emplace_back(&q.meta, q.parent);
  CheckCycles(result, "Cohort", cohorts);
  CheckCycles(result, "Queue", queues);
}

}  // namespace muster::api
