// Parses a REST path into the resource it addresses, following the API server's
// layout: /api/v1/... for the core group, /apis/<group>/<version>/... otherwise,
// then [namespaces/<ns>/]<plural>[/<name>[/<subresource>]].
#pragma once

#include <string>
#include <string_view>

#include "control/resource_types.h"
#include "core/status.h"

namespace muster::server {

struct RequestTarget {
  std::string group;
  std::string version;
  const control::ResourceType* type = nullptr;
  std::string namespace_;   // "" for cluster-scoped types or an all-namespaces list
  std::string name;         // "" for collection requests
  std::string subresource;  // "" or "status"

  bool collection() const { return name.empty(); }
};

// kNotFound when the path names no served resource (or an unknown subresource).
// Discovery paths (/api, /apis/<group>, ...) are not resource targets either.
Result<RequestTarget> ParseRequestTarget(std::string_view path);

}  // namespace muster::server
