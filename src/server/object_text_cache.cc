#include "server/object_text_cache.h"

namespace muster::server {

void ObjectTextCache::Put(const control::ObjectKey& key, Entry entry) {
  by_resource_[key.resource][{key.namespace_, key.name}] = std::move(entry);
}

void ObjectTextCache::Erase(const control::ObjectKey& key) {
  auto it = by_resource_.find(key.resource);
  if (it == by_resource_.end()) return;
  it->second.erase({key.namespace_, key.name});
  if (it->second.empty()) by_resource_.erase(it);
}

ObjectTextCache::Entry ObjectTextCache::Get(const control::ObjectKey& key) const {
  auto it = by_resource_.find(key.resource);
  if (it == by_resource_.end()) return nullptr;
  auto o = it->second.find({key.namespace_, key.name});
  return o == it->second.end() ? nullptr : o->second;
}

std::vector<ObjectTextCache::Entry> ObjectTextCache::List(const std::string& resource,
                                                          const std::string& namespace_) const {
  std::vector<Entry> out;
  auto it = by_resource_.find(resource);
  if (it == by_resource_.end()) return out;
  const Objects& objects = it->second;
  if (namespace_.empty()) {
    out.reserve(objects.size());
    for (const auto& [k, entry] : objects) out.push_back(entry);
    return out;
  }
  for (auto o = objects.lower_bound({namespace_, ""});
       o != objects.end() && o->first.first == namespace_; ++o) {
    out.push_back(o->second);
  }
  return out;
}

size_t ObjectTextCache::size() const {
  size_t n = 0;
  for (const auto& [resource, objects] : by_resource_) n += objects.size();
  return n;
}

}  // namespace muster::server
