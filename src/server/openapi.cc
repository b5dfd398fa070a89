#include "server/openapi.h"

#include "control/resource_types.h"

namespace muster::server {
namespace {

using nlohmann::json;

std::string GroupVersionPath(const std::string& group, const std::string& version) {
  return group.empty() ? "api/" + version : "apis/" + group + "/" + version;
}

}  // namespace

json OpenApiV3Index() {
  json paths = json::object();
  auto add = [&](const std::string& g, const std::string& v) {
    std::string p = GroupVersionPath(g, v);
    paths[p] = {{"serverRelativeURL", "/openapi/v3/" + p}};
  };
  add("", "v1");
  for (const auto& g : control::ApiGroups()) {
    for (const auto& v : g.versions) add(g.name, v);
  }
  return {{"paths", paths}};
}

std::optional<json> OpenApiV3Document(const std::string& group, const std::string& version) {
  json paths = json::object();
  for (const auto& t : control::ResourceTypes()) {
    if (t.group != group || !t.ServesVersion(version)) continue;
    if (t.view || t.review) continue;  // read-only or create-only: nothing to patch
    std::string path = "/" + GroupVersionPath(group, version) +
                       (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.plural + "/{name}";
    json op = {{"operationId", "patch" + t.kind},
               {"x-kubernetes-group-version-kind",
                {{"group", group}, {"version", version}, {"kind", t.kind}}},
               {"parameters",
                {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                 {{"name", "dryRun"}, {"in", "query"}, {"schema", {{"type", "string"}}}}}}};
    paths[path] = {{"patch", op}};
  }
  if (paths.empty()) return std::nullopt;
  return json{{"openapi", "3.0.0"},
              {"info", {{"title", "muster"}, {"version", version}}},
              {"paths", paths},
              {"components", {{"schemas", json::object()}}}};
}

}  // namespace muster::server
