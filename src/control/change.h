// Change: one committed change of a Kubernetes-style object, as a value. The serve
// store publishes one per write (server/watch_hub.h) and the kube adapter's mirror of
// a cluster one per watch event (kube/object_cache.h); the reconciler applies them in
// the order they are delivered, whichever mode produced them.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace muster::control {

struct DecodedJob;  // control/store_snapshot.h

enum class ChangeType { kAdded, kModified, kDeleted };

// "ADDED", "MODIFIED", "DELETED": the watch event type names.
const char* ChangeTypeName(ChangeType type);

// A JSON null that lives for the whole run (a change without an object reads it).
const nlohmann::json& NullObject();

struct Change {
  int64_t resource_version = 0;
  ChangeType type = ChangeType::kAdded;
  std::string resource;  // ResourceType::StoreKey(): "clusterqueues.kueue.x-k8s.io"
  std::string namespace_;
  std::string name;
  // The object after the change (before it, for kDeleted): one immutable copy shared
  // by every holder of the change (the watch history, watches, the reconciler's job
  // table, kube's ObjectCache) instead of a copy each. Null only for a change made
  // without one; Object() reads it as JSON null then.
  std::shared_ptr<const nlohmann::json> shared_object;
  // A job the writer already decoded from the object as DecodeJob decodes it (the API
  // validates every create so): the reconciler takes it instead of decoding again.
  // Null when nobody did; never set for a deletion.
  std::shared_ptr<const DecodedJob> decoded;

  // The object: readers of a change use this.
  const nlohmann::json& Object() const { return shared_object ? *shared_object : NullObject(); }
  // Sets the object, moved into a new shared copy.
  void SetObject(nlohmann::json object) {
    shared_object = std::make_shared<const nlohmann::json>(std::move(object));
  }
};

}  // namespace muster::control
