// Node filters as kube-scheduler applies them: taints/tolerations, nodeSelector,
// required node affinity, unschedulable and readiness. Pure functions of the node
// and the pod's scheduling constraints; resource fit lives in node_fit.h.
#pragma once

#include <string>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace muster::placement {

// A pod set's node constraints, with the assigned flavor's labels and tolerations
// already merged in (Kueue injects them into the pod template).
struct PodConstraints {
  model::StringMap node_selector;
  const model::NodeAffinity* affinity = nullptr;  // may be null
  std::vector<model::Toleration> tolerations;
};

// Why a node cannot host a pod, before looking at resources. Order matters: the
// first failing check is reported.
enum class FilterVerdict {
  kFits,
  kNotReady,
  kUnschedulable,
  kUntoleratedTaint,
  kNodeSelectorMismatch,
  kAffinityMismatch,
  // Not a property of the node: the request excludes it (another gang's
  // reservation, PlacementRequest::excluded_nodes). FilterNode never returns it.
  kExcluded,
};

const char* VerdictName(FilterVerdict v);

// FilterNode's checks that do not depend on the pod's labels or affinity (readiness
// aside): an unschedulable node or a filtering taint may turn a pod away.
bool MayFilterWithoutLabels(const model::Node& node);

bool ToleratesTaint(const model::Toleration& toleration, const model::Taint& taint);
// True when some toleration in `tolerations` tolerates `taint`.
bool TaintTolerated(const model::Taint& taint, const std::vector<model::Toleration>& tolerations);
// Number of PreferNoSchedule taints no toleration tolerates (scored, not filtered).
int32_t CountUntoleratedPreferNoSchedule(const std::vector<model::Taint>& taints,
                                         const std::vector<model::Toleration>& tolerations);

bool MatchesRequirement(const model::NodeSelectorRequirement& req, const model::StringMap& labels);
bool MatchesFieldRequirement(const model::NodeSelectorRequirement& req,
                             const std::string& node_name);
bool MatchesTerm(const model::NodeSelectorTerm& term, const model::Node& node);
// Terms are ORed; an empty list matches every node.
bool MatchesRequiredAffinity(const std::vector<model::NodeSelectorTerm>& terms,
                             const model::Node& node);

// `check_selector` false: the caller knows the node carries the pod's node selector
// labels (it came from the label index), so they are not looked up.
FilterVerdict FilterNode(const model::Node& node, bool ready, const PodConstraints& pod,
                         bool check_selector = true);

}  // namespace muster::placement
