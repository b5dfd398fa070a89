// kube-apiserver's LimitRanger admission for the Pods created through serve's API
// (plugin/pkg/admission/limitranger): the namespace's LimitRanges of type Container
// fill each container's and init container's missing limits (`default`) and requests
// (`defaultRequest`), noted in the `kubernetes.io/limit-ranger` annotation, then the
// Container and Pod bounds (min, max, maxLimitRequestRatio) are checked: outside them
// the create is refused with upstream's 403 and messages. Jobs' pods are not created
// through the API: their templates get the same defaults and bounds as Kueue applies
// them (workloads/limit_ranges.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "control/object_reader.h"
#include "server/api_status.h"

namespace muster::server {

// nullopt: `pod` (valid, in `ns`, defaulted as kube-apiserver stores it:
// DefaultCoreObject) may be written, with the defaults set; else the 403.
std::optional<ApiError> AdmitPodLimits(const control::ObjectReader& store, const std::string& ns,
                                       nlohmann::json& pod);

}  // namespace muster::server
