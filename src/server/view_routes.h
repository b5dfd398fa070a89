// The scheduler view's read-only API (ui/view_api.h: QueueView, WorkloadView,
// NodeView, ClusterView of muster.dev/v1alpha1) on muster serve's API: GET only, from
// the view the scheduler controller publishes; Tables for kubectl. Mounted by
// ApiHandler (set_views).
#pragma once

#include <optional>

#include "server/api_handler.h"
#include "ui/view_publisher.h"

namespace muster::server {

// nullopt when `request` is not for a view resource.
std::optional<ApiResponse> HandleViewRoute(const ui::ViewPublisher* views,
                                           const ApiRequest& request);

}  // namespace muster::server
