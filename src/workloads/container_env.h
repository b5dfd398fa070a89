// What the kubelet computes for a container before it starts it, as pure functions:
// `$(VAR)` expansion (k8s.io/kubernetes third_party/forked/golang/expansion), the
// environment (envFrom, env with valueFrom: downward API fieldRef / resourceFieldRef,
// configMapKeyRef, secretKeyRef; pkg/kubelet/kubelet_pods.go makeEnvironmentVariables)
// and the expanded command and args (kuberuntime ExpandContainerCommandAndArgs).
// The executors feed it the pod's facts and the ConfigMaps/Secrets they read; no I/O.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/meta.h"
#include "model/pod.h"

namespace muster::workloads {

// Replaces each `$(NAME)` for which `lookup` returns a value; `$$` is an escaped `$`;
// an undefined name, an unterminated `$(` and any other `$x` are left as written.
using VariableLookup = std::function<const std::string*(std::string_view name)>;
std::string ExpandVariables(std::string_view input, const VariableLookup& lookup);

// What the downward API exposes about the pod.
struct PodFacts {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string node_name;
  std::string service_account;
  std::string pod_ip;
  std::string host_ip;
  model::StringMap labels;
  model::StringMap annotations;
  // limits.* of a container that sets none read the node's allocatable (kubelet).
  model::QuantityMap node_allocatable;
};

// A fieldRef of the downward API: metadata.name/namespace/uid, metadata.labels['k'],
// metadata.annotations['k'], spec.nodeName, spec.serviceAccountName, status.podIP(s),
// status.hostIP(s); `for_volume` also allows whole metadata.labels/annotations
// (formatted one `key="value"` per line, sorted, as upstream's FormatMap).
// InvalidArgument names what is supported.
Result<std::string> DownwardFieldValue(const PodFacts& pod, const std::string& field_path,
                                       bool for_volume);

// A resourceFieldRef (limits.cpu, requests.memory, limits.ephemeral-storage...) of
// `container`: the quantity divided by `divisor` (default 1), rounded up, as the
// kubelet's ExtractContainerResourceValue. Limits not set read the node's allocatable.
Result<std::string> ResourceFieldValue(const model::Container& container, const PodFacts& pod,
                                       const std::string& resource,
                                       const std::optional<Quantity>& divisor);

// The ConfigMaps and Secrets of the pod's namespace (Secret values decoded).
class ConfigLookup {
 public:
  virtual ~ConfigLookup() = default;
  // nullptr when there is no such object.
  virtual const model::StringMap* ConfigMap(const std::string& name) const = 0;
  virtual const model::StringMap* Secret(const std::string& name) const = 0;
};

struct ResolvedContainer {
  // The container's environment in definition order (a later definition of a name
  // replaces the earlier one in place).
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> command;
  std::vector<std::string> args;
  // Kubelet's warning events: envFrom keys that are not valid variable names.
  std::vector<std::string> warnings;
};

// The container's environment and expanded command/args. `appended` are variables
// its controller adds after the template's own (rank identity, JOB_COMPLETION_INDEX):
// a name the template already defines keeps the template's definition, as the Job
// controller does. Errors are the kubelet's CreateContainerConfigError cases: a
// missing ConfigMap/Secret or key that is not optional, an unsupported fieldPath or
// resource (FailedPrecondition / InvalidArgument, naming the variable).
Result<ResolvedContainer> ResolveContainer(
    const model::PodSpec& spec, const model::Container& container, const PodFacts& pod,
    const ConfigLookup& config, const std::vector<std::pair<std::string, std::string>>& appended);

// A valid environment variable name for envFrom keys: printable ASCII other than
// '=' (upstream's RelaxedEnvironmentVariableValidation, on by default since 1.32).
bool IsEnvVarName(std::string_view name);

// Go's %q of `s` (what FormatMap writes for label and annotation values).
std::string GoQuote(std::string_view s);

}  // namespace muster::workloads
