#include "ui/dashboard.h"

#include <algorithm>

#include "ui/assets.h"

namespace muster::ui {
namespace {

constexpr std::string_view kNotFound = "404 page not found\n";
constexpr std::string_view kNotAllowed = "405 method not allowed: the dashboard is read only\n";

}  // namespace

const EmbeddedAsset* FindAsset(std::string_view name) {
  const auto& assets = EmbeddedAssets();
  auto it = std::lower_bound(assets.begin(), assets.end(), name,
                             [](const EmbeddedAsset& a, std::string_view n) { return a.name < n; });
  return it != assets.end() && it->name == name ? &*it : nullptr;
}

bool IsDashboardPath(std::string_view path) {
  return path == kDashboardPrefix ||
         (path.size() > kDashboardPrefix.size() && path.starts_with(kDashboardPrefix) &&
          path[kDashboardPrefix.size()] == '/');
}

std::string ContentTypeFor(std::string_view name) {
  auto ends = [&](std::string_view ext) { return name.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

std::optional<DashboardResponse> ServeDashboard(std::string_view method, std::string_view path) {
  if (!IsDashboardPath(path)) return std::nullopt;
  if (method != "GET" && method != "HEAD") {
    return DashboardResponse{405, "text/plain; charset=utf-8", kNotAllowed};
  }
  std::string_view name = path.substr(kDashboardPrefix.size());
  if (!name.empty()) name.remove_prefix(1);  // the "/"
  // Pages are routed in the browser (#/workloads...): the bare prefix is the page.
  if (name.empty()) name = "index.html";
  // Assets are one flat directory: no "..", no sub-paths.
  const EmbeddedAsset* asset = name.find('/') == std::string_view::npos ? FindAsset(name) : nullptr;
  if (asset == nullptr) return DashboardResponse{404, "text/plain; charset=utf-8", kNotFound};
  return DashboardResponse{200, ContentTypeFor(name), asset->data};
}

}  // namespace muster::ui
