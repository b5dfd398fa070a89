#include "server/discovery.h"

#include "control/resource_types.h"
#include "server/crd_catalog.h"
#include "server/kueue_visibility.h"
#include "server/pod_metrics.h"

namespace muster::server {
namespace {

using nlohmann::json;

json GroupJson(const control::ApiGroupInfo& g) {
  json versions = json::array();
  for (const auto& v : g.versions) {
    versions.push_back({{"groupVersion", g.name + "/" + v}, {"version", v}});
  }
  return {{"name", g.name},
          {"versions", versions},
          {"preferredVersion",
           {{"groupVersion", g.name + "/" + g.versions[0]}, {"version", g.versions[0]}}}};
}

// Groups served outside the kind table, after its groups: the CRDs of muster's kinds
// (crd_catalog.h), Kueue's visibility API (kueue_visibility.h) and the metrics API
// (pod_metrics.h).
std::vector<control::ApiGroupInfo> Groups() {
  auto groups = control::ApiGroups();
  groups.push_back({kCrdGroup, {"v1"}});
  groups.push_back({kVisibilityGroup, VisibilityVersions()});
  groups.push_back({kMetricsGroup, {kMetricsVersion}});
  return groups;
}

json ExtraResources(const std::string& group, const std::string& version) {
  if (group == kCrdGroup) return version == "v1" ? CrdApiResources() : json::array();
  if (group == kVisibilityGroup) return VisibilityApiResources(version);
  if (group == kMetricsGroup) return MetricsApiResources(version);
  return json::array();
}

}  // namespace

json CoreApiVersions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

json ApiGroupList() {
  json groups = json::array();
  for (const auto& g : Groups()) groups.push_back(GroupJson(g));
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<json> ApiGroupDocument(const std::string& group) {
  for (const auto& g : Groups()) {
    if (g.name != group) continue;
    json doc = GroupJson(g);
    doc["kind"] = "APIGroup";
    doc["apiVersion"] = "v1";
    return doc;
  }
  return std::nullopt;
}

std::optional<json> ApiResourceList(const std::string& group, const std::string& version) {
  json resources = ExtraResources(group, version);
  for (const auto& t : control::ResourceTypes()) {
    if (t.group != group || !t.ServesVersion(version)) continue;
    json verbs = t.view     ? json{"get", "list"}
                 : t.review ? json{"create"}
                            : json{"create", "delete", "deletecollection", "get",
                                   "list",   "patch",  "update",           "watch"};
    // As upstream, Namespaces have no deletecollection (delete_request.cc).
    if (t.group.empty() && t.kind == "Namespace") verbs.erase(2);
    json r = {{"name", t.plural},
              {"singularName", t.singular},
              {"namespaced", t.namespaced},
              {"kind", t.kind},
              {"verbs", verbs}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    resources.push_back(std::move(r));
    if (t.view && t.kind == "ClusterView") {
      for (const char* sub : {"utilization", "timeline"}) {
        resources.push_back({{"name", t.plural + "/" + sub},
                             {"singularName", ""},
                             {"namespaced", false},
                             {"kind", t.kind},
                             {"verbs", {"get"}}});
      }
    }
    if (t.has_status) {
      resources.push_back({{"name", t.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"kind", t.kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
  }
  if (resources.empty()) return std::nullopt;
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? version : group + "/" + version},
              {"resources", resources}};
}

json VersionInfo() {
  // A recent minor so kubectl's version-skew check stays quiet.
  return {{"major", "1"},          {"minor", "32"},           {"gitVersion", "v1.32.0-muster"},
          {"gitCommit", "muster"}, {"gitTreeState", "clean"}, {"buildDate", "2025-01-01T00:00:00Z"},
          {"goVersion", "n/a"},    {"compiler", "g++"},       {"platform", "linux/amd64"}};
}

}  // namespace muster::server
