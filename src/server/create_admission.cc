#include "server/create_admission.h"

#include "server/core_defaults.h"
#include "server/limit_ranger.h"
#include "server/meta_validation.h"
#include "server/pod_priority.h"
#include "server/priority_classes.h"
#include "server/resource_quota.h"

namespace muster::server {

std::mutex& CreateAdmissionMutex() {
  static std::mutex mu;
  return mu;
}

bool CreateNeedsAdmissionLock(const control::ObjectReader& store, const control::ResourceType& type,
                              const std::string& ns) {
  if (type.group.empty() && type.kind == "Service") return true;
  if (!type.namespaced || ns.empty()) return false;
  auto quotas = store.List("resourcequotas", ns);
  return quotas.ok() && !quotas->items.empty();
}

std::optional<ApiError> AdmitCreate(const control::ObjectReader& store,
                                    const control::ResourceType& type, const std::string& ns,
                                    nlohmann::json& object) {
  // LimitRanger runs before ResourceQuota, which then counts the defaults.
  if (type.group.empty() && type.kind == "Pod") {
    if (auto refused = AdmitPodLimits(store, ns, object)) return refused;
    if (auto refused = AdmitPodPriority(store, object)) return refused;
  }
  if (IsPriorityClassType(type)) {
    if (auto refused = AdmitPriorityClass(store, object)) return refused;
  }
  if (auto refused = CheckQuota(store, type, ns, object)) return refused;
  Status allocated = AllocateOnCreate(type, store, object);
  if (allocated.ok()) return std::nullopt;
  const std::string name = object.value("metadata", nlohmann::json::object()).value("name", "");
  if (allocated.code() == StatusCode::kInvalidArgument) {
    const std::string ip = object["spec"].value("clusterIP", "");
    return InvalidObject(type, name, {InvalidValue("spec.clusterIP", ip, allocated.message())});
  }
  return MakeError(500, "InternalError", "Internal error occurred: " + allocated.message());
}

}  // namespace muster::server
