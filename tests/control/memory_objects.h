// MemoryObjects: an in-memory ObjectReader for control-layer tests (the serve store
// and the kube cache are the real ones; the control layer must not depend on them).
// Create and Replace stamp what an API server would: uid, creationTimestamp (the
// test's `now`), resourceVersion, and generation (grows when anything but metadata
// and status changes).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "control/change.h"
#include "control/object_reader.h"

namespace muster::control::testing {

class MemoryObjects : public ObjectReader {
 public:
  std::string now = "2026-01-01T00:00:00Z";

  // The object as stored, and the change a watch would deliver.
  Change Create(const std::string& resource, const std::string& ns, nlohmann::json object) {
    auto& meta = object["metadata"];
    meta["namespace"] = ns;
    if (ns.empty()) meta.erase("namespace");
    std::string serial = std::to_string(++uids_);
    meta["uid"] = "00000000-0000-4000-8000-" + std::string(12 - serial.size(), '0') + serial;
    meta["creationTimestamp"] = now;
    meta["resourceVersion"] = std::to_string(++rv_);
    meta["generation"] = 1;
    objects_[{resource, ns, meta.value("name", "")}] = object;
    return {rv_,    ChangeType::kAdded,     resource,
            ns,     meta.value("name", ""), std::make_shared<const nlohmann::json>(object),
            nullptr};
  }
  // Replaces a stored object (kNotFound when absent); keeps uid and creation time.
  Result<Change> Replace(const std::string& resource, const std::string& ns,
                         nlohmann::json object) {
    const std::string name = object["metadata"].value("name", "");
    auto it = objects_.find({resource, ns, name});
    if (it == objects_.end()) return NotFound(resource + " " + name + " not found");
    const nlohmann::json& old = it->second;
    auto& meta = object["metadata"];
    for (const char* kept : {"uid", "creationTimestamp", "namespace"}) {
      if (old["metadata"].contains(kept)) meta[kept] = old["metadata"][kept];
    }
    nlohmann::json a = object, b = old;
    for (auto* o : {&a, &b}) {
      o->erase("metadata");
      o->erase("status");
    }
    int64_t generation = old["metadata"].value("generation", int64_t{1});
    meta["generation"] = a == b ? generation : generation + 1;
    meta["resourceVersion"] = std::to_string(++rv_);
    it->second = object;
    return Change{rv_,      ChangeType::kModified,
                  resource, ns,
                  name,     std::make_shared<const nlohmann::json>(object),
                  nullptr};
  }
  Result<Change> Delete(const std::string& resource, const std::string& ns,
                        const std::string& name) {
    auto it = objects_.find({resource, ns, name});
    if (it == objects_.end()) return NotFound(resource + " " + name + " not found");
    Change c{++rv_,    ChangeType::kDeleted,
             resource, ns,
             name,     std::make_shared<const nlohmann::json>(it->second),
             nullptr};
    objects_.erase(it);
    return c;
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
  int64_t uids_ = 0;
  std::map<std::tuple<std::string, std::string, std::string>, nlohmann::json> objects_;
};

}  // namespace muster::control::testing
