// Elastic workloads: which workloads may run with fewer pods than their counts, and
// the counts an elastic gang steps through when it is admitted, grows or shrinks.
// Pure functions; admission and the engine share them.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "model/workload.h"

namespace muster::workloads {

// Opt-in annotation of Kueue's ElasticJobsViaWorkloadSlices (KEP-77): the job may
// be resized by its owner without being suspended and requeued.
inline constexpr std::string_view kElasticJobAnnotation = "kueue.x-k8s.io/elastic-job";

// Whether `w` may run with between its minimums and its counts. PyTorch
// elasticPolicy is elastic in every queue. Volcano's minimums (Job minAvailable,
// PodGroup minMember, Kubeflow schedulingPolicy.minAvailable) are elastic where
// Volcano schedules the job, in a Volcano queue or in none (`kueue_queued` false):
// Kueue admits a queued job whole. A Kueue elastic Job is resized by its owner,
// never by the scheduler, so it is not elastic here.
bool IsElastic(const model::Workload& w, bool kueue_queued);

// Pods per pod set an elastic gang needs at least (min_count; at least one pod in
// all) and may run at most (count).
std::vector<int32_t> MinCounts(const model::Workload& w);
std::vector<int32_t> MaxCounts(const model::Workload& w);

// Pods per pod set `step` of `steps` of the way from `from` to `to`: each pod set
// moves floor(distance * step / steps), as Kueue's PodSetReducer spreads a partial
// admission over pod sets in proportion to their slack. steps = StepsBetween(from, to).
std::vector<int32_t> Interpolate(const std::vector<int32_t>& from, const std::vector<int32_t>& to,
                                 int64_t step, int64_t steps);
int64_t StepsBetween(const std::vector<int32_t>& from, const std::vector<int32_t>& to);

// The largest step in [lo, hi] for which `fits` holds, searching by halves, when
// `fits` holds up to some step and not beyond (more pods never fit where fewer do
// not); -1 when it does not hold at `lo`.
int64_t LargestFittingStep(int64_t lo, int64_t hi, const std::function<bool(int64_t)>& fits);

// "PyTorchJob elasticPolicy", "Volcano minAvailable"... for messages.
std::string_view ElasticSourceName(model::ElasticSource source);

}  // namespace muster::workloads
