#include "server/json_merge_patch.h"

namespace muster::server {

void ApplyMergePatch(nlohmann::json& target, const nlohmann::json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = nlohmann::json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.value().is_null()) {
      target.erase(it.key());
    } else {
      ApplyMergePatch(target[it.key()], it.value());
    }
  }
}

}  // namespace muster::server
