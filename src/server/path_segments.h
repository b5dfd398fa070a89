// The segments of a request path ("/api/v1/namespaces/a/pods" -> api, v1, namespaces,
// a, pods): what every route of the API matches on. Empty segments (a doubled or
// trailing slash) are dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace muster::server {

inline std::vector<std::string> PathSegments(std::string_view path) {
  std::vector<std::string> segments;
  for (size_t pos = 0; pos < path.size();) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    if (next > pos) segments.emplace_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  return segments;
}

}  // namespace muster::server
