#include "cli/resource_catalog.h"

#include <algorithm>
#include <cctype>

namespace muster::cli {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void AddResources(const json& list, const std::string& group, const std::string& version,
                  std::vector<ApiResource>& out) {
  if (!list.contains("resources") || !list["resources"].is_array()) return;
  for (const auto& r : list["resources"]) {
    const std::string name = r.value("name", "");
    if (name.empty() || name.find('/') != std::string::npos) continue;  // subresources
    ApiResource a;
    a.group = group;
    a.version = version;
    a.kind = r.value("kind", "");
    a.plural = name;
    a.singular = r.value("singularName", "");
    if (a.singular.empty()) a.singular = Lower(a.kind);
    a.namespaced = r.value("namespaced", true);
    if (r.contains("shortNames") && r["shortNames"].is_array()) {
      for (const auto& s : r["shortNames"]) {
        if (s.is_string()) a.short_names.push_back(s.get<std::string>());
      }
    }
    out.push_back(std::move(a));
  }
}

bool NamedBy(const ApiResource& r, const std::string& lower_name) {
  if (lower_name == r.plural || lower_name == r.singular || lower_name == Lower(r.kind)) {
    return true;
  }
  return std::find(r.short_names.begin(), r.short_names.end(), lower_name) != r.short_names.end();
}

}  // namespace

std::string ApiResource::GroupVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ApiResource::CollectionPath(const std::string& ns) const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) path += "/namespaces/" + ns;
  return path + "/" + plural;
}

std::string ApiResource::ObjectPath(const std::string& ns, const std::string& name) const {
  return CollectionPath(ns) + "/" + name;
}

std::string ApiResource::DisplayName() const {
  return group.empty() ? Lower(kind) : Lower(kind) + "." + group;
}

Result<ResourceCatalog> ResourceCatalog::Discover(ApiClient& client) {
  ResourceCatalog catalog;
  auto core = client.Json("GET", "/api/v1");
  if (!core.ok()) return core.status();
  AddResources(*core, "", "v1", catalog.resources_);
  auto groups = client.Json("GET", "/apis");
  if (!groups.ok()) return groups.status();
  if (!groups->contains("groups") || !(*groups)["groups"].is_array()) return catalog;
  for (const auto& g : (*groups)["groups"]) {
    const std::string name = g.value("name", "");
    std::vector<std::string> versions;
    if (g.contains("preferredVersion") && g["preferredVersion"].is_object()) {
      versions.push_back(g["preferredVersion"].value("version", ""));
    }
    if (g.contains("versions") && g["versions"].is_array()) {
      for (const auto& v : g["versions"]) {
        std::string version = v.value("version", "");
        if (std::find(versions.begin(), versions.end(), version) == versions.end()) {
          versions.push_back(version);
        }
      }
    }
    for (const auto& version : versions) {
      if (name.empty() || version.empty()) continue;
      auto list = client.Json("GET", "/apis/" + name + "/" + version);
      if (!list.ok()) return list.status();
      AddResources(*list, name, version, catalog.resources_);
    }
  }
  return catalog;
}

Result<ApiResource> ResourceCatalog::Resolve(const std::string& type) const {
  const std::string lower = Lower(type);
  for (const auto& r : resources_) {
    if (NamedBy(r, lower)) return r;
  }
  // "<name>.<group>": the group may itself contain dots, so try every split.
  for (size_t dot = lower.find('.'); dot != std::string::npos; dot = lower.find('.', dot + 1)) {
    const std::string name = lower.substr(0, dot);
    const std::string group = lower.substr(dot + 1);
    for (const auto& r : resources_) {
      if (r.group == group && NamedBy(r, name)) return r;
    }
  }
  return NotFound("the server doesn't have a resource type \"" + type + "\"");
}

Result<ApiResource> ResourceCatalog::ForKind(const std::string& api_version,
                                             const std::string& kind) const {
  for (const auto& r : resources_) {
    if (r.GroupVersion() == api_version && r.kind == kind) return r;
  }
  return NotFound("no matches for kind \"" + kind + "\" in version \"" + api_version + "\"");
}

}  // namespace muster::cli
