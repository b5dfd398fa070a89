#include "server/crd_catalog.h"

#include <ctime>

#include "control/workload_objects.h"
#include "server/api_status.h"
#include "server/label_selector.h"
#include "server/openapi_schemas.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr const char* kCrdPlural = "customresourcedefinitions";

// When this process started serving: the CRDs' creationTimestamp (they exist as long
// as the server does).
int64_t ServedSince() {
  static const int64_t kSince = static_cast<int64_t>(std::time(nullptr));
  return kSince;
}

std::string CrdName(const control::ResourceType& t) { return t.plural + "." + t.group; }

json Names(const control::ResourceType& t) {
  json names = {{"plural", t.plural},
                {"singular", t.singular},
                {"kind", t.kind},
                {"listKind", t.kind + "List"}};
  if (!t.short_names.empty()) names["shortNames"] = t.short_names;
  return names;
}

json Condition(const char* type, const char* reason, const char* message, const std::string& at) {
  return {{"type", type},
          {"status", "True"},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", at}};
}

json TableOf(const std::vector<json>& crds, const ApiRequest& r) {
  json table = {{"kind", "Table"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", {{"resourceVersion", "1"}}},
                {"columnDefinitions",
                 {{{"name", "Name"},
                   {"type", "string"},
                   {"format", "name"},
                   {"description", "Name must be unique within a namespace."},
                   {"priority", 0}},
                  {{"name", "Created At"},
                   {"type", "date"},
                   {"format", ""},
                   {"description", "When the definition was created."},
                   {"priority", 0}}}},
                {"rows", json::array()}};
  auto it = r.query.find("includeObject");
  const std::string include = it == r.query.end() ? "Metadata" : it->second;
  for (const auto& crd : crds) {
    json row = {{"cells", {crd["metadata"]["name"], crd["metadata"]["creationTimestamp"]}}};
    if (include == "Object") row["object"] = crd;
    if (include != "None" && include != "Object") {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", crd["metadata"]}};
    }
    table["rows"].push_back(std::move(row));
  }
  return table;
}

}  // namespace

const control::ResourceType& CrdType() {
  static const control::ResourceType kType = [] {
    control::ResourceType t;
    t.group = kCrdGroup;
    t.versions = {"v1"};
    t.kind = "CustomResourceDefinition";
    t.plural = kCrdPlural;
    t.singular = "customresourcedefinition";
    t.short_names = {"crd", "crds"};
    t.namespaced = false;
    t.validated = false;
    return t;
  }();
  return kType;
}

json CrdApiResources() {
  return json::array({{{"name", kCrdPlural},
                       {"singularName", "customresourcedefinition"},
                       {"namespaced", false},
                       {"kind", "CustomResourceDefinition"},
                       {"verbs", {"get", "list"}},
                       {"shortNames", {"crd", "crds"}},
                       {"categories", {"api-extensions"}}}});
}

bool IsCustomResource(const control::ResourceType& type) {
  return !IsBuiltInGroup(type.group) && !type.view && !type.review;
}

json CustomResourceDefinition(const control::ResourceType& t, int64_t created_unix) {
  const std::string created = control::Rfc3339(created_unix);
  json versions = json::array();
  for (size_t i = 0; i < t.versions.size(); ++i) {
    json v = {{"name", t.versions[i]},
              {"served", true},
              // One stored form for every version (the store keys objects by kind).
              {"storage", i == 0},
              {"schema", {{"openAPIV3Schema", CrdSchema(t, t.versions[i])}}}};
    if (t.has_status) v["subresources"] = {{"status", json::object()}};
    versions.push_back(std::move(v));
  }
  return {
      {"apiVersion", std::string(kCrdGroup) + "/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata",
       {{"name", CrdName(t)},
        {"resourceVersion", "1"},
        {"generation", 1},
        {"creationTimestamp", created},
        {"annotations", {{"muster.dev/built-in", "true"}}}}},
      {"spec",
       {{"group", t.group},
        {"names", Names(t)},
        {"scope", t.namespaced ? "Namespaced" : "Cluster"},
        {"versions", std::move(versions)},
        {"conversion", {{"strategy", "None"}}}}},
      {"status",
       {{"acceptedNames", Names(t)},
        {"conditions",
         {Condition("NamesAccepted", "NoConflicts", "no conflicts found", created),
          Condition("Established", "InitialNamesAccepted", "the initial names have been accepted",
                    created)}},
        {"storedVersions", {t.versions.front()}}}},
  };
}

std::optional<ApiResponse> HandleCrdRoute(const ApiRequest& request) {
  std::string path = request.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string prefix = std::string("/apis/") + kCrdGroup + "/v1/" + kCrdPlural;
  if (path.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::string name;
  if (path.size() > prefix.size()) {
    if (path[prefix.size()] != '/') return std::nullopt;
    name = path.substr(prefix.size() + 1);
    if (name.find('/') != std::string::npos) {
      return ErrorResponse(NotFoundError("the server could not find the requested resource"));
    }
  }
  auto it = request.query.find("watch");
  const bool watch = it != request.query.end() && (it->second == "true" || it->second == "1");
  if (request.method != "GET" || watch) {
    ApiError e = MethodNotAllowed(
        std::string(kCrdPlural) + "." + kCrdGroup +
        " are read only in muster: its kinds are built in and cannot be created, changed, "
        "deleted or watched");
    e.name = name;
    e.group = kCrdGroup;
    e.kind = kCrdPlural;
    return ErrorResponse(e);
  }
  auto param = [&](const char* key) {
    auto p = request.query.find(key);
    return p == request.query.end() ? std::string() : p->second;
  };
  auto labels = LabelSelector::Parse(param("labelSelector"));
  if (!labels.ok()) return ErrorResponse(BadRequest(labels.status().message()));
  auto fields = FieldSelector::Parse(param("fieldSelector"));
  if (!fields.ok()) return ErrorResponse(BadRequest(fields.status().message()));
  std::vector<json> crds;
  for (const auto& t : control::ResourceTypes()) {
    if (!IsCustomResource(t) || (!name.empty() && CrdName(t) != name)) continue;
    json crd = CustomResourceDefinition(t, ServedSince());
    if (name.empty() && (!labels->Matches(crd) || !fields->Matches(crd))) continue;
    crds.push_back(std::move(crd));
  }
  if (!name.empty() && crds.empty()) {
    return ErrorResponse(FromStatus(NotFound(""), kCrdPlural, kCrdGroup, name));
  }
  const bool table = request.accept.find("as=Table") != std::string::npos;
  if (table) return JsonResponse(200, TableOf(crds, request));
  if (!name.empty()) return JsonResponse(200, crds.front());
  return JsonResponse(200, {{"kind", "CustomResourceDefinitionList"},
                            {"apiVersion", std::string(kCrdGroup) + "/v1"},
                            {"metadata", {{"resourceVersion", "1"}}},
                            {"items", crds}});
}

}  // namespace muster::server
