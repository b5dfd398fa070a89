// The scheduler view's read-only API (ui/view_api.h: QueueView, WorkloadView,
// NodeView, ClusterView of muster.dev/v1alpha1) on muster serve's API: GET only, from
// the view the scheduler controller publishes; Tables for kubectl. Mounted by
// ApiHandler (set_views).
#pragma once

#include <optional>

#include "server/api_handler.h"
#include "server/auth/rbac_authorizer.h"
#include "ui/view_publisher.h"
#include "ui/view_reader.h"

namespace muster::server {

// nullopt when `request` is not for a view resource. `authorizer` (null: everything
// is readable) decides which namespaces' workloads the request's user sees.
std::optional<ApiResponse> HandleViewRoute(const ui::ViewPublisher* views,
                                           const ApiRequest& request,
                                           const auth::RbacAuthorizer* authorizer);

// The reader of a view request by `user`: unrestricted when the user may list
// WorkloadViews in every namespace (or `authorizer` is null), else cut to the
// namespaces where RBAC lets them list WorkloadViews (ui/view_reader.h).
ui::ViewReader ViewReaderFor(const auth::RbacAuthorizer* authorizer, const auth::UserInfo& user);

// Whether a denied request is still answered, cut to what the user may read: a list
// of WorkloadViews across namespaces (the dashboard's workloads page for a user bound
// in some namespaces only).
bool IsReaderFilteredList(const auth::RequestAttributes& attributes);

}  // namespace muster::server
