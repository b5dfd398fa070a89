// Change: one committed change of a Kubernetes-style object, as a value. The serve
// store publishes one per write (server/watch_hub.h) and the kube adapter's mirror of
// a cluster one per watch event (kube/object_cache.h); the reconciler applies them in
// the order they are delivered, whichever mode produced them.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace muster::control {

struct DecodedJob;  // control/store_snapshot.h

enum class ChangeType { kAdded, kModified, kDeleted };

// "ADDED", "MODIFIED", "DELETED": the watch event type names.
const char* ChangeTypeName(ChangeType type);

struct Change {
  int64_t resource_version = 0;
  ChangeType type = ChangeType::kAdded;
  std::string resource;  // ResourceType::StoreKey(): "clusterqueues.kueue.x-k8s.io"
  std::string namespace_;
  std::string name;
  nlohmann::json object;  // the object after the change (before it, for kDeleted)
  // A job the writer already decoded from `object` as DecodeJob decodes it (the API
  // validates every create so): the reconciler takes it instead of decoding again.
  // Null when nobody did; never set for a deletion.
  std::shared_ptr<const DecodedJob> decoded;
  // Set instead of `object` by a producer that keeps the object as well (kube's
  // ObjectCache): one immutable copy shared by its thread and the reader's, not two.
  std::shared_ptr<const nlohmann::json> shared_object;

  // The object wherever it is held: readers of a change use this.
  const nlohmann::json& Object() const { return shared_object ? *shared_object : object; }
};

}  // namespace muster::control
