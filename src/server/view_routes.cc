#include "server/view_routes.h"

#include <ctime>

#include "server/api_status.h"
#include "server/table_printer.h"
#include "ui/view_api.h"
#include "ui/view_json.h"

namespace muster::server {
namespace {

using nlohmann::json;

auth::RequestAttributes ListWorkloadViews(const auth::UserInfo& user, const std::string& ns) {
  auth::RequestAttributes a;
  a.user = user;
  a.verb = "list";
  a.resource_request = true;
  a.api_group = ui::kViewGroup;
  a.api_version = ui::kViewVersion;
  a.resource = "workloadviews";
  a.namespace_ = ns;
  return a;
}

}  // namespace

ui::ViewReader ViewReaderFor(const auth::RbacAuthorizer* authorizer, const auth::UserInfo& user) {
  if (authorizer == nullptr || user.name.empty() ||
      authorizer->Authorize(ListWorkloadViews(user, "")).allowed) {
    return ui::ViewReader();
  }
  return ui::ViewReader([authorizer, user](const std::string& ns) {
    return authorizer->Authorize(ListWorkloadViews(user, ns)).allowed;
  });
}

bool IsReaderFilteredList(const auth::RequestAttributes& a) {
  return a.resource_request && a.verb == "list" && a.api_group == ui::kViewGroup &&
         a.resource == "workloadviews" && a.namespace_.empty() && a.name.empty() &&
         a.subresource.empty();
}

std::optional<ApiResponse> HandleViewRoute(const ui::ViewPublisher* views,
                                           const ApiRequest& request,
                                           const auth::RbacAuthorizer* authorizer) {
  std::string path = request.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  auto target = ui::ParseViewPath(path);
  if (!target) return std::nullopt;
  if (request.method != "GET") {
    json status = {{"kind", "Status"},
                   {"apiVersion", "v1"},
                   {"metadata", json::object()},
                   {"status", "Failure"},
                   {"message", target->plural + ".muster.dev is read only: get and list"},
                   {"reason", "MethodNotAllowed"},
                   {"code", 405}};
    return ApiResponse{405, "application/json", ToWire(status)};
  }
  target->query = request.query;
  auto current = views != nullptr ? views->Current() : nullptr;
  const ui::ViewReader reader = ViewReaderFor(authorizer, request.user);
  ui::ViewResponse r = ui::HandleViewRead(current.get(), *target, reader);
  const bool table = request.accept.find("as=Table") != std::string::npos;
  if (r.code == 200 && table && target->subresource.empty()) {
    const control::ResourceType& type = *ui::FindViewKind(target->plural);
    TableOptions options;
    options.now_unix = static_cast<int64_t>(std::time(nullptr));
    const std::string rv = r.body["metadata"].value("resourceVersion", "");
    json t = r.body.contains("items")
                 ? RenderTable(type, r.body["items"].get<std::vector<json>>(), rv, options)
                 : RenderTable(type, {r.body}, rv, options);
    if (r.body.contains("items")) t["metadata"] = r.body["metadata"];
    return ApiResponse{200, "application/json", ToWire(t)};
  }
  return ApiResponse{r.code, "application/json", ToWire(r.body)};
}

}  // namespace muster::server
