#include "server/auth/bootstrap_policy.h"

#include <algorithm>
#include <string>

#include "server/auth/rbac_authorizer.h"
#include "server/auth/rbac_policy.h"

namespace muster::server::auth {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

constexpr char kAutoupdate[] = "rbac.authorization.kubernetes.io/autoupdate";

const Strings kRead = {"get", "list", "watch"};
const Strings kWrite = {"create", "delete", "deletecollection", "patch", "update"};

json Rule(const Strings& verbs, const Strings& groups, const Strings& resources) {
  return {{"verbs", verbs}, {"apiGroups", groups}, {"resources", resources}};
}
json UrlRule(const Strings& verbs, const Strings& urls) {
  return {{"verbs", verbs}, {"nonResourceURLs", urls}};
}

json Meta(const std::string& name) {
  return {{"name", name},
          {"labels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}},
          {"annotations", {{kAutoupdate, "true"}}}};
}

json ClusterRole(const std::string& name, json rules) {
  return {{"apiVersion", std::string(kRbacGroup) + "/v1"},
          {"kind", "ClusterRole"},
          {"metadata", Meta(name)},
          {"rules", std::move(rules)}};
}

json Binding(const std::string& role, const Strings& groups) {
  json subjects = json::array();
  for (const auto& g : groups) {
    subjects.push_back({{"kind", "Group"}, {"apiGroup", kRbacGroup}, {"name", g}});
  }
  return {{"apiVersion", std::string(kRbacGroup) + "/v1"},
          {"kind", "ClusterRoleBinding"},
          {"metadata", Meta(role)},
          {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", "ClusterRole"}, {"name", role}}},
          {"subjects", std::move(subjects)}};
}

// What view reads in a namespace (and everywhere when bound cluster-wide).
json ViewRules() {
  return json::array({
      Rule(kRead, {""},
           {"pods", "pods/log", "pods/status", "events", "configmaps", "services",
            "serviceaccounts", "endpoints", "persistentvolumeclaims", "resourcequotas",
            "resourcequotas/status", "namespaces", "namespaces/status"}),
      Rule(kRead, {"batch"}, {"jobs", "jobs/status", "cronjobs", "cronjobs/status"}),
      Rule(kRead, {"kueue.x-k8s.io"},
           {"localqueues", "localqueues/status", "workloads", "workloads/status"}),
      Rule(kRead, {"batch.volcano.sh"}, {"jobs", "jobs/status"}),
      Rule(kRead, {"scheduling.volcano.sh"}, {"podgroups", "podgroups/status"}),
      Rule(kRead, {"kubeflow.org"},
           {"pytorchjobs", "pytorchjobs/status", "tfjobs", "tfjobs/status", "mpijobs",
            "mpijobs/status"}),
      Rule(kRead, {"jobset.x-k8s.io"}, {"jobsets", "jobsets/status"}),
      Rule(kRead, {"trainer.kubeflow.org"}, {"trainjobs", "trainjobs/status", "trainingruntimes"}),
      Rule(kRead, {"muster.dev"}, {"workloadviews"}),
      // Kueue's visibility API: a LocalQueue's pending workloads (kueue_visibility.h).
      Rule({"get"}, {"visibility.kueue.x-k8s.io"}, {"localqueues/pendingworkloads"}),
      // metrics.k8s.io (kubectl top), as upstream's system:aggregated-metrics-reader.
      Rule(kRead, {"metrics.k8s.io"}, {"pods"}),
      // Cluster-scoped: only a ClusterRoleBinding grants these (a RoleBinding's rules
      // apply to its namespace's objects alone).
      Rule(kRead, {""}, {"nodes", "nodes/status"}),
      Rule(kRead, {"scheduling.k8s.io"}, {"priorityclasses"}),
      Rule(kRead, {"kueue.x-k8s.io"},
           {"clusterqueues", "clusterqueues/status", "resourceflavors", "cohorts", "cohorts/status",
            "workloadpriorityclasses", "topologies"}),
      Rule(kRead, {"scheduling.volcano.sh"}, {"queues", "queues/status"}),
      Rule({"get"}, {"visibility.kueue.x-k8s.io"}, {"clusterqueues/pendingworkloads"}),
      Rule(kRead, {"metrics.k8s.io"}, {"nodes"}),
      Rule(kRead, {"topology.volcano.sh"}, {"hypernodes", "hypernodes/status"}),
      Rule(kRead, {"trainer.kubeflow.org"}, {"clustertrainingruntimes"}),
      Rule(kRead, {"muster.dev"},
           {"queueviews", "nodeviews", "clusterviews", "clusterviews/utilization",
            "clusterviews/timeline"}),
  });
}

// What edit writes on top of view: the workload kinds themselves, never a status.
json EditRules() {
  json rules = ViewRules();
  rules.push_back(Rule(
      kWrite, {""},
      {"pods", "configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims"}));
  rules.push_back(Rule(kRead, {""}, {"secrets"}));
  // Running commands in pods (`kubectl exec`), as upstream's edit role allows.
  rules.push_back(Rule({"create", "get"}, {""}, {"pods/exec"}));
  rules.push_back(Rule(kWrite, {"batch"}, {"jobs", "cronjobs"}));
  rules.push_back(Rule(kWrite, {"batch.volcano.sh"}, {"jobs"}));
  rules.push_back(Rule(kWrite, {"scheduling.volcano.sh"}, {"podgroups"}));
  rules.push_back(Rule(kWrite, {"kubeflow.org"}, {"pytorchjobs", "tfjobs", "mpijobs"}));
  rules.push_back(Rule(kWrite, {"jobset.x-k8s.io"}, {"jobsets"}));
  rules.push_back(Rule(kWrite, {"trainer.kubeflow.org"}, {"trainjobs"}));
  return rules;
}

json AdminRules() {
  json rules = EditRules();
  rules.push_back(Rule(kWrite, {"kueue.x-k8s.io"}, {"localqueues", "workloads"}));
  rules.push_back(Rule(kWrite, {"trainer.kubeflow.org"}, {"trainingruntimes"}));
  Strings all = kRead;
  all.insert(all.end(), kWrite.begin(), kWrite.end());
  rules.push_back(Rule(all, {kRbacGroup}, {"roles", "rolebindings"}));
  return rules;
}

// Adds the rules of `want` that `have` lacks; whether it added any.
bool AddMissing(json& have, const json& want, const char* key) {
  if (!have.contains(key) || !have[key].is_array()) have[key] = json::array();
  bool added = false;
  for (const auto& w : want[key]) {
    if (std::find(have[key].begin(), have[key].end(), w) == have[key].end()) {
      have[key].push_back(w);
      added = true;
    }
  }
  return added;
}

Status Reconcile(ObjectStore& store, const char* resource, const json& want, const char* key,
                 ReconcileCounts& counts) {
  const std::string name = want["metadata"]["name"];
  auto existing = store.Get({resource, "", name});
  if (!existing.ok()) {
    if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    auto created = store.Create({resource, "", name}, want);
    if (!created.ok()) return created.status();
    ++counts.created;
    return Status();
  }
  const json md = existing->value("metadata", json::object());
  const json annotations = md.value("annotations", json::object());
  if (annotations.is_object() && annotations.value(kAutoupdate, "") == "false") return Status();
  json next = *existing;
  if (!AddMissing(next, want, key)) return Status();
  auto updated = store.Update({resource, "", name}, std::move(next), WriteScope::kAll);
  if (!updated.ok()) return updated.status();
  ++counts.updated;
  return Status();
}

}  // namespace

std::vector<json> BootstrapClusterRoles() {
  const Strings all = {"*"};
  return {
      ClusterRole("cluster-admin", json::array({Rule(all, all, all), UrlRule(all, all)})),
      ClusterRole("admin", AdminRules()),
      ClusterRole("edit", EditRules()),
      ClusterRole("view", ViewRules()),
      ClusterRole("system:discovery",
                  json::array({UrlRule(
                      {"get"}, {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                "/openapi", "/openapi/*", "/readyz", "/version", "/version/"})})),
      ClusterRole("system:public-info-viewer",
                  json::array({UrlRule(
                      {"get"}, {"/healthz", "/livez", "/readyz", "/version", "/version/"})})),
      ClusterRole("system:basic-user",
                  json::array({Rule({"create"}, {"authorization.k8s.io"},
                                    {"selfsubjectaccessreviews", "selfsubjectrulesreviews"})})),
      ClusterRole(
          "system:monitoring",
          json::array({UrlRule({"get"}, {"/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics",
                                         "/metrics/slis", "/readyz", "/readyz/*"})})),
  };
}

std::vector<json> BootstrapClusterRoleBindings() {
  return {
      Binding("cluster-admin", {"system:masters"}),
      Binding("system:discovery", {"system:authenticated"}),
      Binding("system:basic-user", {"system:authenticated"}),
      Binding("system:public-info-viewer", {"system:authenticated", "system:unauthenticated"}),
      Binding("system:monitoring", {"system:monitoring"}),
  };
}

Result<ReconcileCounts> ReconcileBootstrapPolicy(ObjectStore& store) {
  ReconcileCounts counts;
  for (const json& role : BootstrapClusterRoles()) {
    if (Status s = Reconcile(store, kClusterRolesKey, role, "rules", counts); !s.ok()) return s;
  }
  for (const json& binding : BootstrapClusterRoleBindings()) {
    if (Status s = Reconcile(store, kClusterRoleBindingsKey, binding, "subjects", counts);
        !s.ok()) {
      return s;
    }
  }
  return counts;
}

}  // namespace muster::server::auth
