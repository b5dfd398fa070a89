// Pod template pieces as Kubernetes defines them (core/v1), reduced to what
// scheduling, rank identity and the local executor use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/quantity.h"
#include "model/meta.h"

namespace muster::model {

using QuantityMap = std::map<std::string, Quantity>;

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
// The effect as the API spells it ("NoSchedule"...).
const char* TaintEffectName(TaintEffect effect);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Taint&) const = default;
};

enum class TolerationOperator { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with kExists tolerates every taint
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt matches every effect
  std::optional<int64_t> toleration_seconds;

  bool operator==(const Toleration&) const = default;
};

enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct NodeSelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

// Requirements of one term are ANDed; terms of a NodeSelector are ORed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name is meaningful
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms; empty = no constraint.
  std::vector<NodeSelectorTerm> required;
  std::vector<PreferredSchedulingTerm> preferred;
};

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

// metav1.LabelSelector. An empty selector matches everything.
struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
};

// A key of a ConfigMap or Secret (configMapKeyRef / secretKeyRef).
struct KeySelector {
  std::string name;  // the ConfigMap's or Secret's name
  std::string key;
  bool optional = false;  // missing object or key: the variable is left out
};

// env[].valueFrom: exactly one source is set (the decoder enforces it).
struct EnvVarSource {
  std::string field_path;  // fieldRef.fieldPath ("metadata.name", "metadata.labels['k']"...)
  // resourceFieldRef: "limits.cpu", "requests.memory"... of `container_name` (default:
  // this container), divided by `divisor` (default 1) and rounded up.
  std::string resource;
  std::string container_name;
  std::optional<Quantity> divisor;
  std::optional<KeySelector> config_map_key;
  std::optional<KeySelector> secret_key;
};

struct EnvVar {
  std::string name;
  std::string value;
  std::optional<EnvVarSource> value_from;  // resolved by the executor (workloads/container_env.h)
};

// envFrom[]: every key of a ConfigMap or Secret as a variable, `prefix` prepended.
struct EnvFromSource {
  std::string prefix;
  std::string config_map;  // exactly one of config_map / secret is set
  std::string secret;
  bool optional = false;
};

struct VolumeMount {
  std::string name;
  std::string mount_path;
  std::string sub_path;
  bool read_only = false;
};

// One file of a ConfigMap/Secret volume's `items` (a key projected to a path).
struct KeyToPath {
  std::string key;
  std::string path;
  std::optional<int32_t> mode;
};

// One of the volume sources the executors act on; others are kUnsupported (the
// decoder warns).
enum class VolumeKind {
  kEmptyDir,
  kHostPath,
  kConfigMap,
  kSecret,
  kPersistentVolumeClaim,
  kDownwardApi,
  kUnsupported
};

struct Volume {
  std::string name;
  VolumeKind kind = VolumeKind::kEmptyDir;
  std::string source;                  // ConfigMap / Secret / claim name, or the host path
  std::string host_path_type;          // hostPath.type ("" = no check)
  std::string medium;                  // emptyDir.medium ("" or "Memory")
  std::optional<Quantity> size_limit;  // emptyDir.sizeLimit
  std::vector<KeyToPath> items;        // configMap/secret items
  std::vector<std::pair<std::string, std::string>> downward_items;  // path -> fieldPath
  std::optional<int32_t> default_mode;
  bool optional = false;
  bool read_only = false;  // persistentVolumeClaim.readOnly
};

struct ContainerPort {
  std::string name;
  int32_t container_port = 0;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  std::vector<ContainerPort> ports;
  QuantityMap requests;
  QuantityMap limits;
  std::string working_dir;
  std::string restart_policy;  // "Always" marks a sidecar init container
  std::vector<EnvFromSource> env_from;
  std::vector<VolumeMount> volume_mounts;
  std::string image_pull_policy;  // "" = upstream default (Always for :latest, else IfNotPresent)
};

struct PodSpec {
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  QuantityMap overhead;
  StringMap node_selector;
  NodeAffinity node_affinity;
  std::vector<Toleration> tolerations;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  std::string scheduler_name;
  std::string restart_policy = "Always";
  int64_t termination_grace_period_seconds = 30;
  std::string subdomain;
  std::string hostname;  // "" = the pod's name (kubelet)
  std::string service_account_name;
  std::vector<Volume> volumes;
};

struct PodTemplate {
  StringMap labels;
  StringMap annotations;
  PodSpec spec;
  SourceRef source;  // position of the template in its file
};

}  // namespace muster::model
