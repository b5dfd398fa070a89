// ObjectCache: muster's mirror of the cluster objects it reads, filled by reflectors
// (list, then watch) and read by the controller like the serve store (it is a
// control::ObjectReader, so control::ReadStoreSnapshot decodes it unchanged). Every change
// that reaches the cache is handed to the subscriber as a control::Change, in the order
// the reflectors delivered it; resource_version carries the object's own
// metadata.resourceVersion when numeric (0 otherwise: it is opaque in Kubernetes).
//
// Thread-safe: reflectors write from their threads, the controller reads from its own.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "control/change.h"
#include "control/object_reader.h"

namespace muster::kube {

class ObjectCache : public control::ObjectReader {
 public:
  // Takes the change by value: the subscriber queues it without copying the object.
  using Callback = std::function<void(control::Change)>;

  // The one subscriber (the controller); set before any reflector starts. Called with
  // the cache's lock released, from the reflector's thread: queue and return.
  void Subscribe(Callback callback);

  // After a (re)list of `resource`: the cache now holds exactly `items`. Objects that
  // are new give kAdded, changed ones (other resourceVersion) kModified, and ones that
  // vanished while no watch ran give kDeleted. Marks the resource synced.
  void Replace(const std::string& resource, std::vector<nlohmann::json> items);
  // One watch event for `resource` (kDeleted: `object` is the last state).
  void Apply(const std::string& resource, control::ChangeType type, nlohmann::json object);

  // Every resource named has completed its first list: the view is complete enough to
  // decide on (the controller never schedules before this).
  bool Synced(const std::vector<std::string>& resources) const;
  // Objects mirrored, all resources together.
  size_t size() const;

  Result<nlohmann::json> Get(const control::ObjectKey& key) const override;
  Result<control::ListResult> List(const std::string& resource,
                                   const std::string& namespace_) const override;

 private:
  void Notify(std::vector<control::Change> changes);

  mutable std::mutex mu_;
  // resource -> "<namespace>/<name>" -> object. Immutable once stored: the change
  // handed to the subscriber shares it (Change::shared_object) instead of a copy.
  using Object = std::shared_ptr<const nlohmann::json>;
  std::map<std::string, std::map<std::string, Object>> objects_;
  std::set<std::string> synced_;
  Callback callback_;
  std::mutex notify_mu_;  // keeps callbacks in delivery order across reflector threads
};

}  // namespace muster::kube
