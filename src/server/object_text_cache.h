// ObjectTextCache: the stored JSON text of every object in the store, by resource
// and (namespace, name), kept in memory so that a LIST is written out without
// parsing or re-serialising an object (kube-apiserver serves lists from its watch
// cache for the same reason). The store updates it when a write commits; the text is
// shared, immutable, and outlives the cache entry while a reader holds it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "control/object_reader.h"

namespace muster::server {

struct StoredText {
  std::string text;         // the object as stored (metadata.resourceVersion included)
  std::string api_version;  // as stored: a reader presenting another version rewrites it
  std::string kind;
};

class ObjectTextCache {
 public:
  using Entry = std::shared_ptr<const StoredText>;

  void Put(const control::ObjectKey& key, Entry entry);
  void Erase(const control::ObjectKey& key);
  void Clear() { by_resource_.clear(); }

  // Null when there is no such object.
  Entry Get(const control::ObjectKey& key) const;
  // `namespace_` empty: every namespace. In (namespace, name) order, as LIST returns.
  std::vector<Entry> List(const std::string& resource, const std::string& namespace_) const;
  size_t size() const;

 private:
  using Objects = std::map<std::pair<std::string, std::string>, Entry>;
  std::unordered_map<std::string, Objects> by_resource_;
};

}  // namespace muster::server
