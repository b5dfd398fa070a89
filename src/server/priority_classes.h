// PriorityClasses as kube-apiserver keeps them: the two system classes every cluster
// has (system-cluster-critical, system-node-critical), created at start-up; the
// `system-` prefix reserved for them; a user class's value at most 1,000,000,000;
// and, as the Priority admission plugin, at most one class marked globalDefault.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/object_reader.h"
#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

inline constexpr int64_t kHighestUserDefinablePriority = 1'000'000'000;

// The PriorityClass resource (scheduling.k8s.io).
bool IsPriorityClassType(const control::ResourceType& type);

// The system classes, as objects to store.
std::vector<nlohmann::json> SystemPriorityClasses();

// What validation refuses of a PriorityClass `pc` (its name and value).
std::vector<StatusCause> ValidatePriorityClass(const nlohmann::json& pc);

// On create or update of `pc`: 403 when it is marked globalDefault and another class
// already is (named in the message, as upstream's).
std::optional<ApiError> AdmitPriorityClass(const control::ObjectReader& store,
                                           const nlohmann::json& pc);

// A system class cannot be deleted (upstream's 403).
std::optional<ApiError> RefuseSystemPriorityClassDelete(const std::string& name);

}  // namespace muster::server
