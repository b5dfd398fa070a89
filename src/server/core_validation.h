// The core v1 kinds pods read (ConfigMap, Secret, Service, PersistentVolumeClaim,
// ResourceQuota, ServiceAccount) validated as kube-apiserver does
// (pkg/apis/core/validation), with its field paths and messages, on create and on
// update (immutability). Defaulting, Service addresses and claim binding are in
// core_defaults.h; quota accounting in resource_quota.h.
//
// Beyond upstream, every list is bounded (ports, access modes, quota entries) so no
// object makes validation or accounting expensive; ConfigMap and Secret data are
// bounded by upstream's own 1 MiB total.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

inline constexpr size_t kMaxConfigDataBytes = size_t{1024} * 1024;  // core.MaxSecretSize
inline constexpr size_t kMaxConfigKeyLength = 253;
inline constexpr size_t kMaxServicePorts = 1024;
inline constexpr size_t kMaxQuotaEntries = 256;

// ConfigMap, Secret, Service, PersistentVolumeClaim, ResourceQuota, ServiceAccount.
bool IsCoreKind(const control::ResourceType& type);

// The problems of `object` (a whole object of core `type`, defaulted); empty when
// valid.
std::vector<StatusCause> ValidateCoreObject(const control::ResourceType& type,
                                            const nlohmann::json& object);

// What an update may not change: ConfigMap/Secret data once `immutable`, Secret type,
// Service clusterIP, a claim's spec except growing its storage request.
void ValidateCoreUpdate(const control::ResourceType& type, const nlohmann::json& current,
                        const nlohmann::json& next, std::vector<StatusCause>& out);

// Fields muster stores but does not act on, as kubectl warnings.
std::vector<std::string> CoreWarnings(const control::ResourceType& type,
                                      const nlohmann::json& object);

// A ConfigMap or Secret key: upstream's IsConfigMapKey messages ("" when valid).
std::vector<std::string> ConfigKeyErrors(const std::string& key);

// Validation of the kinds in their own files.
void ValidateConfigMap(const nlohmann::json& object, std::vector<StatusCause>& out);
void ValidateSecret(const nlohmann::json& object, std::vector<StatusCause>& out);
void ValidateService(const nlohmann::json& object, std::vector<StatusCause>& out);
void ValidateServiceUpdate(const nlohmann::json& current, const nlohmann::json& next,
                           std::vector<StatusCause>& out);

// "Unsupported value: "x": supported values: "a", "b"" (field.NotSupported).
StatusCause NotSupportedValue(const std::string& field, const nlohmann::json& value,
                              const std::vector<std::string>& supported);
// "Duplicate value: "x"" (field.Duplicate).
StatusCause DuplicateValue(const std::string& field, const nlohmann::json& value);

}  // namespace muster::server
