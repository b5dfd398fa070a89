#include "server/adopted_pods.h"

namespace muster::server {

const AdoptedPodSweeper::PodsByOwner& AdoptedPodSweeper::Index(const std::string& ns) {
  auto [it, fresh] = by_namespace_.try_emplace(ns);
  if (!fresh) return it->second;
  auto pods = store_.List("pods", ns);
  if (!pods.ok()) return it->second;
  for (const auto& pod : pods->items) {
    auto meta = pod.find("metadata");
    if (meta == pod.end() || !meta->is_object()) continue;
    const std::string name = meta->value("name", "");
    auto refs = meta->find("ownerReferences");
    if (refs == meta->end() || !refs->is_array()) continue;
    for (const auto& o : *refs) {
      if (o.is_object() && o.contains("uid") && o["uid"].is_string()) {
        it->second[o["uid"].get<std::string>()].push_back(name);
      }
    }
  }
  return it->second;
}

int AdoptedPodSweeper::DeleteOutsideGang(const std::string& ns, const std::string& job_uid,
                                         const std::set<std::string>& keep) {
  if (job_uid.empty()) return 0;
  const PodsByOwner& index = Index(ns);
  auto owned = index.find(job_uid);
  if (owned == index.end()) return 0;
  int deleted = 0;
  for (const std::string& name : owned->second) {
    if (keep.count(name) == 0 && store_.Delete({"pods", ns, name}).ok()) ++deleted;
  }
  // A gang is adopted once per start-up: its entry is not needed again.
  by_namespace_[ns].erase(job_uid);
  return deleted;
}

}  // namespace muster::server
