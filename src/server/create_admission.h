// What kube-apiserver's admission and allocators do to a valid object being created,
// before it is written: a Pod's LimitRanges (limit_ranger.h) and priority (pod_priority.h), the
// namespace's ResourceQuotas (resource_quota.h: 403 past a quota's hard limit), then a Service's
// cluster address and a claim's binding (core_defaults.h). API creates hold CreateAdmissionMutex()
// from the check to the write, so two creates that each fit alone cannot together pass a quota, and
// two Services never draw the same address. Pods the executors write for admitted jobs do not pass
// here: see docs in src/server/README.md (ResourceQuota).
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "control/object_reader.h"
#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

std::mutex& CreateAdmissionMutex();

// Whether a create of `type` in `ns` must hold CreateAdmissionMutex(): a Service (its
// address is drawn against the others') or any create in a namespace with a
// ResourceQuota. Other creates do not wait for one another (nor share one fsync in turn).
bool CreateNeedsAdmissionLock(const control::ObjectReader& store, const control::ResourceType& type,
                              const std::string& ns);

// nullopt: `object` (of `type`, in `ns`, validated) may be written, with what was
// allocated for it set; else the error to answer.
std::optional<ApiError> AdmitCreate(const control::ObjectReader& store,
                                    const control::ResourceType& type, const std::string& ns,
                                    nlohmann::json& object);

}  // namespace muster::server
