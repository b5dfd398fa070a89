// ObjectReader: read access to Kubernetes-style objects keyed by (resource, namespace,
// name). The serve store implements it, and so does the kube adapter's mirror of a
// cluster (kube/object_cache.h), so decoding a snapshot of the cluster
// (store_snapshot.h) is the same code in both modes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::control {

struct ObjectKey {
  std::string resource;    // ResourceType::StoreKey()
  std::string namespace_;  // "" for cluster-scoped objects
  std::string name;
};

struct ListResult {
  std::vector<nlohmann::json> items;  // sorted by (namespace, name)
  int64_t resource_version = 0;       // the store's rv when the list was read
};

class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  virtual Result<nlohmann::json> Get(const ObjectKey& key) const = 0;
  // `namespace_` empty: every namespace. Items sorted by (namespace, name).
  virtual Result<ListResult> List(const std::string& resource,
                                  const std::string& namespace_) const = 0;
};

}  // namespace muster::control
