// ObjectMeta validation as kube-apiserver does it for every kind (apimachinery's
// ValidateObjectMeta): the name by the kind's rule, generateName, namespace, label
// keys and values, annotation keys and their total size, ownerReferences and
// finalizers. Each problem is a StatusCause naming the field, with upstream's
// "Invalid value: ...: <what is allowed>" message, so a 422 reads like upstream's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/object_names.h"
#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

// The rule kube-apiserver applies to the names of `type`.
api::NameRule NameRuleOf(const control::ResourceType& type);

// Checks `metadata` of an object of `type` being written; `check_name` false on an
// update (the name cannot change, and upstream does not re-judge stored names).
std::vector<StatusCause> ValidateObjectMeta(const control::ResourceType& type,
                                            const nlohmann::json& md, bool check_name = true);

// `Invalid value: "<value>": <message>` as field.Invalid prints a string value.
StatusCause InvalidValue(const std::string& field, const nlohmann::json& value,
                         const std::string& message);
StatusCause RequiredValue(const std::string& field, const std::string& message = "");
StatusCause Forbidden(const std::string& field, const std::string& message);
StatusCause TooLong(const std::string& field, size_t max_bytes);

// A 422 Invalid Status about object `name` of `type`, its message built the way
// upstream aggregates field errors ("Kind.group \"name\" is invalid: [a, b]").
ApiError InvalidObject(const control::ResourceType& type, const std::string& name,
                       std::vector<StatusCause> causes);

}  // namespace muster::server
