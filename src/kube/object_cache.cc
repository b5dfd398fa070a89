#include "kube/object_cache.h"

#include <utility>

namespace muster::kube {
namespace {

using json = nlohmann::json;

// Read in place: a watch event's metadata (labels, annotations, owners, managed
// fields) is not copied to find three strings in it.
const json& Meta(const json& object) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}
std::string MetaString(const json& object, const char* key) {
  const json& md = Meta(object);
  auto it = md.find(key);
  return it != md.end() && it->is_string() ? it->get<std::string>() : "";
}
std::string NamespaceOf(const json& object) { return MetaString(object, "namespace"); }
std::string NameOf(const json& object) { return MetaString(object, "name"); }
std::string VersionOf(const json& object) { return MetaString(object, "resourceVersion"); }

control::Change MakeChange(const std::string& resource, control::ChangeType type,
                           std::shared_ptr<const json> object) {
  control::Change c;
  c.type = type;
  c.resource = resource;
  c.namespace_ = NamespaceOf(*object);
  c.name = NameOf(*object);
  const std::string rv = VersionOf(*object);
  char* end = nullptr;
  long long n = rv.empty() ? 0 : std::strtoll(rv.c_str(), &end, 10);
  c.resource_version = (end != nullptr && *end == '\0') ? n : 0;
  c.shared_object = std::move(object);
  return c;
}

}  // namespace

void ObjectCache::Subscribe(Callback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  callback_ = std::move(callback);
}

void ObjectCache::Notify(std::vector<control::Change> changes) {
  Callback callback;
  {
    std::lock_guard<std::mutex> lock(mu_);
    callback = callback_;
  }
  if (!callback) return;
  for (auto& c : changes) callback(std::move(c));
}

void ObjectCache::Replace(const std::string& resource, std::vector<json> items) {
  // notify_mu_ is held from the cache write to the callbacks, so two reflectors'
  // changes reach the subscriber in the order the cache took them.
  std::lock_guard<std::mutex> order(notify_mu_);
  std::vector<control::Change> changes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& current = objects_[resource];
    std::map<std::string, Object> next;
    for (auto& item : items) {
      auto object = std::make_shared<const json>(std::move(item));
      std::string id = NamespaceOf(*object) + "/" + NameOf(*object);
      auto old = current.find(id);
      if (old == current.end()) {
        changes.push_back(MakeChange(resource, control::ChangeType::kAdded, object));
      } else if (VersionOf(*old->second) != VersionOf(*object) || VersionOf(*object).empty()) {
        changes.push_back(MakeChange(resource, control::ChangeType::kModified, object));
      }
      next[id] = std::move(object);
    }
    for (const auto& [id, object] : current) {
      if (next.count(id) == 0)
        changes.push_back(MakeChange(resource, control::ChangeType::kDeleted, object));
    }
    current = std::move(next);
    synced_.insert(resource);
  }
  Notify(std::move(changes));
}

void ObjectCache::Apply(const std::string& resource, control::ChangeType type, json object) {
  std::lock_guard<std::mutex> order(notify_mu_);
  auto shared = std::make_shared<const json>(std::move(object));
  const json& o = *shared;
  control::Change change = MakeChange(resource, type, shared);
  // The object replaced or deleted: destroyed (a whole JSON tree) once the lock is
  // released, not while readers wait for it.
  std::shared_ptr<const json> retired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& current = objects_[resource];
    std::string id = change.namespace_ + "/" + change.name;
    if (type == control::ChangeType::kDeleted) {
      if (auto gone = current.find(id); gone != current.end()) {
        retired = std::move(gone->second);
        current.erase(gone);
      }
    } else {
      // One descent for the lookup and the insert.
      auto old = current.lower_bound(id);
      const bool known = old != current.end() && old->first == id;
      // A watch may repeat what a relist already delivered: nothing changed.
      if (known && !VersionOf(o).empty() && VersionOf(*old->second) == VersionOf(o)) return;
      change.type = known ? control::ChangeType::kModified : control::ChangeType::kAdded;
      if (known) {
        retired = std::exchange(old->second, std::move(shared));
      } else {
        current.emplace_hint(old, std::move(id), std::move(shared));
      }
    }
  }
  // Not Notify({...}): an initializer list would copy the change.
  std::vector<control::Change> changes;
  changes.push_back(std::move(change));
  Notify(std::move(changes));
}

bool ObjectCache::Synced(const std::vector<std::string>& resources) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& r : resources) {
    if (synced_.count(r) == 0) return false;
  }
  return true;
}

size_t ObjectCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [resource, objects] : objects_) n += objects.size();
  return n;
}

Result<json> ObjectCache::Get(const control::ObjectKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = objects_.find(key.resource);
  if (r != objects_.end()) {
    auto it = r->second.find(key.namespace_ + "/" + key.name);
    if (it != r->second.end()) return *it->second;
  }
  return NotFound(key.resource + " \"" + key.name + "\" not found");
}

Result<control::ListResult> ObjectCache::List(const std::string& resource,
                                              const std::string& namespace_) const {
  std::lock_guard<std::mutex> lock(mu_);
  control::ListResult out;
  auto r = objects_.find(resource);
  if (r == objects_.end()) return out;
  // Keys are "<namespace>/<name>", so map order is (namespace, name) order.
  for (const auto& [id, object] : r->second) {
    if (namespace_.empty() || NamespaceOf(*object) == namespace_) out.items.push_back(*object);
  }
  return out;
}

}  // namespace muster::kube
