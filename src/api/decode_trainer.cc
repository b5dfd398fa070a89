// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): ClusterTrainingRuntime,
// TrainingRuntime and TrainJob, with the defaults and checks of upstream's CRDs and
// webhooks. Fields muster does not act on are accepted with a warning.
#include <cctype>
#include <set>
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

constexpr char kTrainerGroup[] = "trainer.kubeflow.org";

// Warns for each key of map `v` outside `known` (upstream's structural schema would
// prune it; kubectl shows the warning).
void WarnUnknownFields(const YamlValue& v, std::initializer_list<std::string_view> known) {
  if (!v.IsMap()) return;
  std::set<std::string_view> allowed(known);
  for (const auto& [key, value] : v.Entries()) {
    (void)value;
    if (allowed.count(key) == 0) v.Get(key).Warn("unknown field " + Quote(key) + "; ignored");
  }
}

// numProcPerNode: an integer of at least 1, or auto / cpu / gpu (torch's IntOrString).
std::optional<std::string> DecodeNumProcPerNode(const YamlValue& v) {
  if (!v.IsSet()) return std::nullopt;
  std::optional<std::string> text = v.String();
  if (!text) return std::nullopt;  // not a scalar: reported
  if (*text == "auto" || *text == "cpu" || *text == "gpu") return text;
  if (text->empty() || text->find_first_not_of("0123456789") != std::string::npos) {
    v.Error("must be an integer or one of auto, cpu, gpu (got " + Quote(*text) + ")");
    return std::nullopt;
  }
  if (auto n = v.Int(1, INT32_MAX)) return std::to_string(*n);
  return std::nullopt;  // Int reported it
}

std::optional<model::ElasticPolicy> DecodeTorchElastic(const YamlValue& v) {
  if (!v.IsSet()) return std::nullopt;
  model::ElasticPolicy e;
  v.Get("minNodes").Read(e.min_replicas, 1);
  v.Get("maxNodes").Read(e.max_replicas, 1);
  v.Get("maxRestarts").Read(e.max_restarts);
  v.Warn("torch elasticPolicy is not acted on: the trainer runs with a fixed numNodes");
  return e;
}

}  // namespace

void DecodeTrainingRuntime(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::TrainingRuntime rt;
  YamlValue spec = root.Get("spec");
  WarnUnknownFields(spec, {"mlPolicy", "podGroupPolicy", "template"});
  YamlValue ml = spec.Get("mlPolicy");
  WarnUnknownFields(ml, {"numNodes", "torch", "mpi"});
  ml.Get("numNodes").Read(rt.num_nodes, 1);
  if (YamlValue torch = ml.Get("torch"); torch.IsSet()) {
    WarnUnknownFields(torch, {"numProcPerNode", "elasticPolicy"});
    model::TorchPolicy policy;
    policy.num_proc_per_node = DecodeNumProcPerNode(torch.Get("numProcPerNode"));
    policy.elastic_policy = DecodeTorchElastic(torch.Get("elasticPolicy"));
    rt.torch = std::move(policy);
  }
  if (YamlValue mpi = ml.Get("mpi"); mpi.IsSet()) {
    rt.mpi = true;
    if (rt.torch) mpi.Error("only one of torch or mpi may be set");
    mpi.Warn(
        "the MPI policy is not acted on: the template's pods run as written, without the "
        "hostfile and SSH keys the MPI plugin adds");
  }
  YamlValue group = spec.Get("podGroupPolicy");
  WarnUnknownFields(group, {"coscheduling", "volcano"});
  YamlValue cosched = group.Get("coscheduling");
  if (cosched.IsSet()) {
    cosched.Get("scheduleTimeoutSeconds").Read(rt.schedule_timeout_seconds);
    if (rt.schedule_timeout_seconds) {
      cosched.Get("scheduleTimeoutSeconds")
          .Warn("not acted on: muster admits and starts the whole gang at once or not at all");
    }
  }
  if (group.Get("volcano").IsSet()) {
    rt.volcano_pod_group = true;
    if (cosched.IsSet())
      group.Get("volcano").Error("only one of coscheduling or volcano may be set");
  }
  YamlValue tmpl = spec.Get("template");
  YamlValue js_spec = tmpl.Get("spec");
  if (!js_spec.IsSet()) js_spec.Error("is required");
  rt.tmpl = DecodeJobSetSpec(js_spec);
  rt.tmpl.meta.labels = tmpl.Get("metadata").Get("labels").StringMap();
  rt.tmpl.meta.annotations = tmpl.Get("metadata").Get("annotations").StringMap();
  bool has_trainer = false;
  for (const auto& rj : rt.tmpl.replicated_jobs) {
    auto it = rj.template_labels.find(model::kTrainJobAncestorLabel);
    if ((it != rj.template_labels.end() && it->second == model::kTrainerAncestor) ||
        rj.name == model::kTrainerContainer) {
      has_trainer = true;
    }
  }
  if (js_spec.IsSet() && !has_trainer && !rt.tmpl.replicated_jobs.empty()) {
    js_spec.Get("replicatedJobs")
        .Warn("no replicated job is labelled " + std::string(model::kTrainJobAncestorLabel) +
              ": trainer or named \"node\"; TrainJobs cannot set the trainer on this runtime");
  }
  rt.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.training_runtimes.push_back(std::move(rt));
}

void DecodeTrainJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::TrainJob job;
  // Upstream's CEL rules: the name is an RFC 1035 label of at most 63 characters
  // (it becomes the JobSet's name and the pods' subdomain).
  YamlValue name = root.Get("metadata").Get("name");
  bool rfc1035 = !meta.name.empty() && meta.name.size() <= 63 &&
                 std::islower(static_cast<unsigned char>(meta.name.front())) &&
                 meta.name.back() != '-';
  for (char c : meta.name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      rfc1035 = false;
  }
  if (!meta.name.empty() && !rfc1035) {
    name.Error(
        "must be an RFC 1035 DNS label of at most 63 characters (a-z, 0-9 and '-', "
        "starting with a letter)");
  }
  YamlValue spec = root.Get("spec");
  WarnUnknownFields(spec, {"runtimeRef", "initializer", "trainer", "labels", "annotations",
                           "podSpecOverrides", "podTemplateOverrides", "runtimePatches", "suspend",
                           "managedBy", "activeDeadlineSeconds"});
  YamlValue ref = spec.Get("runtimeRef");
  if (!ref.IsSet()) ref.Error("is required");
  WarnUnknownFields(ref, {"name", "kind", "apiGroup"});
  ref.Get("name").Read(job.runtime_ref.name);
  if (ref.IsSet() && job.runtime_ref.name.empty()) ref.Get("name").Error("is required");
  if (YamlValue kind = ref.Get("kind"); kind.IsSet()) {
    static const char* const kKinds[] = {"ClusterTrainingRuntime", "TrainingRuntime"};
    if (auto k = kind.Enum({"ClusterTrainingRuntime", "TrainingRuntime"})) {
      job.runtime_ref.kind = kKinds[*k];
    }
  }
  if (YamlValue group = ref.Get("apiGroup"); group.IsSet()) {
    group.Read(job.runtime_ref.api_group);
    if (job.runtime_ref.api_group != kTrainerGroup) {
      group.Error("must be " + std::string(kTrainerGroup) + " (got " +
                  Quote(job.runtime_ref.api_group) + ")");
    }
  }
  if (!job.runtime_ref.name.empty()) {
    const bool cluster = job.runtime_ref.kind == "ClusterTrainingRuntime";
    ref.Get("name").Ref(job.runtime_ref.kind, cluster ? "" : meta.namespace_, job.runtime_ref.name);
  }

  YamlValue trainer = spec.Get("trainer");
  WarnUnknownFields(trainer, {"image", "command", "args", "env", "numNodes", "resourcesPerNode",
                              "numProcPerNode"});
  if (trainer.IsSet()) {
    model::Container c = DecodeContainer(trainer);  // image, command, args, env
    if (trainer.Get("image").IsSet()) job.trainer.image = c.image;
    job.trainer.command = std::move(c.command);
    job.trainer.args = std::move(c.args);
    job.trainer.env = std::move(c.env);
    // torchrun's variables are the torch plugin's to set (upstream's webhook refuses them).
    static const std::set<std::string> kReserved = {
        "PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"};
    std::vector<YamlValue> env_items = trainer.Get("env").Items();
    for (size_t i = 0; i < job.trainer.env.size() && i < env_items.size(); ++i) {
      if (kReserved.count(job.trainer.env[i].name)) {
        env_items[i].Get("name").Error(Quote(job.trainer.env[i].name) +
                                       " is reserved for torchrun and set by the runtime");
      }
    }
    trainer.Get("numNodes").Read(job.trainer.num_nodes, 1);
    YamlValue resources = trainer.Get("resourcesPerNode");
    WarnUnknownFields(resources, {"requests", "limits", "claims"});
    if (resources.Get("requests").IsSet()) {
      job.trainer.requests = resources.Get("requests").QuantityMap(QuantityScope::kWorkload);
    }
    if (resources.Get("limits").IsSet()) {
      job.trainer.limits = resources.Get("limits").QuantityMap(QuantityScope::kWorkload);
    }
    job.trainer.num_proc_per_node = DecodeNumProcPerNode(trainer.Get("numProcPerNode"));
  }
  if (YamlValue init = spec.Get("initializer"); init.IsSet()) {
    init.Warn(
        "not acted on: the runtime's dataset and model initializer steps run as the runtime "
        "writes them, without this storageUri, env or secretRef");
  }
  for (const char* field : {"podSpecOverrides", "podTemplateOverrides", "runtimePatches"}) {
    if (YamlValue v = spec.Get(field); v.IsSet()) v.Warn("not applied to the runtime's pods");
  }
  if (YamlValue v = spec.Get("activeDeadlineSeconds"); v.IsSet()) {
    v.Int(1, INT64_MAX);
    v.Warn("not acted on");
  }
  job.labels = spec.Get("labels").StringMap();
  job.annotations = spec.Get("annotations").StringMap();
  spec.Get("suspend").Read(job.suspend);
  if (YamlValue managed = spec.Get("managedBy"); managed.IsSet()) {
    static const char* const kManagers[] = {"trainer.kubeflow.org/trainjob-controller",
                                            "kueue.x-k8s.io/multikueue"};
    if (auto m = managed.Enum({kManagers[0], kManagers[1]})) {
      job.managed_by = kManagers[*m];
      if (*m == 1) managed.Warn("MultiKueue is not acted on: the TrainJob runs here");
    }
  }
  AddWorkloadRefs(root, meta);
  job.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.jobs.emplace_back(std::move(job));
}

}  // namespace muster::api::internal
