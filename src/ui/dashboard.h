// The dashboard's HTTP surface, transport-free: a request path in, the response bytes
// and content type out. `muster serve` mounts it under /ui/ on its API port and
// `muster kube --dashboard-port` on a listener of its own. The page itself is static
// (embedded assets, assets.h): it reads the ordinary API from the browser, with the
// user's own credentials, so it shows what RBAC lets that user read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace muster::ui {

// Where the dashboard is mounted.
inline constexpr std::string_view kDashboardPrefix = "/ui";

struct DashboardResponse {
  int code = 200;
  std::string content_type;
  std::string_view body;  // embedded bytes: valid for the life of the process
};

// True for "/ui" and everything under "/ui/".
bool IsDashboardPath(std::string_view path);

// GET or HEAD of "/ui", "/ui/" (the page) or "/ui/<asset>"; 404 for an unknown asset,
// 405 for other methods. nullopt when the path is not the dashboard's.
std::optional<DashboardResponse> ServeDashboard(std::string_view method, std::string_view path);

// "text/javascript; charset=utf-8" for "app.js"...; by extension.
std::string ContentTypeFor(std::string_view name);

}  // namespace muster::ui
