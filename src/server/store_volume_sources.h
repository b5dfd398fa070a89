// What a pod's volumes and env refer to (ConfigMaps, Secrets, claims of one
// namespace), read from the store on demand by the local executor, each object once
// per pod start.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "server/object_store.h"
#include "server/pod_volumes.h"

namespace muster::server {

class StoreVolumeSources : public VolumeSources {
 public:
  // `claims_in_use`: claims that running pods of other gangs mount (ReadWriteOncePod).
  StoreVolumeSources(const ObjectStore& store, std::string ns, std::set<std::string> claims_in_use)
      : store_(store), ns_(std::move(ns)), claims_in_use_(std::move(claims_in_use)) {}

  const model::StringMap* ConfigMap(const std::string& name) const override {
    return Load("configmaps", name, false);
  }
  const model::StringMap* Secret(const std::string& name) const override {
    return Load("secrets", name, true);
  }
  std::optional<ClaimInfo> Claim(const std::string& name) const override;
  bool ClaimInUse(const std::string& name) const override {
    return claims_in_use_.count(name) != 0;
  }

 private:
  // data (Secret values base64-decoded; stringData as written, in case the API kept it).
  const model::StringMap* Load(const std::string& resource, const std::string& name,
                               bool secret) const;

  const ObjectStore& store_;
  std::string ns_;
  std::set<std::string> claims_in_use_;
  mutable std::map<std::string, std::optional<model::StringMap>> cache_;
};

}  // namespace muster::server
