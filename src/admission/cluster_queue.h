// A ClusterQueue as admission uses it: its quota node, resource groups compiled to
// flavor indices, policies, and its pending workloads in Kueue's queue order.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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

inline constexpr Time kNoSlaDeadline = std::numeric_limits<Time>::infinity();

// Queue order: priority (desc); then (Volcano queues and no queue) the sla
// plugin's deadline, creation plus sla-waiting-time, earliest first and jobs
// with one before jobs without (Volcano's sla job order, in the priority tier);
// then (Volcano queues only) the job's dominant share, lower first, as Volcano's
// drf job order ranks right after the priority plugin's tier; then creation
// time, then input order, then key.
struct QueueKey {
  int32_t priority = 0;
  int64_t share = 0;  // Volcano drf share in parts per million; 0 for Kueue
  Time created = 0;
  int64_t order = 0;
  // The workload's own key (the admitter's state shares the workload, which outlives
  // the key in any queue): a view, not a copy per queued workload.
  std::string_view key;
  Time sla_deadline = kNoSlaDeadline;  // added last: existing initializers keep working
  // The admitter's state for `key`, not part of the order: a cycle takes every
  // queue's head many times, and a lookup by key string per head was a tenth of it.
  void* state = nullptr;
  friend bool operator<(const QueueKey& a, const QueueKey& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.sla_deadline != b.sla_deadline) return a.sla_deadline < b.sla_deadline;
    if (a.share != b.share) return a.share < b.share;
    if (a.created != b.created) return a.created < b.created;
    if (a.order != b.order) return a.order < b.order;
    // The same view is the same workload: a set's find ends comparing a key with
    // itself, where reading the strings was a cache miss each.
    return a.key.data() != b.key.data() && a.key < b.key;
  }
};

// Pending workloads of one queue: `active` are tried by the next cycle; `parked`
// (Kueue's inadmissible list) wait until capacity changes.
class PendingQueue {
 public:
  void Push(const QueueKey& k) {
    active_.insert(k);
    ++changes_;
  }
  void Erase(const QueueKey& k) {
    // An admission erases its queue's head: compared in place before any search
    // (find + erase(it), not erase-by-key's equal_range, where it is not the head).
    // A key is in one of the two sets.
    for (std::set<QueueKey>* s : {&active_, &parked_}) {
      auto it = s->begin();
      if (it == s->end()) continue;
      if (k < *it || *it < k) it = s->find(k);
      if (it == s->end()) continue;
      s->erase(it);
      ++changes_;
      return;
    }
  }
  // Parking and unparking move the set's node (no copy of the key, no allocation):
  // a cycle parks every head it cannot admit.
  void Park(const QueueKey& k) { Move(active_, parked_, k); }
  // Parks the head, with no key to compare (the caller knows it is the one).
  void ParkHead() { parked_.insert(parked_.end(), active_.extract(active_.begin())); }
  // The smaller set's nodes move into the larger (a release unparks a queue whose
  // every head is parked: then the sets are just swapped).
  void UnparkAll() {
    if (parked_.size() > active_.size()) active_.swap(parked_);
    active_.merge(parked_);
  }
  void Unpark(const QueueKey& k) {
    if (Move(parked_, active_, k)) ++changes_;
  }
  // Counts what came, went or was unparked one by one; not a cycle's own parking
  // or UnparkAll. Equal counts: the same workloads wait, parked as they were.
  uint64_t changes() const { return changes_; }
  const QueueKey* Head() const { return active_.empty() ? nullptr : &*active_.begin(); }
  // The active keys, in queue order (the heads the next rounds take).
  const std::set<QueueKey>& active() const { return active_; }
  // The first pending workload, parked or not (the StrictFIFO head).
  const QueueKey* First() const;
  bool Empty() const { return active_.empty() && parked_.empty(); }
  size_t Size() const { return active_.size() + parked_.size(); }
  bool HasParked() const { return !parked_.empty(); }
  // The parked (inadmissible) keys, in queue order.
  const std::set<QueueKey>& parked() const { return parked_; }
  // Every pending key, active then parked (each in queue order).
  std::vector<QueueKey> All() const;
  // Re-keys `from` as `to`, keeping it active or parked.
  void Replace(const QueueKey& from, const QueueKey& to);

 private:
  static bool Move(std::set<QueueKey>& from, std::set<QueueKey>& to, const QueueKey& k) {
    // A cycle parks the queue's head: try the first node before searching.
    auto it = from.begin();
    if (it == from.end()) return false;
    if (k < *it || *it < k) it = from.find(k);
    if (it == from.end()) return false;
    // Heads are parked in queue order, so the end is usually the right place.
    to.insert(to.end(), from.extract(it));
    return true;
  }

  std::set<QueueKey> active_;
  std::set<QueueKey> parked_;
  uint64_t changes_ = 0;
};

// True when `selector` matches namespace `ns` with `labels` (its Namespace's); without
// a Namespace object (nullptr) it has the one label every Namespace carries,
// kubernetes.io/metadata.name=<name>. nullopt matches none.
bool NamespaceMatches(const std::optional<model::LabelSelector>& selector, const std::string& ns,
                      const model::StringMap* labels = nullptr);

}  // namespace muster::admission
