// A ClusterQueue as admission uses it: its quota node, resource groups compiled to
// flavor indices and policies; its pending workloads are a PendingQueue
// (pending_queue.h).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "admission/pending_queue.h"
#include "admission/quota_tree.h"
#include "core/clock.h"
#include "model/kueue.h"

namespace muster::admission {

// ResourceFlavors by dense index (the index the quota tree's FrIds use).
struct FlavorCatalog {
  std::vector<model::ResourceFlavor> flavors;
  std::optional<int32_t> Find(const std::string& name) const;
  int32_t Intern(const std::string& name);  // adds an undefined flavor by name
  std::vector<bool> defined;                // false: referenced, never defined
};

struct CompiledResourceGroup {
  std::vector<ResourceId> covered;
  std::vector<int32_t> flavors;  // order = preference
};

struct ClusterQueueSpec {
  std::string name;
  NodeId node = -1;
  std::vector<CompiledResourceGroup> groups;
  model::QueueingStrategy strategy = model::QueueingStrategy::kBestEffortFIFO;
  std::optional<model::LabelSelector> namespace_selector;
  model::ClusterQueuePreemption preemption;
  model::FlavorFungibility fungibility;
  int64_t fair_weight_milli = 1000;
  model::StopPolicy stop_policy = model::StopPolicy::kNone;
  bool terminating = false;      // being deleted (model::ClusterQueue::terminating)
  std::string inactive_message;  // non-empty: misconfigured (e.g. a missing flavor)
};

// True when `selector` matches namespace `ns` with `labels` (its Namespace's); without
// a Namespace object (nullptr) it has the one label every Namespace carries,
// kubernetes.io/metadata.name=<name>. nullopt matches none.
bool NamespaceMatches(const std::optional<model::LabelSelector>& selector, const std::string& ns,
                      const model::StringMap* labels = nullptr);

}  // namespace muster::admission
