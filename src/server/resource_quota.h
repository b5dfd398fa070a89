// ResourceQuota accounting as kube-apiserver's quota admission and
// kube-controller-manager's quota controller do it, over serve's store:
//
// - what an object uses: a non-terminal Pod its containers' requests (limits where a
//   request is unset; init containers by their maximum; overhead added) as
//   requests.<r> (cpu, memory, ephemeral-storage also bare), limits.<r> for the
//   compute resources, requests.<extended> (nvidia.com/gpu...), pods; a
//   PersistentVolumeClaim requests.storage and the per-StorageClass forms; a Service
//   services, services.nodeports, services.loadbalancers; ConfigMaps, Secrets,
//   ResourceQuotas their counts; every namespaced object count/<resource>[.<group>]
//   (count/jobs.batch).
// - CheckQuota: a create that would take a namespace past any of its quotas' `hard`
//   is refused with upstream's 403 ("exceeded quota: NAME, requested: ..., used:
//   ..., limited: ..."). Usage is summed from the store at the check, for the
//   resources the quota and the object share, so there is no "status unknown" window.
// - QuotaStatus: status.hard (spec.hard) and status.used, which QuotaController
//   keeps up to date as objects of a namespace with quotas change.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "control/object_reader.h"
#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

// Quota resource name -> amount in milli-units (saturating).
using QuotaAmounts = std::map<std::string, int64_t>;

// Upstream's IsStandardQuotaResourceName (names without a domain).
bool IsStandardQuotaResource(std::string_view name);
// Whether muster counts `name` (the standard names, count/*, requests.<extended>,
// hugepages, the per-StorageClass forms).
bool QuotaTracks(std::string_view name);
// The resource a quota name is an amount of ("requests.nvidia.com/gpu" ->
// "nvidia.com/gpu", "limits.memory" -> "memory"), for bounds and formatting.
std::string QuotaBaseResource(std::string_view name);
// "8", "1Gi": the amount as upstream prints it in quota messages and status.
std::string FormatQuotaAmount(std::string_view name, int64_t milli);

// What `object` of `type` counts toward quota.
QuotaAmounts UsageOf(const control::ResourceType& type, const nlohmann::json& object);

// The namespace's usage of `resources`, summed over the stored objects.
QuotaAmounts NamespaceUsage(const control::ObjectReader& store, const std::string& ns,
                            const std::set<std::string>& resources);

// nullopt when creating `object` of `type` in `ns` fits every quota of `ns`; else
// upstream's 403.
std::optional<ApiError> CheckQuota(const control::ObjectReader& store,
                                   const control::ResourceType& type, const std::string& ns,
                                   const nlohmann::json& object);

// The status a quota should have: hard as its spec says, used from the store.
nlohmann::json QuotaStatus(const control::ObjectReader& store, const nlohmann::json& quota);

}  // namespace muster::server
