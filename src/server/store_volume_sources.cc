#include "server/store_volume_sources.h"

#include "core/base64.h"

namespace muster::server {

using json = nlohmann::json;

std::optional<ClaimInfo> StoreVolumeSources::Claim(const std::string& name) const {
  auto object = store_.Get({"persistentvolumeclaims", ns_, name});
  if (!object.ok()) return std::nullopt;
  ClaimInfo info;
  const json& o = *object;
  if (o.contains("status") && o["status"].is_object()) info.phase = o["status"].value("phase", "");
  if (o.contains("spec") && o["spec"].is_object() && o["spec"].contains("accessModes") &&
      o["spec"]["accessModes"].is_array()) {
    for (const auto& m : o["spec"]["accessModes"]) {
      if (m.is_string()) info.access_modes.push_back(m.get<std::string>());
    }
  }
  return info;
}

const model::StringMap* StoreVolumeSources::Load(const std::string& resource,
                                                 const std::string& name, bool secret) const {
  std::string key = resource + "/" + name;
  if (auto it = cache_.find(key); it != cache_.end()) return it->second ? &*it->second : nullptr;
  auto object = store_.Get({resource, ns_, name});
  std::optional<model::StringMap>& slot = cache_[key];
  if (!object.ok()) return nullptr;
  model::StringMap data;
  if (object->contains("data") && (*object)["data"].is_object()) {
    for (const auto& [k, v] : (*object)["data"].items()) {
      if (!v.is_string()) continue;
      if (!secret) {
        data[k] = v.get<std::string>();
      } else if (auto decoded = DecodeBase64(v.get<std::string>()); decoded.ok()) {
        data[k] = *decoded;
      }
    }
  }
  if (secret && object->contains("stringData") && (*object)["stringData"].is_object()) {
    for (const auto& [k, v] : (*object)["stringData"].items()) {
      if (v.is_string()) data[k] = v.get<std::string>();
    }
  }
  slot = std::move(data);
  return &*slot;
}

}  // namespace muster::server
