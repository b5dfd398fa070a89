// batch/v1 Job spec.podFailurePolicy: rules a failed pod is matched against, in
// order, the first match deciding what its failure does (upstream's
// pkg/controller/job/pod_failure_policy.go).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace muster::model {

struct PodFailurePolicyRule {
  std::string action;  // FailJob | FailIndex | Ignore | Count
  // onExitCodes (op empty: none): the container (any when unset), In | NotIn, values.
  std::optional<std::string> container_name;
  std::string op;
  std::vector<int32_t> values;
  // onPodConditions: {type, status} pairs; matched against the failed pod's conditions.
  std::vector<std::pair<std::string, std::string>> on_pod_conditions;
};

}  // namespace muster::model
