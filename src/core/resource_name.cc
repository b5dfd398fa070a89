#include "core/resource_name.h"

#include <array>
#include <atomic>
#include <deque>
#include <limits>
#include <map>
#include <mutex>

namespace muster {
namespace {

struct Registry {
  std::mutex mu;
  std::deque<std::string> names;  // deque: references stay valid as it grows
  std::map<std::string, ResourceId, std::less<>> ids;
  // Each id's name, published once it is interned: Name() is asked on hot paths
  // (sorting a request's resources by name) and reads it without the mutex.
  std::array<std::atomic<const std::string*>, std::numeric_limits<ResourceId>::max() + 1> by_id{};
  Registry() {
    for (const char* n : {"cpu", "memory", "pods", "nvidia.com/gpu", "ephemeral-storage"}) {
      Add(n);
    }
  }
  // Under `mu` (or in the constructor).
  ResourceId Add(std::string_view name) {
    auto id = static_cast<ResourceId>(names.size());
    names.emplace_back(name);
    ids.emplace(std::string(name), id);
    by_id[id].store(&names.back(), std::memory_order_release);
    return id;
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
  return r.Add(name);
}

const std::string& ResourceNames::Name(ResourceId id) {
  Registry& r = GetRegistry();
  if (const std::string* name = r.by_id[id].load(std::memory_order_acquire)) return *name;
  std::lock_guard<std::mutex> lock(r.mu);
  return r.names.at(id);  // never interned: out_of_range, as before
}

size_t ResourceNames::Count() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.names.size();
}

}  // namespace muster
