#include "server/owner_graph.h"

#include <algorithm>

namespace muster::server {
namespace {

using nlohmann::json;

const json* Metadata(const json& object) {
  if (!object.is_object()) return nullptr;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

std::string UidOf(const json& object) {
  const json* meta = Metadata(object);
  if (meta == nullptr) return "";
  auto it = meta->find("uid");
  return it != meta->end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> OwnerUids(const json& object) {
  std::vector<std::string> out;
  const json* meta = Metadata(object);
  if (meta == nullptr) return out;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return out;
  for (const json& ref : *refs) {
    if (!ref.is_object()) continue;
    auto uid = ref.find("uid");
    if (uid != ref.end() && uid->is_string() && !uid->get<std::string>().empty())
      out.push_back(uid->get<std::string>());
  }
  return out;
}

bool HasFinalizer(const json& object, const std::string& finalizer) {
  const json* meta = Metadata(object);
  if (meta == nullptr) return false;
  auto list = meta->find("finalizers");
  if (list == meta->end() || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(),
                     [&](const json& f) { return f.is_string() && f == finalizer; });
}

}  // namespace

std::string OwnerGraph::Id(const control::ObjectKey& key) {
  return key.resource + "/" + key.namespace_ + "/" + key.name;
}

const OwnerGraph::Node& OwnerGraph::Put(const control::ObjectKey& key, const json& object) {
  const std::string id = Id(key);
  Remove(id);
  Node node{key, UidOf(object), OwnerUids(object)};
  if (!node.uid.empty()) by_uid_[node.uid] = id;
  for (const std::string& owner : node.owners) dependents_[owner].insert(id);
  return objects_[id] = std::move(node);
}

void OwnerGraph::Remove(const std::string& id) {
  auto it = objects_.find(id);
  if (it == objects_.end()) return;
  for (const std::string& owner : it->second.owners) {
    auto d = dependents_.find(owner);
    if (d == dependents_.end()) continue;
    d->second.erase(id);
    if (d->second.empty()) dependents_.erase(d);
  }
  auto u = by_uid_.find(it->second.uid);
  if (u != by_uid_.end() && u->second == id) by_uid_.erase(u);
  objects_.erase(it);
}

bool OwnerGraph::AnyOwnerExists(const Node& node) const {
  return std::any_of(node.owners.begin(), node.owners.end(),
                     [&](const std::string& uid) { return by_uid_.count(uid) > 0; });
}

void OwnerGraph::Load(const control::ObjectKey& key, const json& object) { Put(key, object); }

OwnerGraph::Work OwnerGraph::Sweep() const {
  Work work;
  std::vector<const Node*> garbage;
  for (const auto& [id, node] : objects_) {
    if (!node.owners.empty() && !AnyOwnerExists(node)) garbage.push_back(&node);
  }
  // Deterministic order (the map is unordered).
  std::sort(garbage.begin(), garbage.end(),
            [](const Node* a, const Node* b) { return Id(a->key) < Id(b->key); });
  for (const Node* node : garbage) work.collect.push_back({node->key, node->uid});
  return work;
}

OwnerGraph::Work OwnerGraph::Apply(const control::Change& change) {
  Work work;
  const control::ObjectKey key{change.resource, change.namespace_, change.name};
  if (change.type != control::ChangeType::kDeleted) {
    const Node& node = Put(key, change.Object());
    // Created (or re-pointed) after its owners were deleted: garbage at once.
    if (!node.owners.empty() && !AnyOwnerExists(node)) work.collect.push_back({node.key, node.uid});
    return work;
  }
  const std::string id = Id(key);
  auto it = objects_.find(id);
  const std::string uid = it != objects_.end() ? it->second.uid : UidOf(change.Object());
  Remove(id);
  if (uid.empty()) return work;
  auto deps = dependents_.find(uid);
  if (deps == dependents_.end()) return work;
  const bool orphan = HasFinalizer(change.Object(), kOrphanFinalizer);
  for (const std::string& dep : deps->second) {
    const Node& node = objects_.at(dep);
    if (orphan) {
      work.orphan.push_back({{node.key, node.uid}, uid});
    } else if (!AnyOwnerExists(node)) {
      work.collect.push_back({node.key, node.uid});
    }
  }
  return work;
}

}  // namespace muster::server
