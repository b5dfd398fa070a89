// The served resource table. Short names follow the upstream CRDs (Kueue's cq, lq,
// wl, rf; Volcano's vcjob, pg; core's po, no, ns, ev) so users' habits carry over.
#include "control/resource_types.h"

#include <algorithm>

namespace muster::control {

std::string ResourceType::StoreKey() const { return group.empty() ? plural : plural + "." + group; }

std::string ResourceType::ApiVersion(std::string_view version) const {
  return group.empty() ? std::string(version) : group + "/" + std::string(version);
}

bool ResourceType::ServesVersion(std::string_view version) const {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

const std::vector<ResourceType>& ResourceTypes() {
  // Fields: group, versions, kind, plural, singular, short names, namespaced,
  // has_status, validated, view, review.
  // One row per kind, kept as written (clang-format would give each field a line).
  // clang-format off
  static const std::vector<ResourceType> kTypes = {
      {"", {"v1"}, "Node", "nodes", "node", {"no"}, false, true, true},
      {"", {"v1"}, "Pod", "pods", "pod", {"po"}, true, true, false},
      {"", {"v1"}, "Namespace", "namespaces", "namespace", {"ns"}, false, true, false},
      {"", {"v1"}, "Event", "events", "event", {"ev"}, true, false, false},
      // Core kinds pods read (server/core_validation.h validates them; quota in
      // server/resource_quota.h). kube's reflectors list their own kinds by name, so
      // these add nothing a real cluster's adapter watches.
      {"", {"v1"}, "ConfigMap", "configmaps", "configmap", {"cm"}, true, false, false},
      {"", {"v1"}, "Secret", "secrets", "secret", {}, true, false, false},
      {"", {"v1"}, "Service", "services", "service", {"svc"}, true, true, false},
      {"", {"v1"}, "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim",
       {"pvc"}, true, true, false},
      {"", {"v1"}, "ResourceQuota", "resourcequotas", "resourcequota", {"quota"}, true, true,
       false},
      {"", {"v1"}, "ServiceAccount", "serviceaccounts", "serviceaccount", {"sa"}, true, false,
       false},
      // Defaults and bounds for a namespace's pods: decoded (api/) like the engine's
      // configuration, read when jobs are decoded (workloads/limit_ranges.h).
      {"", {"v1"}, "LimitRange", "limitranges", "limitrange", {"limits"}, true, false, true},
      {"topology.node.k8s.io", {"v1alpha2"}, "NodeResourceTopology", "noderesourcetopologies",
       "noderesourcetopology", {"node-res-topo"}, false, false, true},
      {"scheduling.k8s.io", {"v1"}, "PriorityClass", "priorityclasses", "priorityclass", {"pc"},
       false, false, true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "ResourceFlavor", "resourceflavors",
       "resourceflavor", {"flavor", "flavors", "rf"}, false, false, true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "ClusterQueue", "clusterqueues", "clusterqueue",
       {"cq"}, false, true, true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "LocalQueue", "localqueues", "localqueue",
       {"queue", "queues", "lq"}, true, true, true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "Cohort", "cohorts", "cohort", {}, false, true,
       true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "WorkloadPriorityClass",
       "workloadpriorityclasses", "workloadpriorityclass", {}, false, false, true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "Topology", "topologies", "topology", {},
       false, false, true},
      {"kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "Workload", "workloads", "workload",
       {"wl"}, true, true, false},
      {"scheduling.volcano.sh", {"v1beta1"}, "Queue", "queues", "queue", {"q"}, false, true,
       true},
      {"scheduling.volcano.sh", {"v1beta1"}, "PodGroup", "podgroups", "podgroup", {"pg"}, true,
       true, true},
      {"topology.volcano.sh", {"v1alpha1"}, "HyperNode", "hypernodes", "hypernode", {"hn"},
       false, true, true},
      {"batch.volcano.sh", {"v1alpha1"}, "Job", "jobs", "job", {"vcjob", "vj"}, true, true,
       true},
      {"kubeflow.org", {"v1"}, "PyTorchJob", "pytorchjobs", "pytorchjob", {}, true, true, true},
      {"kubeflow.org", {"v1"}, "TFJob", "tfjobs", "tfjob", {}, true, true, true},
      {"kubeflow.org", {"v2beta1"}, "MPIJob", "mpijobs", "mpijob", {}, true, true, true},
      {"jobset.x-k8s.io", {"v1alpha2"}, "JobSet", "jobsets", "jobset", {"js"}, true, true,
       true},
      {"trainer.kubeflow.org", {"v1alpha1"}, "ClusterTrainingRuntime", "clustertrainingruntimes",
       "clustertrainingruntime", {}, false, false, true},
      {"trainer.kubeflow.org", {"v1alpha1"}, "TrainingRuntime", "trainingruntimes",
       "trainingruntime", {}, true, false, true},
      {"trainer.kubeflow.org", {"v1alpha1"}, "TrainJob", "trainjobs", "trainjob", {}, true, true,
       true},
      {"batch", {"v1"}, "Job", "jobs", "job", {}, true, true, true},
      // Validated by serve's API (not engine configuration: its Jobs are the workloads);
      // server/cronjob_controller.h makes its Jobs.
      {"batch", {"v1"}, "CronJob", "cronjobs", "cronjob", {"cj"}, true, true, false},
      {"config.kueue.x-k8s.io", {"v1beta1", "v1beta2"}, "Configuration", "configurations",
       "configuration", {}, false, false, true},
      {"muster.dev", {"v1alpha1"}, "SchedulerConfiguration", "schedulerconfigurations",
       "schedulerconfiguration", {}, false, false, true},
      {"coordination.k8s.io", {"v1"}, "Lease", "leases", "lease", {}, true, false, false},
      // RBAC (validated by server/rbac_validation.h, enforced by server/auth/).
      {"rbac.authorization.k8s.io", {"v1"}, "ClusterRole", "clusterroles", "clusterrole", {},
       false, false, false},
      {"rbac.authorization.k8s.io", {"v1"}, "ClusterRoleBinding", "clusterrolebindings",
       "clusterrolebinding", {}, false, false, false},
      {"rbac.authorization.k8s.io", {"v1"}, "Role", "roles", "role", {}, true, false, false},
      {"rbac.authorization.k8s.io", {"v1"}, "RoleBinding", "rolebindings", "rolebinding", {},
       true, false, false},
      {"authorization.k8s.io", {"v1"}, "SelfSubjectAccessReview", "selfsubjectaccessreviews",
       "selfsubjectaccessreview", {}, false, false, false, false, true},
      {"authorization.k8s.io", {"v1"}, "SelfSubjectRulesReview", "selfsubjectrulesreviews",
       "selfsubjectrulesreview", {}, false, false, false, false, true},
      // The scheduler's view (the dashboard's data): read-only, not stored.
      {"muster.dev", {"v1alpha1"}, "QueueView", "queueviews", "queueview", {"qv"}, false, false,
       false, true},
      {"muster.dev", {"v1alpha1"}, "WorkloadView", "workloadviews", "workloadview", {"wlv"}, true,
       false, false, true},
      {"muster.dev", {"v1alpha1"}, "NodeView", "nodeviews", "nodeview", {"nv"}, false, false,
       false, true},
      {"muster.dev", {"v1alpha1"}, "ClusterView", "clusterviews", "clusterview", {}, false, false,
       false, true},
  };
  // clang-format on
  return kTypes;
}

const ResourceType* FindResource(std::string_view group, std::string_view version,
                                 std::string_view plural) {
  for (const auto& t : ResourceTypes()) {
    if (t.group == group && t.plural == plural && t.ServesVersion(version)) return &t;
  }
  return nullptr;
}

const ResourceType* FindByKind(std::string_view api_version, std::string_view kind) {
  std::string_view group, version = api_version;
  if (auto slash = api_version.find('/'); slash != std::string_view::npos) {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
  for (const auto& t : ResourceTypes()) {
    if (t.group == group && t.kind == kind && t.ServesVersion(version)) return &t;
  }
  return nullptr;
}

std::vector<ApiGroupInfo> ApiGroups() {
  std::vector<ApiGroupInfo> groups;
  for (const auto& t : ResourceTypes()) {
    if (t.group.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const ApiGroupInfo& g) { return g.name == t.group; });
    if (it == groups.end()) {
      groups.push_back({t.group, {}});
      it = groups.end() - 1;
    }
    for (const auto& v : t.versions) {
      if (std::find(it->versions.begin(), it->versions.end(), v) == it->versions.end()) {
        it->versions.push_back(v);
      }
    }
  }
  // Like kube-apiserver, built-in groups come before custom ones, so clients that
  // resolve a bare name through discovery ("jobs") find batch/v1 before Volcano's.
  std::stable_partition(groups.begin(), groups.end(), [](const ApiGroupInfo& g) {
    return g.name == "batch" || g.name == "scheduling.k8s.io";
  });
  return groups;
}

}  // namespace muster::control
