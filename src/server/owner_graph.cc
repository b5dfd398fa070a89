#include "server/owner_graph.h"

#include <algorithm>
#include <cstdlib>

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

// The owner uids, and those whose reference says blockOwnerDeletion.
void OwnerUids(const json& object, std::vector<std::string>& owners,
               std::vector<std::string>& blocking) {
  const json* meta = Metadata(object);
  if (meta == nullptr) return;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return;
  for (const json& ref : *refs) {
    if (!ref.is_object()) continue;
    auto uid = ref.find("uid");
    if (uid == ref.end() || !uid->is_string() || uid->get<std::string>().empty()) continue;
    owners.push_back(uid->get<std::string>());
    auto block = ref.find("blockOwnerDeletion");
    if (block != ref.end() && block->is_boolean() && block->get<bool>())
      blocking.push_back(owners.back());
  }
}

}  // namespace

std::string OwnerGraph::Id(const control::ObjectKey& key) {
  return key.resource + "/" + key.namespace_ + "/" + key.name;
}

const OwnerGraph::Node& OwnerGraph::Put(const control::ObjectKey& key, const json& object) {
  const std::string id = Id(key);
  Remove(id);
  Node node{key, UidOf(object), {}, {}};
  OwnerUids(object, node.owners, node.blocking);
  node.deleting = control::BeingDeleted(object);
  node.foreground = node.deleting && control::HasFinalizer(object, kForegroundFinalizer);
  if (const json* md = Metadata(object); md != nullptr) {
    auto rv = md->find("resourceVersion");
    if (rv != md->end() && rv->is_string()) {
      node.rv = std::strtoll(rv->get_ref<const std::string&>().c_str(), nullptr, 10);
    }
  }
  if (!node.uid.empty()) by_uid_[node.uid] = id;
  for (const std::string& owner : node.owners) dependents_[owner].insert(id);
  for (const std::string& owner : node.blocking) ++blocking_count_[owner];
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
  for (const std::string& owner : it->second.blocking) {
    auto b = blocking_count_.find(owner);
    if (b != blocking_count_.end() && --b->second <= 0) blocking_count_.erase(b);
  }
  auto u = by_uid_.find(it->second.uid);
  if (u != by_uid_.end() && u->second == id) {
    by_uid_.erase(u);
    requested_.erase(it->second.uid);
    requested_.erase("release/" + it->second.uid);
  }
  objects_.erase(it);
}

bool OwnerGraph::AnyOwnerExists(const Node& node) const {
  return std::any_of(node.owners.begin(), node.owners.end(),
                     [&](const std::string& uid) { return by_uid_.count(uid) > 0; });
}

const OwnerGraph::Node* OwnerGraph::ByUid(const std::string& uid) const {
  auto u = by_uid_.find(uid);
  if (u == by_uid_.end()) return nullptr;
  auto it = objects_.find(u->second);
  return it == objects_.end() ? nullptr : &it->second;
}

bool OwnerGraph::HasSolidOwner(const Node& node) const {
  return std::any_of(node.owners.begin(), node.owners.end(), [&](const std::string& uid) {
    const Node* owner = ByUid(uid);
    return owner != nullptr && !owner->foreground;
  });
}

void OwnerGraph::Foreground(const Node& owner, Work& work) {
  if (auto deps = dependents_.find(owner.uid); deps != dependents_.end()) {
    for (const std::string& id : deps->second) {
      const Node& dep = objects_.at(id);
      if (dep.deleting) continue;
      if (HasSolidOwner(dep)) {
        // Another owner keeps it: it only stops naming this one (upstream too).
        work.orphan.push_back({{dep.key, dep.uid}, owner.uid});
        continue;
      }
      CollectIfUnowned(dep, work);
    }
  }
  ReleaseIfUnblocked(owner.uid, work);
}

void OwnerGraph::CollectIfUnowned(const Node& node, Work& work) {
  if (node.owners.empty() || node.deleting || HasSolidOwner(node) || !Ask(node.uid)) return;
  // Owners waiting for their dependents: it goes in Foreground if it owns objects too.
  const bool foreground = AnyOwnerExists(node) && dependents_.count(node.uid) != 0;
  if (foreground) {
    work.collect_foreground.push_back({node.key, node.uid});  // marked first: no rv
  } else {
    work.collect.push_back(
        {node.key, node.uid, node.rv > 0 ? std::optional<int64_t>(node.rv) : std::nullopt});
  }
}

bool OwnerGraph::Ask(const std::string& uid) {
  return uid.empty() || requested_.insert(uid).second;
}

void OwnerGraph::ReleaseIfUnblocked(const std::string& owner_uid, Work& work) {
  const Node* owner = ByUid(owner_uid);
  if (owner == nullptr || !owner->foreground || blocking_count_.count(owner_uid) != 0) return;
  // Asked once per mark: the release's own change comes back without the finalizer.
  if (!Ask("release/" + owner_uid)) return;
  work.release.push_back({owner->key, owner->uid});
}

void OwnerGraph::Load(const control::ObjectKey& key, const json& object) { Put(key, object); }

OwnerGraph::Work OwnerGraph::Sweep() {
  Work work;
  std::vector<const Node*> garbage;
  for (const auto& [id, node] : objects_) {
    if (!node.owners.empty() && !AnyOwnerExists(node)) garbage.push_back(&node);
  }
  // Deterministic order (the map is unordered).
  std::sort(garbage.begin(), garbage.end(),
            [](const Node* a, const Node* b) { return Id(a->key) < Id(b->key); });
  for (const Node* node : garbage) work.collect.push_back({node->key, node->uid});
  // Foreground deletions the server stopped in the middle of go on.
  std::vector<const Node*> waiting;
  for (const auto& [id, node] : objects_) {
    if (node.foreground) waiting.push_back(&node);
  }
  std::sort(waiting.begin(), waiting.end(),
            [](const Node* a, const Node* b) { return Id(a->key) < Id(b->key); });
  for (const Node* node : waiting) Foreground(*node, work);
  return work;
}

OwnerGraph::Work OwnerGraph::Apply(const control::Change& change) {
  Work work;
  const control::ObjectKey key{change.resource, change.namespace_, change.name};
  const std::string id = Id(key);
  // The owners it named before this change: one waiting on it may be free now.
  std::vector<std::string> owners_before;
  if (auto it = objects_.find(id); it != objects_.end()) owners_before = it->second.owners;
  if (change.type != control::ChangeType::kDeleted) {
    const Node& node = Put(key, change.Object());
    // Created (or re-pointed) after its owners were deleted, or while they wait for
    // their dependents to go: garbage at once.
    CollectIfUnowned(node, work);
    if (node.foreground) Foreground(node, work);
    for (const std::string& owner : owners_before) ReleaseIfUnblocked(owner, work);
    return work;
  }
  auto it = objects_.find(id);
  const std::string uid = it != objects_.end() ? it->second.uid : UidOf(change.Object());
  Remove(id);
  for (const std::string& owner : owners_before) ReleaseIfUnblocked(owner, work);
  if (uid.empty()) return work;
  auto deps = dependents_.find(uid);
  if (deps == dependents_.end()) return work;
  const bool orphan = control::HasFinalizer(change.Object(), kOrphanFinalizer);
  for (const std::string& dep : deps->second) {
    const Node& node = objects_.at(dep);
    if (orphan) {
      work.orphan.push_back({{node.key, node.uid}, uid});
    } else {
      CollectIfUnowned(node, work);
    }
  }
  return work;
}

}  // namespace muster::server
