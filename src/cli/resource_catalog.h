// ResourceCatalog: the server's resource types as its discovery documents describe
// them (/api/v1, /apis, /apis/<group>/<version>), so the client commands resolve
// "cq", "clusterqueue", "ClusterQueue" or "jobs.batch.volcano.sh" the way kubectl
// does, and know each type's path and scope.
#pragma once

#include <string>
#include <vector>

#include "cli/api_client.h"
#include "core/status.h"

namespace muster::cli {

struct ApiResource {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;
  std::string plural;
  std::string singular;
  std::vector<std::string> short_names;
  bool namespaced = true;

  // "v1" or "<group>/<version>".
  std::string GroupVersion() const;
  // The list path; `ns` "" lists every namespace (ignored for cluster-scoped types).
  std::string CollectionPath(const std::string& ns) const;
  std::string ObjectPath(const std::string& ns, const std::string& name) const;
  // How kubectl names the type in its output: "pod", "clusterqueue.kueue.x-k8s.io".
  std::string DisplayName() const;
};

class ResourceCatalog {
 public:
  static Result<ResourceCatalog> Discover(ApiClient& client);

  // A TYPE argument: plural, singular, short name or Kind (any case), optionally
  // qualified as "<that>.<group>". Core types win, then groups in discovery order,
  // each at its preferred version.
  Result<ApiResource> Resolve(const std::string& type) const;
  // The type of a manifest: apiVersion ("v1", "group/version") and kind.
  Result<ApiResource> ForKind(const std::string& api_version, const std::string& kind) const;

 private:
  // Discovery order; within a group the preferred version comes first.
  std::vector<ApiResource> resources_;
};

}  // namespace muster::cli
