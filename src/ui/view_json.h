// The muster.dev/v1alpha1 objects of the scheduler view (control/scheduler_view.h) as
// Kubernetes-style JSON: QueueView, WorkloadView, NodeView and ClusterView. Amounts are
// Kubernetes quantity strings ("500m", "64Gi", "8"), times RFC 3339, except the
// utilisation columns (Unix seconds and plain numbers, for charts). Every object's
// metadata.resourceVersion is the view's generation.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "control/scheduler_view.h"

namespace muster::ui {

inline constexpr const char* kViewGroup = "muster.dev";
inline constexpr const char* kViewVersion = "v1alpha1";
inline constexpr const char* kViewApiVersion = "muster.dev/v1alpha1";
// The one ClusterView object.
inline constexpr const char* kClusterViewName = "cluster";

nlohmann::json QueueViewJson(const control::QueueView& v, int64_t generation);
nlohmann::json WorkloadViewJson(const control::WorkloadView& v, int64_t generation);
nlohmann::json NodeViewJson(const control::NodeView& v, int64_t generation);
// The summary: totals and counts (small: the dashboard's top bar polls it).
nlohmann::json ClusterViewJson(const control::ClusterView& v, int64_t generation);
// Subresource "utilization": the samples as columns.
nlohmann::json ClusterUtilizationJson(const control::ClusterView& v, int64_t generation);
// Subresource "timeline": the latest `limit` entries, oldest first.
nlohmann::json ClusterTimelineJson(const control::ClusterView& v, int64_t generation, size_t limit);

}  // namespace muster::ui
