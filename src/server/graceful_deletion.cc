#include "server/graceful_deletion.h"

#include <algorithm>

#include "server/namespace_lifecycle.h"
#include "server/owner_graph.h"

namespace muster::server {
namespace {

using nlohmann::json;

const json* Finalizers(const json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  auto list = meta->find("finalizers");
  return list != meta->end() && list->is_array() ? &*list : nullptr;
}

}  // namespace

bool HeldByFinalizers(const json& object) {
  if (HeldBySpecFinalizers(object)) return true;
  const json* list = Finalizers(object);
  if (list == nullptr) return false;
  return std::any_of(list->begin(), list->end(),
                     [](const json& f) { return !(f.is_string() && f == kOrphanFinalizer); });
}

void MarkForDeletion(json& object, const std::string& now) {
  json& meta = object["metadata"];
  if (!BeingDeleted(object)) meta["deletionTimestamp"] = now;
  meta["deletionGracePeriodSeconds"] = 0;
  // kube-apiserver's namespace storage sets the phase with the mark.
  if (IsNamespaceObject(object)) {
    if (!object["status"].is_object()) object["status"] = json::object();
    object["status"]["phase"] = "Terminating";
  }
}

std::vector<std::string> AddedFinalizers(const json& current, const json& next) {
  std::vector<std::string> added;
  const json* after = Finalizers(next);
  if (after == nullptr) return added;
  const json* before = Finalizers(current);
  for (const json& f : *after) {
    if (!f.is_string()) continue;
    if (before != nullptr && std::find(before->begin(), before->end(), f) != before->end())
      continue;
    added.push_back(f.get<std::string>());
  }
  return added;
}

}  // namespace muster::server
