#include "server/openapi.h"

#include "control/resource_types.h"
#include "server/crd_catalog.h"
#include "server/openapi_schemas.h"

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
  add(kCrdGroup, "v1");
  return {{"paths", paths}};
}

std::optional<json> OpenApiV3Document(const std::string& group, const std::string& version) {
  json paths = json::object();
  json schemas = json::object();
  std::vector<const control::ResourceType*> types;
  for (const auto& t : control::ResourceTypes()) types.push_back(&t);
  // kubectl create/apply of a CRD reads it to learn that the server validates (and
  // then gets the 405 that says the kinds are built in).
  types.push_back(&CrdType());
  for (const auto* type : types) {
    const control::ResourceType& t = *type;
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
    schemas[SchemaName(t, version)] = KindSchema(t, version);
  }
  if (paths.empty()) return std::nullopt;
  schemas[kObjectMetaSchema] = ObjectMetaSchema();
  return json{{"openapi", "3.0.0"},
              {"info", {{"title", "muster"}, {"version", version}}},
              {"paths", paths},
              {"components", {{"schemas", schemas}}}};
}

}  // namespace muster::server
