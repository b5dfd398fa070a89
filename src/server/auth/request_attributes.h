// What an authorizer judges: kube-apiserver's authorizer.Attributes, derived from a
// request the way its RequestInfoFactory does. /api/v1/... and /apis/<group>/<version>/...
// with a resource are resource requests (verb from the method: get, list, watch,
// create, update, patch, delete, deletecollection; namespace, resource, name,
// subresource from the path); everything else (/healthz, /version, /api, /apis/<group>,
// /metrics, /openapi/...) is a non-resource request whose verb is the lower-case method.
#pragma once

#include <map>
#include <string>

#include "server/auth/identity.h"

namespace muster::server::auth {

struct RequestAttributes {
  UserInfo user;
  std::string verb;
  bool resource_request = false;
  // Resource requests.
  std::string api_group;  // "" for the core group
  std::string api_version;
  std::string namespace_;
  std::string resource;     // "jobs"
  std::string subresource;  // "status", "log", "binding"
  std::string name;
  // Non-resource requests: the path ("/healthz").
  std::string path;
};

// `method` is the HTTP method ("GET"...), `path` the decoded path without the query.
// A list or watch whose fieldSelector is exactly metadata.name=<n> is about <n>, as
// upstream decides, so resourceNames rules can allow `kubectl get x -w`.
RequestAttributes AttributesOf(const std::string& method, const std::string& path,
                               const std::map<std::string, std::string>& query,
                               const UserInfo& user);

}  // namespace muster::server::auth
