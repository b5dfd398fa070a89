// The reconciler's configuration half: nodes, flavors, queues, priority classes and
// the scheduler / Kueue configuration objects. Each object is decoded once, when what
// the engine reads of it changes (node heartbeats and our own queue status writes
// change nothing). A node added, a node edited in place (cordoned, labelled,
// tainted, resized, its NodeResourceTopology added or edited, deleted), a queue
// whose quotas or stopPolicy alone moved and a LocalQueue put or deleted are engine
// events that touch that node or queue alone; objects only job decoding reads
// (PriorityClasses, PodGroups, TrainingRuntimes) change nothing in the engine; any
// other queue change (ClusterQueues, Cohorts, ResourceFlavors, Volcano Queues)
// rebuilds admission and keeps placement; HyperNodes are resolved again over the
// nodes in place; the rest (Kueue Topologies, the scheduler and Kueue
// configuration) reconfigures the engine in memory. Each at most
// once per Step however many objects changed; running gangs stay where they run.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "control/json_fields.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "control/resource_types.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

constexpr const char* kNodeTopologies = "noderesourcetopologies.topology.node.k8s.io";
constexpr const char* kClusterQueues = "clusterqueues.kueue.x-k8s.io";

// What the engine reads of a configuration object. Node heartbeats and conditions
// change every few seconds: only labels, annotations, spec (taints, unschedulable)
// and capacity count; other kinds drop their status (our own queue status writes).
// A NodeResourceTopology's `available` is its exporter's view of usage, rewritten as
// pods come and go; muster keeps usage from its own bindings.
json Significant(const std::string& resource, const json& object) {
  json meta = object.value("metadata", json::object());
  if (!meta.is_object()) meta = json::object();
  json kept = {{"labels", meta.value("labels", json::object())},
               {"annotations", meta.value("annotations", json::object())}};
  // A ClusterQueue being deleted holds what waits (model::ClusterQueue::terminating).
  if (resource == kClusterQueues && BeingDeleted(object)) kept["terminating"] = true;
  json out = {{"metadata", kept}, {"spec", object.value("spec", json())}};
  if (resource == "nodes") {
    const json status = object.value("status", json::object());
    if (status.is_object()) {
      out["allocatable"] = status.value("allocatable", json());
      out["capacity"] = status.value("capacity", json());
    }
  } else {
    json copy = object;
    copy.erase("status");
    copy.erase("metadata");
    if (resource == kNodeTopologies && copy.contains("zones") && copy["zones"].is_array()) {
      for (json& zone : copy["zones"]) {
        if (!zone.is_object() || !zone.contains("resources")) continue;
        if (!zone["resources"].is_array()) continue;
        for (json& r : zone["resources"]) {
          if (r.is_object()) r.erase("available");
        }
      }
    }
    out["rest"] = std::move(copy);
  }
  return out;
}

// Removed nodes kept as tombstones before the cluster is built afresh (also up to a
// quarter of its indexes): a rebuild re-places nothing, but costs O(running pods).
constexpr int32_t kRemovedNodesKept = 64;

constexpr const char* kLocalQueues = "localqueues.kueue.x-k8s.io";
constexpr const char* kNamespaces = "namespaces";
constexpr const char* kPriorityClasses = "priorityclasses.scheduling.k8s.io";
constexpr const char* kWorkloadPriorityClasses = "workloadpriorityclasses.kueue.x-k8s.io";
constexpr const char* kTrainingRuntimes = "trainingruntimes.trainer.kubeflow.org";
constexpr const char* kClusterTrainingRuntimes = "clustertrainingruntimes.trainer.kubeflow.org";
constexpr const char* kResourceFlavors = "resourceflavors.kueue.x-k8s.io";
constexpr const char* kVolcanoQueues = "queues.scheduling.volcano.sh";
constexpr const char* kHyperNodes = "hypernodes.topology.volcano.sh";
constexpr const char* kLimitRanges = "limitranges";

// Read only when a job is decoded (its priority and shape are fixed then, as a pod's
// priority is at admission): a change is for the jobs that come next, nothing for
// the engine.
bool IsDecodingInput(const std::string& resource) {
  return resource == kPriorityClasses || resource == kWorkloadPriorityClasses ||
         resource == kPodGroups || resource == kTrainingRuntimes ||
         resource == kClusterTrainingRuntimes || resource == kLimitRanges;
}
constexpr const char* kCohorts = "cohorts.kueue.x-k8s.io";

// Read by admission alone (quota tree, flavors, queues): a change rebuilds
// admission and keeps placement (Engine::Readmitted).
bool IsQueueInput(const std::string& resource) {
  return resource == kClusterQueues || resource == kCohorts || resource == kLocalQueues ||
         resource == kResourceFlavors || resource == kVolcanoQueues;
}

// Erases the quota numbers of every resource of `spec.resourceGroups`.
void EraseQuotas(json& spec) {
  if (!spec.is_object() || !spec.contains("resourceGroups")) return;
  json& groups = spec["resourceGroups"];
  if (!groups.is_array()) return;
  for (json& group : groups) {
    if (!group.is_object() || !group.contains("flavors") || !group["flavors"].is_array()) continue;
    for (json& flavor : group["flavors"]) {
      if (!flavor.is_object() || !flavor.contains("resources")) continue;
      if (!flavor["resources"].is_array()) continue;
      for (json& resource : flavor["resources"]) {
        if (!resource.is_object()) continue;
        for (const char* field : {"nominalQuota", "borrowingLimit", "lendingLimit"}) {
          resource.erase(field);
        }
      }
    }
  }
}

// A ClusterQueue or Cohort without what changes in place: its quota numbers
// (nominalQuota, borrowingLimit, lendingLimit) and a ClusterQueue's stopPolicy (which
// its deletion sets to at least Hold). Equal before and after an edit that only
// moves those.
std::string QueueStructure(json significant) {
  if (significant.contains("metadata")) significant["metadata"].erase("terminating");
  for (json* spec : {significant.contains("spec") ? &significant["spec"] : nullptr,
                     significant.contains("rest") && significant["rest"].contains("spec")
                         ? &significant["rest"]["spec"]
                         : nullptr}) {
    if (spec == nullptr) continue;
    EraseQuotas(*spec);
    if (spec->is_object()) spec->erase("stopPolicy");
  }
  return significant.dump();
}

// Replaces the items of `items` named in `edited` (name -> new item), keeping each
// item's place in input order.
template <typename T>
void ReplaceByName(std::vector<T>& items, const std::map<std::string, const T*>& edited) {
  for (T& item : items) {
    auto it = edited.find(item.meta.name);
    if (it == edited.end()) continue;
    const int64_t order = item.meta.order;
    item = *it->second;
    item.meta.order = order;
  }
}

// Objects of one kind as AssembleConfig lists them: by (namespace, name).
template <typename T>
auto FindByName(std::vector<T>& items, const std::string& namespace_, const std::string& name) {
  return std::lower_bound(items.begin(), items.end(), std::tie(namespace_, name),
                          [](const T& existing, const auto& key) {
                            return std::tie(existing.meta.namespace_, existing.meta.name) < key;
                          });
}

// Puts `item` in `items` (kept in (namespace, name) order): in place of the item of
// its name, keeping that one's input order, else inserted with order `next_order++`.
template <typename T>
void PutByName(std::vector<T>& items, const T& item, int64_t& next_order) {
  auto at = FindByName(items, item.meta.namespace_, item.meta.name);
  if (at != items.end() && at->meta.namespace_ == item.meta.namespace_ &&
      at->meta.name == item.meta.name) {
    const int64_t order = at->meta.order;
    *at = item;
    at->meta.order = order;
  } else {
    at = items.insert(at, item);
    at->meta.order = next_order++;
  }
}

// Takes the item `namespace_`/`name` out of `items` (kept in that order), if there.
template <typename T>
void EraseByName(std::vector<T>& items, const std::string& namespace_, const std::string& name) {
  auto at = FindByName(items, namespace_, name);
  if (at != items.end() && at->meta.namespace_ == namespace_ && at->meta.name == name) {
    items.erase(at);
  }
}

// The next input order after `items`' own.
template <typename T>
int64_t NextOrder(const std::vector<T>& items) {
  int64_t next = 0;
  for (const T& item : items) next = std::max(next, item.meta.order + 1);
  return next;
}

template <typename T>
void AppendAll(std::vector<T>& into, std::vector<T>& from, int64_t& order) {
  for (auto& item : from) {
    item.meta.order = order++;
    into.push_back(std::move(item));
  }
}

// Appends `from` (one decoded object) to `into`, numbering objects in input order as
// one DecodeText over all of them would.
void AppendManifests(model::ManifestSet& into, model::ManifestSet from, int64_t& order) {
  AppendAll(into.nodes, from.nodes, order);
  AppendAll(into.namespaces, from.namespaces, order);
  AppendAll(into.limit_ranges, from.limit_ranges, order);
  AppendAll(into.node_topologies, from.node_topologies, order);
  AppendAll(into.priority_classes, from.priority_classes, order);
  AppendAll(into.resource_flavors, from.resource_flavors, order);
  AppendAll(into.cluster_queues, from.cluster_queues, order);
  AppendAll(into.local_queues, from.local_queues, order);
  AppendAll(into.cohorts, from.cohorts, order);
  AppendAll(into.workload_priority_classes, from.workload_priority_classes, order);
  AppendAll(into.topologies, from.topologies, order);
  AppendAll(into.volcano_queues, from.volcano_queues, order);
  AppendAll(into.pod_groups, from.pod_groups, order);
  AppendAll(into.hyper_nodes, from.hyper_nodes, order);
  AppendAll(into.training_runtimes, from.training_runtimes, order);
  if (from.kueue_config) into.kueue_config = std::move(from.kueue_config);
  if (from.scheduler_config) into.scheduler_config = std::move(from.scheduler_config);
}

// What a LimitRange changes of a workload: its pod sets' requests and whether it
// breaks a range.
bool SameRequests(const model::Workload& a, const model::Workload& b) {
  if (a.inadmissible != b.inadmissible || a.pod_sets.size() != b.pod_sets.size()) return false;
  for (size_t i = 0; i < a.pod_sets.size(); ++i) {
    if (!(a.pod_sets[i].requests == b.pod_sets[i].requests)) return false;
  }
  return true;
}

// Appends the usable objects of `resource` among `objects` (config_objects_) to
// `into`, by (namespace, name), numbering them from `order` on.
template <typename Objects>
void AppendUsable(const Objects& objects, const std::string& resource, model::ManifestSet& into,
                  int64_t& order) {
  const std::string prefix = resource + "/";
  for (auto it = objects.lower_bound(prefix);
       it != objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (it->second.problem.empty()) AppendManifests(into, it->second.decoded, order);
  }
}

}  // namespace

bool Reconciler::ApplyConfig(const Change& change) {
  const std::string id = change.resource + "/" + change.namespace_ + "/" + change.name;
  const bool flavor = change.resource == kResourceFlavors;
  if (change.type == ChangeType::kDeleted) {
    if (flavor) {
      flavors_.erase(change.name);
      terminating_flavors_.erase(change.name);
    }
    auto it = config_objects_.find(id);
    if (it == config_objects_.end()) return false;
    // A node the engine has (or was about to get) leaves in place; an unusable one
    // never reached it.
    const bool usable = it->second.problem.empty();
    const bool node = change.resource == "nodes" && it->second.decoded.nodes.size() == 1;
    const bool topology =
        change.resource == kNodeTopologies && it->second.decoded.node_topologies.size() == 1;
    const bool local_queue =
        change.resource == kLocalQueues && it->second.decoded.local_queues.size() == 1;
    const bool ns = change.resource == kNamespaces && it->second.decoded.namespaces.size() == 1;
    config_objects_.erase(it);
    if (node && usable) {
      nodes_edited_.erase(change.name);
      if (nodes_added_.erase(change.name) == 0) nodes_removed_.insert(change.name);
    } else if (topology && usable) {
      topologies_changed_.insert(change.name);  // its node loses its NUMA zones
    } else if (local_queue && usable) {
      local_queues_put_.erase(id);
      local_queues_removed_.emplace(change.namespace_, change.name);
    } else if (ns && usable) {
      namespaces_put_.erase(id);
      namespaces_removed_.insert(change.name);
    } else if (IsDecodingInput(change.resource)) {
      decoding_changed_ = true;
      if (change.resource == kLimitRanges) limit_range_namespaces_.insert(change.namespace_);
    } else if (usable && change.resource == kHyperNodes) {
      hyper_nodes_changed_ = true;
    } else if (usable && IsQueueInput(change.resource)) {
      admission_rebuild_ = true;
    } else if (usable) {
      config_rebuild_ = true;
    }
    return true;
  }
  if (flavor) {
    // Kueue's resource-in-use finalizer: a flavor marked for deletion serves on as it
    // is (nothing the engine reads changes) until no ClusterQueue names it.
    const bool marked = BeingDeleted(change.Object());
    if (marked ? terminating_flavors_.insert(change.name).second
               : terminating_flavors_.erase(change.name) > 0)
      queues_dirty_ = true;
  }
  json significant_json = Significant(change.resource, change.Object());
  std::string significant = significant_json.dump();
  auto it = config_objects_.find(id);
  if (it != config_objects_.end() && it->second.significant == significant) return false;
  ConfigObject object;
  object.significant = std::move(significant);
  auto decoded = DecodeConfigObject(change.resource, change.Object());
  if (decoded.ok()) {
    object.decoded = std::move(decoded).value();
  } else {
    object.problem = decoded.status().message();
    Log("ignoring " + id + ": " + object.problem);
  }
  // A node, or a queue's quotas, that was and stays usable may be updated in place
  // (Reconfigure).
  const bool queue = change.resource == kClusterQueues || change.resource == kCohorts;
  if (queue && object.problem.empty())
    object.structure = QueueStructure(std::move(significant_json));
  const bool was_usable = it != config_objects_.end() && it->second.problem.empty();
  const bool usable = was_usable && object.problem.empty();
  const bool one_node = change.resource == "nodes" && object.decoded.nodes.size() == 1;
  const bool one_topology =
      change.resource == kNodeTopologies && object.decoded.node_topologies.size() == 1;
  const bool one_local_queue =
      change.resource == kLocalQueues && object.decoded.local_queues.size() == 1;
  const bool one_namespace =
      change.resource == kNamespaces && object.decoded.namespaces.size() == 1;
  const bool fresh = it == config_objects_.end() && object.problem.empty();
  if (usable && one_node) {
    nodes_edited_.insert(change.name);
  } else if (fresh && one_node) {
    nodes_added_.insert(change.name);
  } else if ((usable || fresh) && one_topology) {
    topologies_changed_.insert(change.name);
  } else if ((usable || fresh) && one_local_queue) {
    local_queues_put_.insert(id);
  } else if ((usable || fresh) && one_namespace) {
    namespaces_put_.insert(id);
  } else if (IsDecodingInput(change.resource)) {
    decoding_changed_ = true;
    if (change.resource == kLimitRanges) limit_range_namespaces_.insert(change.namespace_);
  } else if (change.resource == kHyperNodes) {
    // An unusable object that never was one changes nothing the engine reads.
    hyper_nodes_changed_ = hyper_nodes_changed_ || was_usable || object.problem.empty();
  } else if (usable && queue && object.structure == it->second.structure) {
    quotas_edited_.insert(id);
  } else if (IsQueueInput(change.resource)) {
    // An unusable object that never was one changes nothing the engine reads.
    admission_rebuild_ = admission_rebuild_ || was_usable || object.problem.empty();
  } else {
    config_rebuild_ = true;
  }
  config_objects_[id] = std::move(object);
  if (flavor) flavors_[change.name] = change.Object();
  return true;
}

model::ManifestSet Reconciler::AssembleConfig() const {
  model::ManifestSet config;
  int64_t order = 0;
  // By kind in ConfigResources() order, then by (namespace, name): the order a
  // snapshot of the store lists them in.
  for (const auto& resource : ConfigResources())
    AppendUsable(config_objects_, resource, config, order);
  if (options_.scheduler_config) config.scheduler_config = options_.scheduler_config;
  if (options_.kueue_config) config.kueue_config = options_.kueue_config;
  return config;
}

const model::Node* Reconciler::NodeObject(const std::string& name) const {
  auto it = config_objects_.find("nodes//" + name);
  if (it == config_objects_.end() || it->second.decoded.nodes.size() != 1) return nullptr;
  return &it->second.decoded.nodes.front();
}

const model::NodeTopology* Reconciler::TopologyObject(const std::string& name) const {
  auto it = config_objects_.find(std::string(kNodeTopologies) + "//" + name);
  if (it == config_objects_.end() || it->second.decoded.node_topologies.size() != 1) {
    return nullptr;
  }
  return &it->second.decoded.node_topologies.front();
}

void Reconciler::SyncTopologies(const std::set<std::string>& names) {
  int64_t next_order = NextOrder(config_.node_topologies);
  for (const std::string& name : names) {
    const model::NodeTopology* topology = TopologyObject(name);
    if (topology != nullptr) {
      PutByName(config_.node_topologies, *topology, next_order);
    } else {
      EraseByName(config_.node_topologies, "", name);
    }
  }
}

bool Reconciler::UpdateNodesInPlace(const std::set<std::string>& names) {
  std::map<std::string, const model::Node*> edited;
  for (const std::string& name : names) {
    const model::Node* node = NodeObject(name);
    if (node == nullptr) return false;
    // A change the cluster cannot take in place leaves the engine as it was (the
    // nodes updated before it stay updated; the rebuild reads them all anyway).
    if (!engine_->UpdateNode(*node, TopologyObject(name)).ok()) return false;
    edited.emplace(name, node);
  }
  ReplaceByName(config_.nodes, edited);
  stats_.node_updates += static_cast<int64_t>(edited.size());
  return true;
}

bool Reconciler::AddNodesInPlace(const std::set<std::string>& names) {
  int64_t next_order = NextOrder(config_.nodes);
  for (const std::string& name : names) {
    const model::Node* node = NodeObject(name);
    if (node == nullptr) return false;
    // As for edits: the nodes added before a refused one stay; the rebuild that
    // follows reads them all anyway.
    if (!engine_->AddNode(*node, TopologyObject(name)).ok()) return false;
    PutByName(config_.nodes, *node, next_order);  // a new name: inserted
    ++stats_.node_adds;
  }
  return true;
}

bool Reconciler::RemoveNodesInPlace(const std::set<std::string>& names) {
  for (const std::string& name : names) {
    // Not in the engine: added and deleted between two reconfigurations after a
    // rebuild that never saw it, nothing to take out.
    if (!engine_->cluster().FindNode(name)) continue;
    if (!engine_->RemoveNode(name).ok()) return false;
    EraseByName(config_.nodes, "", name);
    ++stats_.node_removes;
  }
  // A removed node keeps its index (and a slot of every per-node array) until the
  // cluster is built afresh: bounded by a share of the cluster.
  const placement::ClusterState& cluster = engine_->cluster();
  return cluster.RemovedNodeCount() <= std::max(kRemovedNodesKept, cluster.NodeCount() / 4);
}

bool Reconciler::UpdateQuotasInPlace(const std::set<std::string>& ids) {
  // Object id -> its decoded ClusterQueue or Cohort, whichever it is.
  std::map<std::string, const model::ClusterQueue*> queues;
  std::map<std::string, const model::Cohort*> cohorts;
  for (const std::string& id : ids) {
    auto it = config_objects_.find(id);
    if (it == config_objects_.end()) return false;
    const model::ManifestSet& decoded = it->second.decoded;
    Status s = FailedPrecondition(id + " is not one ClusterQueue or Cohort");
    if (decoded.cluster_queues.size() == 1) {
      const model::ClusterQueue& cq = decoded.cluster_queues.front();
      s = engine_->UpdateQuotas(cq.meta.name, cq.resource_groups);
      if (s.ok()) s = engine_->SetStopPolicy(cq.meta.name, cq.stop_policy, cq.terminating);
      queues.emplace(cq.meta.name, &cq);
    } else if (decoded.cohorts.size() == 1) {
      const model::Cohort& cohort = decoded.cohorts.front();
      s = engine_->UpdateQuotas(cohort.meta.name, cohort.resource_groups);
      cohorts.emplace(cohort.meta.name, &cohort);
    }
    if (!s.ok()) return false;
  }
  ReplaceByName(config_.cluster_queues, queues);
  ReplaceByName(config_.cohorts, cohorts);
  stats_.quota_updates += static_cast<int64_t>(ids.size());
  return true;
}

bool Reconciler::LocalQueuesInPlace(const std::set<std::pair<std::string, std::string>>& removed,
                                    const std::set<std::string>& put) {
  for (const auto& [ns, name] : removed) {
    // NotFound: created and deleted since the engine last heard of queues.
    Status s = engine_->RemoveLocalQueue(ns, name);
    if (!s.ok() && s.code() != StatusCode::kNotFound) return false;
    EraseByName(config_.local_queues, ns, name);
  }
  int64_t next_order = NextOrder(config_.local_queues);
  for (const std::string& id : put) {
    auto it = config_objects_.find(id);
    if (it == config_objects_.end() || it->second.decoded.local_queues.size() != 1) return false;
    const model::LocalQueue& lq = it->second.decoded.local_queues.front();
    if (!engine_->PutLocalQueue(lq).ok()) return false;
    PutByName(config_.local_queues, lq, next_order);
  }
  stats_.local_queue_updates += static_cast<int64_t>(removed.size() + put.size());
  return true;
}

bool Reconciler::NamespacesInPlace(const std::set<std::string>& removed,
                                   const std::set<std::string>& put) {
  for (const std::string& name : removed) {
    Status s = engine_->RemoveNamespace(name);
    if (!s.ok() && s.code() != StatusCode::kNotFound) return false;
    EraseByName(config_.namespaces, "", name);
  }
  int64_t next_order = NextOrder(config_.namespaces);
  for (const std::string& id : put) {
    auto it = config_objects_.find(id);
    if (it == config_objects_.end() || it->second.decoded.namespaces.size() != 1) return false;
    const model::Namespace& ns = it->second.decoded.namespaces.front();
    if (!engine_->PutNamespace(ns).ok()) return false;
    PutByName(config_.namespaces, ns, next_order);
  }
  return true;
}

void Reconciler::SyncDecodingInputs() {
  model::ManifestSet inputs;
  int64_t order = 0;
  for (const char* resource : {kPriorityClasses, kWorkloadPriorityClasses, kPodGroups,
                               kClusterTrainingRuntimes, kTrainingRuntimes, kLimitRanges}) {
    AppendUsable(config_objects_, resource, inputs, order);
  }
  config_.priority_classes = std::move(inputs.priority_classes);
  config_.workload_priority_classes = std::move(inputs.workload_priority_classes);
  config_.pod_groups = std::move(inputs.pod_groups);
  config_.training_runtimes = std::move(inputs.training_runtimes);
  config_.limit_ranges = std::move(inputs.limit_ranges);
  ++stats_.decoding_updates;
  RetryWithoutRuntime();  // a runtime may have arrived
  RetryUncomposed();      // a PriorityClass, say
  ReadjustPending(std::exchange(limit_range_namespaces_, {}));
}

// Kueue's handler of LimitRange events: the pending workloads of the namespace are
// adjusted again and requeued (here as a fresh submission: behind the jobs already
// waiting at their priority). Admitted and running ones keep what they were admitted
// with, as their pods do.
void Reconciler::ReadjustPending(const std::set<std::string>& namespaces) {
  if (engine_ == nullptr || namespaces.empty()) return;
  for (auto& [key, job] : jobs_) {
    if (!job->in_engine || job->finished || !job->parked.empty()) continue;
    if (namespaces.count(job->ref.namespace_) == 0) continue;
    if (options_.mode == ReconcilerMode::kCluster && job->job_op != 0) continue;
    const engine::WorkloadRecord* r = engine_->Find(key);
    if (r == nullptr || r->phase != engine::Phase::kPending) continue;
    auto workload = DecodeState(*job);
    if (!workload.ok() || SameRequests(r->workload, *workload)) continue;
    if (!engine_->RemoveWorkload(key).ok()) continue;
    job->in_engine = false;
    SubmitToEngine(*job, std::move(workload).value());
  }
}

bool Reconciler::SyncHyperNodes() {
  model::ManifestSet hyper;
  int64_t order = 0;
  AppendUsable(config_objects_, kHyperNodes, hyper, order);
  if (!engine_->SetHyperNodes(hyper.hyper_nodes).ok()) return false;
  config_.hyper_nodes = std::move(hyper.hyper_nodes);
  ++stats_.hyper_node_updates;
  return true;
}

bool Reconciler::Readmit() {
  model::ManifestSet config = AssembleConfig();
  auto admitter = admission::MakeAdmitter(config);
  if (!admitter.ok()) {
    engine_error_ = "the queue configuration is not usable: " + admitter.status().message();
    Log(engine_error_ + " (scheduling goes on with the last good one)");
    return false;
  }
  engine_ = engine::Engine::Readmitted(std::move(engine_), config, std::move(admitter).value());
  ++stats_.readmissions;
  config_ = std::move(config);
  EngineReplaced();
  return true;
}

void Reconciler::EngineReplaced() {
  ++engines_made_;
  if (runtime_ != nullptr) runtime_->SetEngine(engine_.get());
  RetryWithoutRuntime();  // a runtime may have arrived
  RetryUncomposed();      // a PriorityClass, say
  cycle_needed_ = true;
  queues_dirty_ = true;
}

void Reconciler::Reconfigure() {
  config_dirty_ = false;
  const bool rebuild = config_rebuild_ || engine_ == nullptr || !engine_error_.empty();
  config_rebuild_ = false;
  bool readmit = std::exchange(admission_rebuild_, false);
  const bool hyper_nodes = std::exchange(hyper_nodes_changed_, false);
  const std::set<std::string> added = std::exchange(nodes_added_, {});
  const std::set<std::string> removed = std::exchange(nodes_removed_, {});
  std::set<std::string> nodes = std::exchange(nodes_edited_, {});
  const std::set<std::string> topologies = std::exchange(topologies_changed_, {});
  const std::set<std::string> quotas = std::exchange(quotas_edited_, {});
  const std::set<std::string> local_queues = std::exchange(local_queues_put_, {});
  const std::set<std::pair<std::string, std::string>> local_queues_gone =
      std::exchange(local_queues_removed_, {});
  const std::set<std::string> namespaces = std::exchange(namespaces_put_, {});
  const std::set<std::string> namespaces_gone = std::exchange(namespaces_removed_, {});
  if (std::exchange(decoding_changed_, false) && !rebuild) SyncDecodingInputs();
  if (!rebuild) {
    SyncTopologies(topologies);
    // A node's NodeResourceTopology is part of it; one for a node the engine does
    // not have yet waits for that node (AddNodesInPlace reads it).
    for (const std::string& name : topologies) {
      if (added.count(name) != 0 || removed.count(name) != 0) continue;
      if (engine_->cluster().FindNode(name)) nodes.insert(name);
    }
  }
  // Removals first: a node deleted and created again under its name is a new node.
  // Queue edits in place unless admission is rebuilt anyway; one refused (quota
  // lowered below use, a LocalQueue moved to another ClusterQueue) rebuilds it.
  if (!rebuild && RemoveNodesInPlace(removed) && AddNodesInPlace(added) &&
      UpdateNodesInPlace(nodes) && (!hyper_nodes || SyncHyperNodes())) {
    if (!readmit) {
      readmit = !UpdateQuotasInPlace(quotas) ||
                !LocalQueuesInPlace(local_queues_gone, local_queues) ||
                !NamespacesInPlace(namespaces_gone, namespaces);
    }
    if (readmit) {
      Readmit();
      return;
    }
    cycle_needed_ = true;
    queues_dirty_ = queues_dirty_ || !quotas.empty() || !local_queues.empty() ||
                    !local_queues_gone.empty() || !namespaces.empty() || !namespaces_gone.empty();
    return;
  }
  model::ManifestSet config = AssembleConfig();
  auto parts = engine::BuildEngineParts(config);
  if (!parts.ok()) {
    engine_error_ = "the cluster configuration is not usable: " + parts.status().message();
    Log(engine_error_ + (engine_ ? " (scheduling goes on with the last good one)" : ""));
    return;
  }
  engine_error_.clear();
  if (engine_ != nullptr) {
    // In memory: running gangs keep their nodes and quota (those that lost their
    // node or queue are evicted, with the reason); no JSON, no re-adoption.
    engine_ = engine::Engine::Reconfigured(std::move(engine_), config, std::move(parts).value());
    ++stats_.reconfigures;
    config_ = std::move(config);
    EngineReplaced();
    return;
  }
  engine::EngineOptions eo;
  eo.check_invariants = options_.check_invariants;
  eo.max_cycles_per_call = options_.max_cycles_per_step;
  eo.pods_ready_reported = true;  // SyncWorkload reports each gang's readiness
  engine_ = std::make_unique<engine::Engine>(config, std::vector<model::Workload>{},
                                             std::move(parts).value(), clock_, eo);
  engine_->SetExecutor(runtime_);
  config_ = std::move(config);
  // Jobs that arrived while no configuration was usable.
  for (auto& [key, job] : jobs_) {
    if (job->in_engine || job->finished || !job->parked.empty()) continue;
    auto workload = DecodeState(*job);
    if (workload.ok()) SubmitToEngine(*job, std::move(workload).value());
  }
  EngineReplaced();
}

}  // namespace muster::control
