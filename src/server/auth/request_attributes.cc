#include "server/auth/request_attributes.h"

#include <algorithm>
#include <vector>

#include "core/text.h"
#include "server/path_segments.h"

namespace muster::server::auth {
namespace {

std::string QueryValue(const std::map<std::string, std::string>& query, const char* key) {
  auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

}  // namespace

RequestAttributes AttributesOf(const std::string& method, const std::string& path,
                               const std::map<std::string, std::string>& query,
                               const UserInfo& user) {
  RequestAttributes a;
  a.user = user;
  a.path = path;
  a.verb = AsciiLower(method);
  std::vector<std::string> parts = PathSegments(path);
  size_t at = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    a.api_version = parts[1];
    at = 2;
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    a.api_group = parts[1];
    a.api_version = parts[2];
    at = 3;
  } else {
    // /api, /api/v1, /apis/<group>[/<version>] are discovery: non-resource.
    a.api_group.clear();
    a.api_version.clear();
    return a;
  }
  a.resource_request = true;
  std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());
  // The legacy /watch/ prefix upstream still routes.
  bool watch_prefix = false;
  if (!rest.empty() && rest[0] == "watch") {
    watch_prefix = true;
    rest.erase(rest.begin());
  }
  if (method == "POST") {
    a.verb = "create";
  } else if (method == "GET" || method == "HEAD") {
    a.verb = "get";
  } else if (method == "PUT") {
    a.verb = "update";
  } else if (method == "PATCH") {
    a.verb = "patch";
  } else if (method == "DELETE") {
    a.verb = "delete";
  }
  if (!rest.empty() && rest[0] == "namespaces") {
    if (rest.size() > 1) {
      a.namespace_ = rest[1];
      // /namespaces/<ns>/<resource>/...; but .../namespaces/<ns>/status and /finalize
      // are subresources of the Namespace itself.
      if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
        rest.erase(rest.begin(), rest.begin() + 2);
      }
    }
  }
  if (!rest.empty()) a.resource = rest[0];
  if (rest.size() >= 2) a.name = rest[1];
  if (rest.size() >= 3) a.subresource = rest[2];
  if (rest.size() == 1 || rest.empty()) {
    // A collection: get is list (or watch), delete is deletecollection.
    if (a.verb == "get") {
      const std::string w = QueryValue(query, "watch");
      a.verb = (watch_prefix || w == "1" || w == "true" || w == "True") ? "watch" : "list";
    } else if (a.verb == "delete") {
      a.verb = "deletecollection";
    }
  } else if (watch_prefix && a.verb == "get") {
    a.verb = "watch";
  }
  // A WebSocket upgrade is a GET, but exec, attach and port-forward run something in
  // the pod: upstream authorizes them as `create` whichever the method
  // (AuthorizePodWebsocketUpgradeCreatePermission), so a role that may only read
  // pods/exec cannot run commands.
  if (a.resource == "pods" && a.verb == "get" &&
      (a.subresource == "exec" || a.subresource == "attach" || a.subresource == "portforward")) {
    a.verb = "create";
  }
  if ((a.verb == "list" || a.verb == "watch") && a.name.empty()) {
    const std::string selector = QueryValue(query, "fieldSelector");
    const std::string prefix = "metadata.name=";
    if (selector.rfind(prefix, 0) == 0 && selector.find(',') == std::string::npos) {
      a.name = selector.substr(prefix.size());
    }
  }
  return a;
}

}  // namespace muster::server::auth
