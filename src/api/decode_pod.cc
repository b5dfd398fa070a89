// core/v1 pod template pieces shared by every workload kind and by flavors/nodes.
#include <algorithm>
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

// A file mode (defaultMode, items[].mode): 0 to 0777. YAML 1.1, which kubectl's YAML
// reader follows, reads a leading 0 as octal ("0644" is 420); JSON has decimals.
std::optional<int32_t> DecodeMode(const YamlValue& v) {
  auto text = v.String();
  if (!text) return std::nullopt;
  std::string_view s = *text;
  if (s.starts_with("0o")) s.remove_prefix(2);
  int64_t mode = 0;
  bool octal = s.size() > 1 && s[0] == '0';
  if (octal) {
    for (char c : s) {
      if (c < '0' || c > '7') {
        v.Error(Quote(*text) + " is not a file mode (0 to 0777)");
        return std::nullopt;
      }
      mode = mode * 8 + (c - '0');
      if (mode > 0777) break;
    }
  } else if (auto n = v.Int(0, 0777)) {
    mode = *n;
  } else {
    return std::nullopt;
  }
  if (mode > 0777) {
    v.Error(Quote(*text) + " is out of range (0 to 0777)");
    return std::nullopt;
  }
  return static_cast<int32_t>(mode);
}

std::optional<model::KeySelector> DecodeKeySelector(const YamlValue& v) {
  if (!v.IsSet()) return std::nullopt;
  model::KeySelector k;
  v.Get("name").Read(k.name);
  v.Get("key").Read(k.key);
  v.Get("optional").Read(k.optional);
  if (k.name.empty()) v.Get("name").Error("is required");
  if (k.key.empty()) v.Get("key").Error("is required");
  return k;
}

// env[].valueFrom, with the apiserver's rule that exactly one source is set.
model::EnvVarSource DecodeEnvVarSource(const YamlValue& v) {
  model::EnvVarSource s;
  int sources = 0;
  if (YamlValue f = v.Get("fieldRef"); f.IsSet()) {
    ++sources;
    f.Get("fieldPath").Read(s.field_path);
    if (s.field_path.empty()) f.Get("fieldPath").Error("is required");
  }
  if (YamlValue r = v.Get("resourceFieldRef"); r.IsSet()) {
    ++sources;
    r.Get("resource").Read(s.resource);
    r.Get("containerName").Read(s.container_name);
    if (r.Get("divisor").IsSet()) s.divisor = r.Get("divisor").Qty();
    if (s.resource.empty()) r.Get("resource").Error("is required");
  }
  if ((s.config_map_key = DecodeKeySelector(v.Get("configMapKeyRef")))) ++sources;
  if ((s.secret_key = DecodeKeySelector(v.Get("secretKeyRef")))) ++sources;
  if (sources != 1) {
    v.Error(
        "must specify exactly one of: fieldRef, resourceFieldRef, configMapKeyRef or "
        "secretKeyRef");
  }
  return s;
}

// A field kube-apiserver's defaulting writes into every pod it stores, so a pod read
// back from a cluster (or from serve) carries it: at `default_text` it asks for
// nothing muster does not do; set otherwise it is not acted on (`why`).
void WarnUnlessDefault(const YamlValue& v, std::string_view default_text, std::string_view why) {
  if (!v.IsSet()) return;
  if (auto text = v.String(); text && *text != default_text) {
    v.Warn("not acted on: " + std::string(why));
  }
}

}  // namespace

model::Container DecodeContainer(const YamlValue& v) {
  model::Container c;
  v.Get("name").Read(c.name);
  v.Get("image").Read(c.image);
  WarnUnlessDefault(v.Get("terminationMessagePath"), "/dev/termination-log",
                    "muster reads no termination message");
  WarnUnlessDefault(v.Get("terminationMessagePolicy"), "File",
                    "muster reads no termination message");
  c.command = v.Get("command").StringList();
  c.args = v.Get("args").StringList();
  for (const auto& e : v.Get("env").Items()) {
    model::EnvVar env;
    e.Get("name").Read(env.name);
    if (env.name.empty()) e.Get("name").Error("is required");
    e.Get("value").Read(env.value);
    if (YamlValue from = e.Get("valueFrom"); from.IsSet()) {
      if (!env.value.empty()) from.Error("may not be specified when `value` is not empty");
      env.value_from = DecodeEnvVarSource(from);
    }
    c.env.push_back(std::move(env));
  }
  for (const auto& e : v.Get("envFrom").Items()) {
    model::EnvFromSource from;
    e.Get("prefix").Read(from.prefix);
    YamlValue cm = e.Get("configMapRef");
    YamlValue secret = e.Get("secretRef");
    if (cm.IsSet() == secret.IsSet()) {
      e.Error("must specify exactly one of: configMapRef or secretRef");
    }
    YamlValue ref = cm.IsSet() ? cm : secret;
    std::string& name = cm.IsSet() ? from.config_map : from.secret;
    ref.Get("name").Read(name);
    ref.Get("optional").Read(from.optional);
    if (ref.IsSet() && name.empty()) ref.Get("name").Error("is required");
    c.env_from.push_back(std::move(from));
  }
  for (const auto& m : v.Get("volumeMounts").Items()) {
    model::VolumeMount mount;
    m.Get("name").Read(mount.name);
    m.Get("mountPath").Read(mount.mount_path);
    m.Get("subPath").Read(mount.sub_path);
    m.Get("readOnly").Read(mount.read_only);
    if (mount.name.empty()) m.Get("name").Error("is required");
    if (mount.mount_path.empty()) m.Get("mountPath").Error("is required");
    if (mount.sub_path.starts_with("/") || mount.sub_path == ".." ||
        mount.sub_path.starts_with("../") || mount.sub_path.find("/../") != std::string::npos ||
        mount.sub_path.ends_with("/..")) {
      m.Get("subPath").Error("must be a relative path not containing '..'");
    }
    c.volume_mounts.push_back(std::move(mount));
  }
  if (YamlValue pull = v.Get("imagePullPolicy"); pull.IsSet()) {
    static const char* const kPolicies[] = {"Always", "IfNotPresent", "Never"};
    if (auto p = pull.Enum({"Always", "IfNotPresent", "Never"}))
      c.image_pull_policy = kPolicies[*p];
  }
  for (const auto& p : v.Get("ports").Items()) {
    model::ContainerPort port;
    p.Get("name").Read(port.name);
    p.Get("containerPort").Read(port.container_port, 1);
    // TCP is kube-apiserver's default on every stored port; the value names what
    // the process listens on, which muster does not map (the host's network).
    p.Get("protocol").Enum({"TCP", "UDP", "SCTP"});
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

namespace {

std::vector<model::KeyToPath> DecodeItems(const YamlValue& v) {
  std::vector<model::KeyToPath> items;
  for (const auto& item : v.Items()) {
    model::KeyToPath k;
    item.Get("key").Read(k.key);
    item.Get("path").Read(k.path);
    k.mode = DecodeMode(item.Get("mode"));
    if (k.key.empty()) item.Get("key").Error("is required");
    if (k.path.empty() || k.path.starts_with("/") || k.path.find("..") != std::string::npos) {
      item.Get("path").Error("must be a relative path not containing '..'");
    }
    items.push_back(std::move(k));
  }
  return items;
}

// One volume of the pod; a source the executors cannot provide is kept as
// kUnsupported with a warning (the pod then fails with a clear reason if it mounts it).
model::Volume DecodeVolume(const YamlValue& v) {
  model::Volume vol;
  v.Get("name").Read(vol.name);
  if (vol.name.empty()) v.Get("name").Error("is required");
  auto mode = [&](const YamlValue& source) {
    if (auto m = DecodeMode(source.Get("defaultMode"))) vol.default_mode = *m;
  };
  int sources = 0;
  if (YamlValue s = v.Get("emptyDir"); s.IsSet()) {
    ++sources;
    vol.kind = model::VolumeKind::kEmptyDir;
    if (auto medium = s.Get("medium").Enum({"", "Memory"}))
      vol.medium = *medium == 1 ? "Memory" : "";
    if (s.Get("sizeLimit").IsSet()) vol.size_limit = s.Get("sizeLimit").Qty();
  }
  if (YamlValue s = v.Get("hostPath"); s.IsSet()) {
    ++sources;
    vol.kind = model::VolumeKind::kHostPath;
    s.Get("path").Read(vol.source);
    if (!vol.source.starts_with("/")) s.Get("path").Error("must be an absolute path");
    if (YamlValue type = s.Get("type"); type.IsSet()) {
      static const char* const kTypes[] = {
          "",       "DirectoryOrCreate", "Directory",  "FileOrCreate", "File",
          "Socket", "CharDevice",        "BlockDevice"};
      if (auto t = type.Enum({"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File",
                              "Socket", "CharDevice", "BlockDevice"})) {
        vol.host_path_type = kTypes[*t];
      }
    }
  }
  if (YamlValue s = v.Get("configMap"); s.IsSet()) {
    ++sources;
    vol.kind = model::VolumeKind::kConfigMap;
    s.Get("name").Read(vol.source);
    if (vol.source.empty()) s.Get("name").Error("is required");
    s.Get("optional").Read(vol.optional);
    vol.items = DecodeItems(s.Get("items"));
    mode(s);
  }
  if (YamlValue s = v.Get("secret"); s.IsSet()) {
    ++sources;
    vol.kind = model::VolumeKind::kSecret;
    s.Get("secretName").Read(vol.source);
    if (vol.source.empty()) s.Get("secretName").Error("is required");
    s.Get("optional").Read(vol.optional);
    vol.items = DecodeItems(s.Get("items"));
    mode(s);
  }
  if (YamlValue s = v.Get("persistentVolumeClaim"); s.IsSet()) {
    ++sources;
    vol.kind = model::VolumeKind::kPersistentVolumeClaim;
    s.Get("claimName").Read(vol.source);
    if (vol.source.empty()) s.Get("claimName").Error("is required");
    s.Get("readOnly").Read(vol.read_only);
  }
  if (YamlValue s = v.Get("downwardAPI"); s.IsSet()) {
    ++sources;
    vol.kind = model::VolumeKind::kDownwardApi;
    for (const auto& item : s.Get("items").Items()) {
      std::string path, field;
      item.Get("path").Read(path);
      item.Get("fieldRef").Get("fieldPath").Read(field);
      if (path.empty() || path.starts_with("/") || path.find("..") != std::string::npos) {
        item.Get("path").Error("must be a relative path not containing '..'");
      }
      if (field.empty()) {
        item.Get("fieldRef")
            .Warn("only fieldRef items are written by muster (resourceFieldRef is not)");
        continue;
      }
      vol.downward_items.emplace_back(path, field);
    }
    mode(s);
  }
  if (sources == 0) {
    vol.kind = model::VolumeKind::kUnsupported;
    if (v.IsMap()) {
      v.Warn(
          "volume source is not one muster provides (emptyDir, hostPath, configMap, secret, "
          "persistentVolumeClaim, downwardAPI): a pod mounting it fails to start");
    }
  } else if (sources > 1) {
    v.Error("may not specify more than 1 volume type");
  }
  return vol;
}

std::vector<model::NodeSelectorRequirement> DecodeRequirements(const YamlValue& v) {
  std::vector<model::NodeSelectorRequirement> out;
  for (const auto& item : v.Items()) {
    model::NodeSelectorRequirement r;
    item.Get("key").Read(r.key);
    if (auto op =
            item.Get("operator").Enum({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})) {
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
      static const char* const kOps[] = {"In", "NotIn", "Exists", "DoesNotExist"};
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
  // Requests count every container (workloads/pod_requests.h) wherever the pod runs;
  // serve's executors start one process (or podman container) per pod.
  if (YamlValue init = v.Get("initContainers"); !init.Items().empty()) {
    init.Warn(
        "not run by muster serve: its pods start their first container only (a kubelet "
        "under muster kube runs them)");
  }
  const auto containers = v.Get("containers").Items();
  for (size_t i = 1; i < containers.size(); ++i) {
    containers[i].Warn("not run by muster serve: its pods start their first container (" +
                       spec.containers[0].name + ") only (a kubelet under muster kube runs it)");
  }
  spec.overhead = v.Get("overhead").QuantityMap(QuantityScope::kWorkload);
  spec.node_selector = v.Get("nodeSelector").StringMap();
  spec.node_affinity = DecodeNodeAffinity(v.Get("affinity").Get("nodeAffinity"));
  spec.tolerations = DecodeTolerations(v.Get("tolerations"));
  v.Get("priorityClassName").Read(spec.priority_class_name);
  if (auto p = v.Get("priority").Int(INT32_MIN, INT32_MAX))
    spec.priority = static_cast<int32_t>(*p);
  v.Get("schedulerName").Read(spec.scheduler_name);
  // Written by the Priority admission plugin from the pod's PriorityClass (serve does
  // as upstream, pod_priority.h); the class's policy is the one acted on.
  if (YamlValue policy = v.Get("preemptionPolicy"); policy.IsSet()) {
    policy.Enum({"PreemptLowerPriority", "Never"});
  }
  YamlValue restart = v.Get("restartPolicy");
  if (restart.IsSet()) {
    static const char* const kPolicies[] = {"Always", "OnFailure", "Never"};
    if (auto r = restart.Enum({"Always", "OnFailure", "Never"}))
      spec.restart_policy = kPolicies[*r];
  }
  if (auto g = v.Get("terminationGracePeriodSeconds").Int(0, INT64_MAX)) {
    spec.termination_grace_period_seconds = *g;
  }
  // A pod resolves the cluster's names first (its own /etc/hosts, pod_network.h), then
  // the machine's resolver: ClusterFirst, the default (kubectl run writes it).
  YamlValue dns = v.Get("dnsPolicy");
  if (auto d = dns.Enum({"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"});
      d && *d >= 2) {
    dns.Warn(
        "not acted on: pods resolve names as with ClusterFirst (the cluster's names, "
        "then the machine's resolver)");
  }
  v.Get("subdomain").Read(spec.subdomain);
  v.Get("hostname").Read(spec.hostname);
  v.Get("serviceAccountName").Read(spec.service_account_name);
  // The deprecated alias kube-apiserver mirrors serviceAccountName into.
  if (YamlValue alias = v.Get("serviceAccount"); alias.IsSet()) {
    if (auto a = alias.String(); a && spec.service_account_name.empty()) {
      spec.service_account_name = *a;
    } else if (a && *a != spec.service_account_name) {
      alias.Warn("not acted on: serviceAccountName (" + spec.service_account_name + ") is used");
    }
  }
  // Defaulted to true on every stored pod, so read without a warning: muster injects
  // no Service environment variables (what false asks; docs/containers.md).
  v.Get("enableServiceLinks").Bool();
  // Defaulted to {} on every stored pod: empty, it asks for nothing.
  if (YamlValue sc = v.Get("securityContext");
      sc.IsSet() && (!sc.IsMap() || !sc.Entries().empty())) {
    sc.Warn("not acted on by muster serve: a pod runs as its job's owner");
  }
  for (const auto& item : v.Get("volumes").Items()) spec.volumes.push_back(DecodeVolume(item));
  // A mount must name a volume of the pod (the apiserver's "not found" check).
  for (size_t i = 0; i < spec.containers.size(); ++i) {
    for (size_t m = 0; m < spec.containers[i].volume_mounts.size(); ++m) {
      const std::string& name = spec.containers[i].volume_mounts[m].name;
      bool found = std::any_of(spec.volumes.begin(), spec.volumes.end(),
                               [&](const model::Volume& vol) { return vol.name == name; });
      if (!found && !name.empty()) {
        v.Get("containers")
            .Items()[i]
            .Get("volumeMounts")
            .Items()[m]
            .Get("name")
            .Error("Not found: " + Quote(name) + " (no volume of the pod has this name)");
      }
    }
  }
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
    template_value.Get("spec")
        .Get("priorityClassName")
        .Ref("PriorityClass", "", tmpl.spec.priority_class_name);
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
