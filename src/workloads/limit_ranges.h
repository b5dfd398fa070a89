// A namespace's LimitRanges applied to a job's pod templates as Kueue applies them
// (pkg/workload/resources.go, pkg/util/limitrange): the ranges of the job's namespace
// summarised (lowest max and maxLimitRequestRatio, highest min, the first default
// and defaultRequest by LimitRange name), the Container defaults written into every
// container and init container that lacks a limit or request (what kube-apiserver's
// LimitRanger does to the pods themselves), the pod sets' requests computed again, and
// the result checked against the Container and Pod bounds. A job outside them gets
// Kueue's "didn't satisfy LimitRange constraints: ..." as Workload::inadmissible.
#pragma once

#include <string>
#include <vector>

#include "model/limit_range.h"
#include "model/workload.h"

namespace muster::workloads {

// The ranges of `namespace_` among `ranges`, summarised by limit type.
struct LimitRangeSummary {
  model::LimitRangeItem container;
  model::LimitRangeItem pod;
  bool has_container = false;
  bool has_pod = false;
};
LimitRangeSummary SummarizeLimitRanges(const std::vector<model::LimitRange>& ranges,
                                       const std::string& namespace_);

// Applies the summary of `workload`'s namespace to it (nothing without ranges there).
void ApplyLimitRanges(const std::vector<model::LimitRange>& ranges, model::Workload* workload);

}  // namespace muster::workloads
