// core/v1 pod template pieces shared by every workload kind and by flavors/nodes.
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

model::Container DecodeContainer(const YamlValue& v) {
  model::Container c;
  v.Get("name").Read(c.name);
  v.Get("image").Read(c.image);
  c.command = v.Get("command").StringList();
  c.args = v.Get("args").StringList();
  for (const auto& e : v.Get("env").Items()) {
    model::EnvVar env;
    e.Get("name").Read(env.name);
    e.Get("value").Read(env.value);
    env.from_source = e.Get("valueFrom").IsSet();
    c.env.push_back(std::move(env));
  }
  for (const auto& p : v.Get("ports").Items()) {
    model::ContainerPort port;
    p.Get("name").Read(port.name);
    p.Get("containerPort").Read(port.container_port, 1);
    c.ports.push_back(std::move(port));
  }
  YamlValue resources = v.Get("resources");
  c.requests = resources.Get("requests").QuantityMap(QuantityScope::kWorkload);
  c.limits = resources.Get("limits").QuantityMap(QuantityScope::kWorkload);
  v.Get("workingDir").Read(c.working_dir);
  YamlValue restart = v.Get("restartPolicy");
  if (restart.IsSet() && restart.Enum({"Always"})) c.restart_policy = "Always";
  return c;
}

std::vector<model::NodeSelectorRequirement> DecodeRequirements(const YamlValue& v) {
  std::vector<model::NodeSelectorRequirement> out;
  for (const auto& item : v.Items()) {
    model::NodeSelectorRequirement r;
    item.Get("key").Read(r.key);
    if (auto op = item.Get("operator").Enum({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})) {
      r.op = static_cast<model::SelectorOperator>(*op);
    } else if (!item.Get("operator").IsSet()) {
      item.Get("operator").Error("is required (In, NotIn, Exists, DoesNotExist, Gt, Lt)");
    }
    r.values = item.Get("values").StringList();
    out.push_back(std::move(r));
  }
  return out;
}

model::NodeSelectorTerm DecodeTerm(const YamlValue& v) {
  model::NodeSelectorTerm t;
  t.match_expressions = DecodeRequirements(v.Get("matchExpressions"));
  t.match_fields = DecodeRequirements(v.Get("matchFields"));
  return t;
}

model::NodeAffinity DecodeNodeAffinity(const YamlValue& v) {
  model::NodeAffinity a;
  YamlValue required = v.Get("requiredDuringSchedulingIgnoredDuringExecution");
  for (const auto& term : required.Get("nodeSelectorTerms").Items()) {
    a.required.push_back(DecodeTerm(term));
  }
  for (const auto& p : v.Get("preferredDuringSchedulingIgnoredDuringExecution").Items()) {
    model::PreferredSchedulingTerm t;
    if (auto w = p.Get("weight").Int(1, 100)) t.weight = static_cast<int32_t>(*w);
    t.preference = DecodeTerm(p.Get("preference"));
    a.preferred.push_back(std::move(t));
  }
  return a;
}

std::optional<model::TaintEffect> DecodeEffect(const YamlValue& v) {
  if (auto e = v.Enum({"NoSchedule", "PreferNoSchedule", "NoExecute"})) {
    return static_cast<model::TaintEffect>(*e);
  }
  return std::nullopt;
}

}  // namespace

std::vector<model::Taint> DecodeTaints(const YamlValue& v) {
  std::vector<model::Taint> out;
  for (const auto& item : v.Items()) {
    model::Taint t;
    item.Get("key").Read(t.key);
    if (t.key.empty()) item.Get("key").Error("is required");
    item.Get("value").Read(t.value);
    YamlValue effect = item.Get("effect");
    if (!effect.IsSet()) {
      effect.Error("is required (NoSchedule, PreferNoSchedule, NoExecute)");
    } else if (auto e = DecodeEffect(effect)) {
      t.effect = *e;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<model::Toleration> DecodeTolerations(const YamlValue& v) {
  std::vector<model::Toleration> out;
  for (const auto& item : v.Items()) {
    model::Toleration t;
    item.Get("key").Read(t.key);
    YamlValue op = item.Get("operator");
    if (op.IsSet()) {
      if (auto o = op.Enum({"Equal", "Exists"})) t.op = static_cast<model::TolerationOperator>(*o);
    }
    item.Get("value").Read(t.value);
    if (t.op == model::TolerationOperator::kExists && !t.value.empty()) {
      item.Get("value").Error("must be empty when operator is Exists");
    }
    if (t.key.empty() && t.op != model::TolerationOperator::kExists) {
      op.Error("must be Exists when key is empty");
    }
    YamlValue effect = item.Get("effect");
    if (effect.IsSet()) t.effect = DecodeEffect(effect);
    if (auto s = item.Get("tolerationSeconds").Int(INT64_MIN, INT64_MAX)) t.toleration_seconds = *s;
    out.push_back(std::move(t));
  }
  return out;
}

model::LabelSelector DecodeLabelSelector(const YamlValue& v) {
  model::LabelSelector s;
  s.match_labels = v.Get("matchLabels").StringMap();
  for (const auto& item : v.Get("matchExpressions").Items()) {
    model::LabelSelectorRequirement r;
    item.Get("key").Read(r.key);
    if (auto op = item.Get("operator").Enum({"In", "NotIn", "Exists", "DoesNotExist"})) {
      static const char* kOps[] = {"In", "NotIn", "Exists", "DoesNotExist"};
      r.op = kOps[*op];
    } else if (!item.Get("operator").IsSet()) {
      item.Get("operator").Error("is required (In, NotIn, Exists, DoesNotExist)");
    }
    r.values = item.Get("values").StringList();
    s.match_expressions.push_back(std::move(r));
  }
  return s;
}

model::PodSpec DecodePodSpec(const YamlValue& v) {
  model::PodSpec spec;
  for (const auto& c : v.Get("containers").Items()) spec.containers.push_back(DecodeContainer(c));
  for (const auto& c : v.Get("initContainers").Items()) {
    spec.init_containers.push_back(DecodeContainer(c));
  }
  spec.overhead = v.Get("overhead").QuantityMap(QuantityScope::kWorkload);
  spec.node_selector = v.Get("nodeSelector").StringMap();
  spec.node_affinity = DecodeNodeAffinity(v.Get("affinity").Get("nodeAffinity"));
  spec.tolerations = DecodeTolerations(v.Get("tolerations"));
  v.Get("priorityClassName").Read(spec.priority_class_name);
  if (auto p = v.Get("priority").Int(INT32_MIN, INT32_MAX)) spec.priority = static_cast<int32_t>(*p);
  v.Get("schedulerName").Read(spec.scheduler_name);
  YamlValue restart = v.Get("restartPolicy");
  if (restart.IsSet()) {
    static const char* kPolicies[] = {"Always", "OnFailure", "Never"};
    if (auto r = restart.Enum({"Always", "OnFailure", "Never"})) spec.restart_policy = kPolicies[*r];
  }
  if (auto g = v.Get("terminationGracePeriodSeconds").Int(0, INT64_MAX)) {
    spec.termination_grace_period_seconds = *g;
  }
  v.Get("subdomain").Read(spec.subdomain);
  return spec;
}

model::PodTemplate DecodePodTemplate(const YamlValue& v) {
  model::PodTemplate t;
  YamlValue meta = v.Get("metadata");
  t.labels = meta.Get("labels").StringMap();
  t.annotations = meta.Get("annotations").StringMap();
  t.spec = DecodePodSpec(v.Get("spec"));
  t.source = {v.ctx().file(), v.line()};
  AddTemplateRefs(v, t);
  return t;
}

void AddTemplateRefs(const YamlValue& template_value, const model::PodTemplate& tmpl) {
  if (!tmpl.spec.priority_class_name.empty()) {
    template_value.Get("spec").Get("priorityClassName").Ref("PriorityClass", "",
                                                            tmpl.spec.priority_class_name);
  }
}

void AddWorkloadRefs(const YamlValue& root, const model::ObjectMeta& meta) {
  YamlValue labels = root.Get("metadata").Get("labels");
  if (auto it = meta.labels.find(kQueueNameLabel); it != meta.labels.end()) {
    YamlValue field = labels.Get(kQueueNameLabel);
    // Label keys contain dots: the path uses the bracket form.
    YamlValue(YAML::Node(), "metadata.labels[" + std::string(kQueueNameLabel) + "]", field.line(),
              &root.ctx())
        .Ref("LocalQueue", meta.namespace_, it->second);
  }
  if (auto it = meta.labels.find(kKueuePriorityClassLabel); it != meta.labels.end()) {
    YamlValue field = labels.Get(kKueuePriorityClassLabel);
    YamlValue(YAML::Node(), "metadata.labels[" + std::string(kKueuePriorityClassLabel) + "]",
              field.line(), &root.ctx())
        .Ref("WorkloadPriorityClass", "", it->second);
  }
}

}  // namespace muster::api::internal
