// Request bodies in Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf:
// the magic "k8s\0", then a runtime.Unknown holding apiVersion, kind and the object's
// bytes), turned into the JSON the handler reads. kubectl's typed commands send them
// for built-in kinds (`kubectl create rolebinding`, `create clusterrole`,
// `create namespace`, `create configmap`, `create secret`, `create quota`,
// `create serviceaccount`, `create service`, `create job`, `create cronjob`,
// `auth can-i`), whatever
// the server advertises.
//
// Only the kinds in the schema table are decoded (Namespace, ConfigMap, Secret,
// ResourceQuota, ServiceAccount, Service, the four RBAC kinds, the self reviews),
// and of their fields only those a create or a review reads (metadata name,
// generateName, namespace, labels, annotations; rules; roleRef; subjects; review
// specs; data, binaryData, stringData, type, immutable; hard, scopes; ports,
// selector, clusterIP, type, externalIPs, sessionAffinity, externalName; a Job's
// counts, mode, suspend and pod template: containers' name, image, command, args,
// workingDir, env values, resources, the pod's restart policy, node selector, service
// account, scheduler and priority class; a CronJob's schedule, time zone, policies,
// limits and such a Job template). Anything else is left alone and answered
// 415 as before; a Job whose bytes hold a value outside that (not Go's zero) is too,
// so the client sends JSON instead of the value being dropped. Strings Go writes
// empty are left out, as JSON's omitempty does.
// Decoding is bounded by the body (3 MiB) and by the schema's fixed depth.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"
#include "server/api_status.h"

namespace muster::server {

inline constexpr char kProtobufMediaType[] = "application/vnd.kubernetes.protobuf";

// nullopt: not a kind this decoder knows. An error: the bytes are not a valid
// encoding of one.
std::optional<Result<nlohmann::json>> DecodeProtobufObject(const std::string& body);

// A request whose `content_type` is protobuf and whose body is a known kind gets the
// object as a JSON body; malformed bytes are a 400. Other requests are left as they
// are.
std::optional<ApiError> ConvertProtobufBody(std::string& content_type, std::string& body);

}  // namespace muster::server
