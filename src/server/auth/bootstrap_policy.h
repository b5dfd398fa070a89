// The default roles and bindings serve starts with, after kube-apiserver's bootstrap
// policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), covering the kinds
// muster serves:
// - cluster-admin: everything; bound to the group system:masters.
// - admin, edit, view: meant for RoleBindings in a namespace. view reads the
//   workload kinds (core, batch, Kueue, Volcano, Kubeflow, JobSet, muster's views),
//   their status and pod logs, but not Secrets, and, bound cluster-wide, the
//   cluster-scoped kinds users look at (ClusterQueues, ResourceFlavors, Cohorts,
//   Volcano Queues, Nodes, priority classes). edit adds writing the workload kinds
//   (never their status), admin adds Roles, RoleBindings, LocalQueues and
//   Workloads. Listed whole: no aggregation controller.
// - system:discovery, system:basic-user (self reviews), system:public-info-viewer
//   (health and version, also for system:unauthenticated), system:monitoring.
// Each carries rbac.authorization.kubernetes.io/autoupdate "true": at every start a
// missing object is created and missing rules or subjects are added back, unless an
// operator set that annotation to "false".
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"
#include "server/object_store.h"

namespace muster::server::auth {

std::vector<nlohmann::json> BootstrapClusterRoles();
std::vector<nlohmann::json> BootstrapClusterRoleBindings();

struct ReconcileCounts {
  int created = 0;
  int updated = 0;
};

// Creates or completes the bootstrap objects in `store`.
Result<ReconcileCounts> ReconcileBootstrapPolicy(ObjectStore& store);

}  // namespace muster::server::auth
