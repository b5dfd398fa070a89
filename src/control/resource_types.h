// The resource types the API server serves: every kind of CONTRACT section 1 plus
// v1 Pod, Namespace, Event, ConfigMap, Secret, Service, PersistentVolumeClaim,
// ResourceQuota, ServiceAccount and kueue.x-k8s.io Workload. Discovery, routing, the
// store key and Table columns all read this one table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace muster::control {

struct ResourceType {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;  // served versions; the first is preferred
  std::string kind;
  std::string plural;
  std::string singular;
  std::vector<std::string> short_names;
  bool namespaced = true;
  // Has a status subresource: writes to the main resource keep the stored status
  // and PUT/PATCH on .../status touch nothing else (Kubernetes conventions).
  bool has_status = true;
  // Decoded and validated with api::DecodeText on every create and update. False for
  // kinds the api layer does not model (Pod, Namespace, Event, Workload).
  bool validated = true;
  // Read-only and not stored: served from the scheduler's published view
  // (control/scheduler_view.h, ui/view_api.h); get and list only.
  bool view = false;
  // Create-only and not stored: a review answered from the request alone
  // (authorization.k8s.io SelfSubjectAccessReview, SelfSubjectRulesReview).
  bool review = false;

  // The store key: "<plural>" for the core group, "<plural>.<group>" otherwise, so
  // batch Jobs and Volcano Jobs never share a key. Independent of the version.
  std::string StoreKey() const;
  // "<group>/<version>" or "v1" for the core group.
  std::string ApiVersion(std::string_view version) const;
  bool ServesVersion(std::string_view version) const;
};

const std::vector<ResourceType>& ResourceTypes();

// The type served at /api(s)/<group>/<version>/.../<plural>; nullptr if none.
const ResourceType* FindResource(std::string_view group, std::string_view version,
                                 std::string_view plural);
// By apiVersion ("group/version" or "v1") and kind; nullptr if none.
const ResourceType* FindByKind(std::string_view api_version, std::string_view kind);

// Groups in discovery order (core excluded), each with its served versions.
struct ApiGroupInfo {
  std::string name;
  std::vector<std::string> versions;  // preferred first
};
std::vector<ApiGroupInfo> ApiGroups();

}  // namespace muster::control
