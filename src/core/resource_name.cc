#include "core/resource_name.h"

#include <deque>
#include <map>
#include <mutex>

namespace muster {
namespace {

struct Registry {
  std::mutex mu;
  std::deque<std::string> names;  // deque: references stay valid as it grows
  std::map<std::string, ResourceId, std::less<>> ids;
  Registry() {
    for (const char* n : {"cpu", "memory", "pods", "nvidia.com/gpu", "ephemeral-storage"}) {
      ids.emplace(n, static_cast<ResourceId>(names.size()));
      names.emplace_back(n);
    }
  }
};

Registry& GetRegistry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

ResourceId ResourceNames::Intern(std::string_view name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ids.find(name);
  if (it != r.ids.end()) return it->second;
  auto id = static_cast<ResourceId>(r.names.size());
  r.names.emplace_back(name);
  r.ids.emplace(std::string(name), id);
  return id;
}

const std::string& ResourceNames::Name(ResourceId id) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.names.at(id);
}

size_t ResourceNames::Count() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.names.size();
}

}  // namespace muster
