// OwnerGraph: who owns whom, from metadata.ownerReferences, for serve's garbage
// collector (garbage_collector.h). Pure bookkeeping over store changes, no I/O.
//
// Semantics follow Kubernetes' garbage collector: an object is garbage once every
// owner its ownerReferences name (by uid) is gone; a dependent some of whose owners
// remain is kept. An owner deleted with the "orphan" finalizer (propagationPolicy
// Orphan) leaves its dependents, which lose their references to it instead.
//
// Foreground (propagationPolicy Foreground): the owner stays, marked and holding the
// "foregroundDeletion" finalizer, while its dependents are deleted (in Foreground
// themselves when they own objects in turn; a dependent another live owner keeps only
// loses its reference); the finalizer goes once no dependent whose reference says
// blockOwnerDeletion is left.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "control/change.h"
#include "control/json_fields.h"
#include "control/object_reader.h"

namespace muster::server {

using control::kForegroundFinalizer;
using control::kOrphanFinalizer;

class OwnerGraph {
 public:
  struct Target {
    control::ObjectKey key;
    std::string uid;  // the dependent's own uid: a delete precondition
    // The resourceVersion the decision to collect it saw (a delete precondition): an
    // object changed since (its references taken off: orphaned) is judged again by
    // the change that changed it, not deleted on what it was. Unset: no precondition.
    std::optional<int64_t> rv = std::nullopt;
  };
  struct Work {
    std::vector<Target> collect;  // delete: every owner is gone
    // Strip the references to `owner_uid` (its owner was deleted orphaning them).
    std::vector<std::pair<Target, std::string>> orphan;
    // Delete in Foreground: dependents of a foreground deletion that own objects too.
    std::vector<Target> collect_foreground;
    // Take "foregroundDeletion" off: nothing blocks the owner's deletion any longer.
    std::vector<Target> release;
  };

  // Takes an object that exists now (start-up load): nothing is decided yet, as its
  // owners may come later in the load.
  void Load(const control::ObjectKey& key, const nlohmann::json& object);
  // After the load: dependents none of whose owners exist, and the foreground
  // deletions under way.
  Work Sweep();
  // One store change, in resourceVersion order.
  Work Apply(const control::Change& change);

  size_t size() const { return objects_.size(); }

 private:
  struct Node {
    control::ObjectKey key;
    std::string uid;
    std::vector<std::string> owners;    // owner uids
    std::vector<std::string> blocking;  // the owners whose reference says blockOwnerDeletion
    bool deleting = false;              // metadata.deletionTimestamp is set
    bool foreground = false;            // deleting, waiting for its dependents
    int64_t rv = 0;                     // metadata.resourceVersion (0: unknown)
  };
  static std::string Id(const control::ObjectKey& key);
  // Records the object; returns its node.
  const Node& Put(const control::ObjectKey& key, const nlohmann::json& object);
  void Remove(const std::string& id);
  bool AnyOwnerExists(const Node& node) const;
  const Node* ByUid(const std::string& uid) const;
  // An owner that exists and is not waiting for its dependents' deletion.
  bool HasSolidOwner(const Node& node) const;
  // A foreground deletion's dependents: delete (or detach) those not asked yet; and the
  // owner's release once none blocks it.
  void Foreground(const Node& owner, Work& work);
  void ReleaseIfUnblocked(const std::string& owner_uid, Work& work);
  // Deletes it when no owner keeps it: none is left, or those left wait for their
  // dependents to go.
  void CollectIfUnowned(const Node& node, Work& work);
  // First request for this uid (always true for an object without one).
  bool Ask(const std::string& uid);

  std::unordered_map<std::string, Node> objects_;                      // by resource/namespace/name
  std::unordered_map<std::string, std::string> by_uid_;                // uid -> id
  std::unordered_map<std::string, std::set<std::string>> dependents_;  // owner uid -> ids
  std::unordered_map<std::string, int> blocking_count_;  // owner uid -> blocking dependents
  // Uids whose delete or release was asked for (one request each, not one per change).
  std::set<std::string> requested_;
};

}  // namespace muster::server
