#include "server/adopted_pods.h"

namespace muster::server {

int DeletePodsOutsideGang(ObjectStore& store, const std::string& ns, const std::string& job_uid,
                          const std::set<std::string>& keep) {
  if (job_uid.empty()) return 0;
  auto pods = store.List("pods", ns);
  if (!pods.ok()) return 0;
  int deleted = 0;
  for (const auto& pod : pods->items) {
    const nlohmann::json meta = pod.value("metadata", nlohmann::json::object());
    const std::string name = meta.value("name", "");
    if (keep.count(name) != 0) continue;
    bool owned = false;
    for (const auto& o : meta.value("ownerReferences", nlohmann::json::array())) {
      if (o.is_object() && o.value("uid", "") == job_uid) owned = true;
    }
    if (owned && store.Delete({"pods", ns, name}).ok()) ++deleted;
  }
  return deleted;
}

}  // namespace muster::server
