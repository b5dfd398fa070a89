// Pod template pieces as Kubernetes defines them (core/v1), reduced to what
// scheduling, rank identity and the local executor use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/quantity.h"
#include "model/meta.h"

namespace muster::model {

using QuantityMap = std::map<std::string, Quantity>;

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

enum class TolerationOperator { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with kExists tolerates every taint
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt matches every effect
  std::optional<int64_t> toleration_seconds;
};

enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct NodeSelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
};

// Requirements of one term are ANDed; terms of a NodeSelector are ORed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name is meaningful
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

struct EnvVar {
  std::string name;
  std::string value;
  bool from_source = false;  // valueFrom: recorded, not resolved
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
};

struct PodTemplate {
  StringMap labels;
  StringMap annotations;
  PodSpec spec;
  SourceRef source;  // position of the template in its file
};

}  // namespace muster::model
