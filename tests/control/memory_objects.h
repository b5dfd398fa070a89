// MemoryObjects: an in-memory ObjectReader for control-layer tests (the serve store
// and the kube cache are the real ones; the control layer must not depend on them).
// Create stamps what an API server would: uid, creationTimestamp (the test's `now`),
// resourceVersion and generation.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "control/object_reader.h"

namespace muster::control::testing {

class MemoryObjects : public ObjectReader {
 public:
  std::string now = "2026-01-01T00:00:00Z";

  nlohmann::json Create(const std::string& resource, const std::string& ns, nlohmann::json object) {
    auto& meta = object["metadata"];
    meta["namespace"] = ns;
    if (ns.empty()) meta.erase("namespace");
    std::string serial = std::to_string(++rv_);
    meta["uid"] = "00000000-0000-4000-8000-" + std::string(12 - serial.size(), '0') + serial;
    meta["creationTimestamp"] = now;
    meta["resourceVersion"] = std::to_string(rv_);
    meta["generation"] = 1;
    objects_[{resource, ns, meta.value("name", "")}] = object;
    return object;
  }
  void Delete(const std::string& resource, const std::string& ns, const std::string& name) {
    objects_.erase({resource, ns, name});
  }

  Result<nlohmann::json> Get(const ObjectKey& key) const override {
    auto it = objects_.find({key.resource, key.namespace_, key.name});
    if (it == objects_.end()) return NotFound(key.resource + " " + key.name + " not found");
    return it->second;
  }
  Result<ListResult> List(const std::string& resource,
                          const std::string& namespace_) const override {
    ListResult out;
    out.resource_version = rv_;
    for (const auto& [key, object] : objects_) {
      if (std::get<0>(key) != resource) continue;
      if (!namespace_.empty() && std::get<1>(key) != namespace_) continue;
      out.items.push_back(object);
    }
    return out;
  }

 private:
  int64_t rv_ = 0;
  std::map<std::tuple<std::string, std::string, std::string>, nlohmann::json> objects_;
};

}  // namespace muster::control::testing
