// OwnerGraph: who owns whom, from metadata.ownerReferences, for serve's garbage
// collector (garbage_collector.h). Pure bookkeeping over store changes, no I/O.
//
// Semantics follow Kubernetes' garbage collector: an object is garbage once every
// owner its ownerReferences name (by uid) is gone; a dependent some of whose owners
// remain is kept. An owner deleted with the "orphan" finalizer (propagationPolicy
// Orphan) leaves its dependents, which lose their references to it instead.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "control/change.h"
#include "control/object_reader.h"

namespace muster::server {

inline constexpr const char* kOrphanFinalizer = "orphan";

class OwnerGraph {
 public:
  struct Target {
    control::ObjectKey key;
    std::string uid;  // the dependent's own uid: a delete precondition
  };
  struct Work {
    std::vector<Target> collect;  // delete: every owner is gone
    // Strip the references to `owner_uid` (its owner was deleted orphaning them).
    std::vector<std::pair<Target, std::string>> orphan;
  };

  // Takes an object that exists now (start-up load): nothing is decided yet, as its
  // owners may come later in the load.
  void Load(const control::ObjectKey& key, const nlohmann::json& object);
  // After the load: dependents none of whose owners exist.
  Work Sweep() const;
  // One store change, in resourceVersion order.
  Work Apply(const control::Change& change);

  size_t size() const { return objects_.size(); }

 private:
  struct Node {
    control::ObjectKey key;
    std::string uid;
    std::vector<std::string> owners;  // owner uids
  };
  static std::string Id(const control::ObjectKey& key);
  // Records the object; returns its node.
  const Node& Put(const control::ObjectKey& key, const nlohmann::json& object);
  void Remove(const std::string& id);
  bool AnyOwnerExists(const Node& node) const;

  std::unordered_map<std::string, Node> objects_;                      // by resource/namespace/name
  std::unordered_map<std::string, std::string> by_uid_;                // uid -> id
  std::unordered_map<std::string, std::set<std::string>> dependents_;  // owner uid -> ids
};

}  // namespace muster::server
