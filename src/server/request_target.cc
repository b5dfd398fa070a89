#include "server/request_target.h"

#include <vector>

namespace muster::server {

Result<RequestTarget> ParseRequestTarget(std::string_view path) {
  std::vector<std::string> seg;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    if (next > pos) seg.emplace_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  RequestTarget t;
  size_t rest = 0;
  if (seg.size() >= 3 && seg[0] == "api") {
    t.version = seg[1];
    rest = 2;
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    t.group = seg[1];
    t.version = seg[2];
    rest = 3;
  } else {
    return NotFound("the server could not find the requested resource");
  }
  // "namespaces/<ns>/<plural>" is a namespaced path only when <plural> is a served
  // resource: /api/v1/namespaces/<name>/status addresses a Namespace's status.
  if (seg.size() >= rest + 3 && seg[rest] == "namespaces" &&
      control::FindResource(t.group, t.version, seg[rest + 2]) != nullptr) {
    t.namespace_ = seg[rest + 1];
    rest += 2;
  }
  const size_t n = seg.size() - rest;
  if (n < 1 || n > 3) return NotFound("the server could not find the requested resource");
  t.type = control::FindResource(t.group, t.version, seg[rest]);
  if (!t.type) return NotFound("the server could not find the requested resource");
  if (n >= 2) t.name = seg[rest + 1];
  if (n == 3) t.subresource = seg[rest + 2];
  // A Namespace's finalize (namespace_finalize.h).
  const bool finalize =
      t.subresource == "finalize" && t.type->group.empty() && t.type->kind == "Namespace";
  if (!t.subresource.empty() && !finalize && (t.subresource != "status" || !t.type->has_status)) {
    return NotFound("the server could not find the requested resource");
  }
  // Cluster-scoped kinds have no namespaced paths; a namespaced object needs its
  // namespace to be addressed by name.
  if (!t.type->namespaced && !t.namespace_.empty()) {
    return NotFound("the server could not find the requested resource");
  }
  if (t.type->namespaced && t.namespace_.empty() && !t.name.empty()) {
    return NotFound("the server could not find the requested resource");
  }
  return t;
}

}  // namespace muster::server
