// Training job kinds: batch/v1 Job, kubeflow.org PyTorchJob/TFJob (v1) and MPIJob
// (v2beta1), jobset.x-k8s.io JobSet. Defaults follow each project's defaulting code.
#include <algorithm>
#include <set>
#include <string>

#include "api/decode_common.h"
#include "core/text.h"

namespace muster::api::internal {
namespace {

struct KubeflowKind {
  const char* kind;
  const char* specs_field;
  std::vector<std::string> replica_types;  // canonical spelling
  const char* default_restart_policy;
};

const KubeflowKind* FindKubeflowKind(const std::string& kind) {
  // Default restart policies: training-operator (PyTorchJob OnFailure, TFJob Never),
  // mpi-operator v2beta1 (Never; the launcher OnFailure, set below).
  static const std::vector<KubeflowKind> kKinds = {
      {"PyTorchJob", "pytorchReplicaSpecs", {"Master", "Worker"}, "OnFailure"},
      {"TFJob", "tfReplicaSpecs", {"Chief", "Master", "PS", "Worker", "Evaluator"}, "Never"},
      {"MPIJob", "mpiReplicaSpecs", {"Launcher", "Worker"}, "Never"},
  };
  for (const auto& k : kKinds) {
    if (kind == k.kind) return &k;
  }
  return nullptr;
}

model::RunPolicy DecodeRunPolicy(const YamlValue& v) {
  model::RunPolicy rp;
  YamlValue clean = v.Get("cleanPodPolicy");
  rp.clean_pod_policy = "None";
  if (clean.IsSet()) {
    static const char* const kPolicies[] = {"None", "Running", "All"};
    if (auto c = clean.Enum({"None", "Running", "All"})) rp.clean_pod_policy = kPolicies[*c];
  }
  v.Get("backoffLimit").Read(rp.backoff_limit);
  if (auto d = v.Get("activeDeadlineSeconds").Int(1, INT64_MAX)) rp.active_deadline_seconds = *d;
  v.Get("suspend").Read(rp.suspend);
  YamlValue sp = v.Get("schedulingPolicy");
  if (sp.IsSet()) {
    model::SchedulingPolicy s;
    sp.Get("minAvailable").Read(s.min_available);
    sp.Get("queue").Read(s.queue);
    sp.Get("priorityClass").Read(s.priority_class);
    if (!s.priority_class.empty()) {
      sp.Get("priorityClass").Ref("PriorityClass", "", s.priority_class);
    }
    rp.scheduling_policy = std::move(s);
  }
  return rp;
}

std::optional<model::ElasticPolicy> DecodeElasticPolicy(const YamlValue& v) {
  if (!v.IsSet()) return std::nullopt;
  model::ElasticPolicy e;
  v.Get("minReplicas").Read(e.min_replicas, 1);
  v.Get("maxReplicas").Read(e.max_replicas, 1);
  v.Get("maxRestarts").Read(e.max_restarts);
  v.Get("rdzvBackend").Read(e.rdzv_backend);
  v.Get("nProcPerNode").Read(e.nproc_per_node, 1);
  if (e.min_replicas && e.max_replicas && *e.min_replicas > *e.max_replicas) {
    v.Get("minReplicas")
        .Error("must be less than or equal to maxReplicas (" + std::to_string(*e.max_replicas) +
               ")");
  }
  return e;
}

// spec.failurePolicy: maxRestarts and the rules muster applies (local_executor's
// JobSet policy); what it cannot honour is accepted with a warning.
model::JobSetFailurePolicy DecodeJobSetFailurePolicy(const YamlValue& v,
                                                     const std::set<std::string>& names) {
  model::JobSetFailurePolicy fp;
  v.Get("maxRestarts").Read(fp.max_restarts);
  YamlValue strategy = v.Get("restartStrategy");
  if (auto st = strategy.IsSet() ? strategy.String() : std::nullopt;
      st && *st != "Recreate" && *st != "BlockingRecreate") {
    strategy.Warn("restartStrategy " + Quote(*st) +
                  " is not acted on: muster restarts a JobSet by recreating all its pods "
                  "once the old ones ended (BlockingRecreate)");
  }
  for (const auto& rv : v.Get("rules").Items()) {
    model::JobSetFailureRule rule;
    rv.Get("name").Read(rule.name);
    YamlValue action = rv.Get("action");
    if (!action.IsSet()) action.Error("is required");
    static const char* const kActions[] = {"FailJobSet", "RestartJobSet",
                                           "RestartJobSetAndIgnoreMaxRestarts", "RestartJob",
                                           "RestartJobAndIgnoreMaxRestarts"};
    if (auto a = action.Enum({"FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts",
                              "RestartJob", "RestartJobAndIgnoreMaxRestarts"})) {
      rule.action = kActions[*a];
      // A muster gang restarts whole: a child Job's own restart becomes the JobSet's.
      if (*a >= 3) {
        action.Warn(rule.action + " is not acted on as such: muster restarts the whole JobSet (" +
                    kActions[*a - 2] + ")");
        rule.action = kActions[*a - 2];
      }
    }
    for (const auto& r : rv.Get("onJobFailureReasons").Items()) {
      std::string reason;
      r.Read(reason);
      if (reason != "BackoffLimitExceeded") {
        r.Warn(
            "muster records a failed child Job as BackoffLimitExceeded only (a pod of it "
            "failed); this reason never matches");
      }
      rule.on_job_failure_reasons.push_back(std::move(reason));
    }
    for (const auto& p : rv.Get("onJobFailureMessagePatterns").Items()) {
      std::string pattern;
      p.Read(pattern);
      rule.on_job_failure_message_patterns.push_back(std::move(pattern));
    }
    for (const auto& t : rv.Get("targetReplicatedJobs").Items()) {
      std::string name;
      t.Read(name);
      if (!names.count(name)) t.Error(Quote(name) + " is not a replicated job of this JobSet");
      rule.target_replicated_jobs.push_back(std::move(name));
    }
    fp.rules.push_back(std::move(rule));
  }
  return fp;
}

// JobSet fields muster accepts without acting on them (kubectl shows the warning).
void WarnJobSetFieldsNotActedOn(const YamlValue& spec) {
  YamlValue network = spec.Get("network");
  if (YamlValue v = network.Get("subdomain"); v.IsSet()) {
    v.Warn("not acted on: the pods' subdomain is the JobSet's name");
  }
  if (YamlValue v = network.Get("enableDNSHostnames"); v.IsSet()) {
    bool on = true;
    v.Read(on);
    if (!on) v.Warn("not acted on: the pods always get their hostnames");
  }
  if (YamlValue v = network.Get("publishNotReadyAddresses"); v.IsSet()) {
    v.Warn("not acted on: a pod's name resolves once it has an address");
  }
  if (YamlValue v = spec.Get("coordinator"); v.IsSet()) {
    v.Warn("not acted on: muster does not add the jobset.sigs.k8s.io/coordinator label");
  }
  if (YamlValue v = spec.Get("managedBy"); v.IsSet()) {
    auto by = v.String();
    if (by && *by != "jobset.sigs.k8s.io/jobset-controller") {
      v.Warn("not acted on: muster runs the JobSet itself");
    }
  }
  if (YamlValue v = spec.Get("ttlSecondsAfterFinished"); v.IsSet()) {
    v.Warn("not acted on: a finished JobSet stays until it is deleted");
  }
  if (YamlValue v = spec.Get("volumeClaimPolicies"); v.IsSet()) {
    v.Warn("not acted on: muster creates no PersistentVolumeClaims for a JobSet");
  }
}

}  // namespace

model::BatchJobSpec DecodeBatchJobSpec(const YamlValue& spec) {
  model::BatchJobSpec js;
  YamlValue parallelism = spec.Get("parallelism");
  YamlValue completions = spec.Get("completions");
  parallelism.Read(js.parallelism);
  completions.Read(js.completions);
  // Kubernetes: with neither set, both default to 1; with only parallelism set,
  // completions stays unset (a work-queue job).
  if (!parallelism.IsSet() && !completions.IsSet()) js.completions = 1;
  YamlValue mode = spec.Get("completionMode");
  if (mode.IsSet()) {
    if (auto m = mode.Enum({"NonIndexed", "Indexed"})) {
      js.completion_mode = static_cast<model::CompletionMode>(*m);
    }
  }
  if (js.completion_mode == model::CompletionMode::kIndexed && !js.completions) {
    completions.Error("is required when completionMode is Indexed");
  }
  spec.Get("suspend").Read(js.suspend);
  spec.Get("backoffLimit").Read(js.backoff_limit);
  if (auto d = spec.Get("activeDeadlineSeconds").Int(1, INT64_MAX)) js.active_deadline_seconds = *d;
  YamlValue tmpl = spec.Get("template");
  if (!tmpl.IsSet()) tmpl.Error("is required");
  js.tmpl = DecodePodTemplate(tmpl);
  YamlValue containers = tmpl.Get("spec").Get("containers");
  if (tmpl.IsSet() && !containers.IsSet()) containers.Error("is required");
  return js;
}

void DecodeBatchJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::BatchJob job;
  job.spec = DecodeBatchJobSpec(root.Get("spec"));
  DecodeJobPolicies(root.Get("spec"), job.spec);
  // Kubernetes' Job validation: its pods never restart in place (a pod's restartPolicy
  // defaults to Always, which a Job refuses); a JobSet's and a training operator's
  // templates are defaulted by their webhooks instead.
  YamlValue restart = root.Get("spec").Get("template").Get("spec").Get("restartPolicy");
  if (job.spec.tmpl.spec.restart_policy != "OnFailure" &&
      job.spec.tmpl.spec.restart_policy != "Never" && !root.ctx().has_errors()) {
    restart.Error("Unsupported value: \"" + job.spec.tmpl.spec.restart_policy +
                  "\": supported values: \"OnFailure\", \"Never\"");
  }
  AddWorkloadRefs(root, meta);
  job.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.jobs.emplace_back(std::move(job));
}

void DecodeKubeflowJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  const KubeflowKind* kk = FindKubeflowKind(meta.kind);
  model::KubeflowJob job;
  YamlValue spec = root.Get("spec");
  YamlValue specs = spec.Get(kk->specs_field);
  if (!specs.IsSet()) specs.Error("is required");
  std::set<std::string> seen;
  for (const auto& [key, rv] : specs.Entries()) {
    model::ReplicaSpec rs;
    // The operators accept any capitalisation ("worker") and canonicalise it.
    for (const auto& t : kk->replica_types) {
      if (AsciiLower(t) == AsciiLower(key)) rs.type = t;
    }
    if (rs.type.empty()) {
      std::string allowed;
      for (const auto& t : kk->replica_types) allowed += (allowed.empty() ? "" : ", ") + t;
      YamlValue(YAML::Node(), rv.path(), rv.line(), &root.ctx())
          .Error(Quote(key) + " is not a replica type of " + meta.kind + " (one of " + allowed +
                 ")");
      continue;
    }
    if (!seen.insert(rs.type).second) {
      rv.Error("replica type " + rs.type + " is listed twice");
      continue;
    }
    rv.Get("replicas").Read(rs.replicas);
    rs.restart_policy = kk->default_restart_policy;
    if (rs.type == "Launcher") rs.restart_policy = "OnFailure";
    YamlValue restart = rv.Get("restartPolicy");
    if (restart.IsSet()) {
      static const char* const kPolicies[] = {"Always", "OnFailure", "Never", "ExitCode"};
      if (auto r = restart.Enum({"Always", "OnFailure", "Never", "ExitCode"})) {
        rs.restart_policy = kPolicies[*r];
      }
    }
    YamlValue tmpl = rv.Get("template");
    if (!tmpl.IsSet()) tmpl.Error("is required");
    rs.tmpl = DecodePodTemplate(tmpl);
    // The operators copy the replica policy onto the pods (ExitCode runs as Never).
    rs.tmpl.spec.restart_policy = rs.restart_policy == "ExitCode" ? "Never" : rs.restart_policy;
    if ((rs.type == "Master" || rs.type == "Launcher" || rs.type == "Chief") && rs.replicas > 1) {
      rv.Get("replicas")
          .Error("must be 1 for " + rs.type + " (got " + std::to_string(rs.replicas) + ")");
    }
    job.replica_specs.push_back(std::move(rs));
  }
  job.run_policy = DecodeRunPolicy(spec.Get("runPolicy"));
  if (meta.kind == "PyTorchJob") {
    job.elastic_policy = DecodeElasticPolicy(spec.Get("elasticPolicy"));
    YamlValue nproc = spec.Get("nprocPerNode");
    if (auto n = nproc.String()) job.nproc_per_node = *n;
  }
  if (meta.kind == "MPIJob") {
    spec.Get("slotsPerWorker").Read(job.slots_per_worker, 1);
    job.mpi_implementation = "OpenMPI";
    YamlValue impl = spec.Get("mpiImplementation");
    if (impl.IsSet()) {
      static const char* const kImpls[] = {"OpenMPI", "Intel", "MPICH"};
      if (auto i = impl.Enum({"OpenMPI", "Intel", "MPICH"})) job.mpi_implementation = kImpls[*i];
    }
    YamlValue creation = spec.Get("launcherCreationPolicy");
    if (creation.IsSet()) {
      if (auto c = creation.Enum({"AtStartup", "WaitForWorkersReady"})) {
        job.launcher_waits_for_workers = *c == 1;
      }
    }
  }
  AddWorkloadRefs(root, meta);
  job.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.jobs.emplace_back(std::move(job));
}

model::JobSet DecodeJobSetSpec(const YamlValue& spec) {
  model::JobSet js;
  YamlValue rjobs = spec.Get("replicatedJobs");
  if (!rjobs.IsSet()) rjobs.Error("is required");
  std::set<std::string> names;
  for (const auto& rv : rjobs.Items()) {
    model::ReplicatedJob rj;
    rv.Get("name").Read(rj.name);
    if (rj.name.empty()) {
      rv.Get("name").Error("is required");
    } else if (!names.insert(rj.name).second) {
      rv.Get("name").Error("replicated job " + Quote(rj.name) + " is defined twice");
    }
    rv.Get("replicas").Read(rj.replicas);
    YamlValue tmpl = rv.Get("template");
    YamlValue job_spec = tmpl.Get("spec");
    if (!job_spec.IsSet()) job_spec.Error("is required");
    rj.tmpl = DecodeBatchJobSpec(job_spec);
    WarnJobTemplatePolicies(job_spec);
    // JobSet's webhook: Indexed completion and OnFailure pods unless set.
    if (!job_spec.Get("completionMode").IsSet()) {
      rj.tmpl.completion_mode = model::CompletionMode::kIndexed;
      if (!rj.tmpl.completions) rj.tmpl.completions = rj.tmpl.parallelism;
    }
    if (!job_spec.Get("template").Get("spec").Get("restartPolicy").IsSet()) {
      rj.tmpl.tmpl.spec.restart_policy = "OnFailure";
    }
    for (const auto& dv : rv.Get("dependsOn").Items()) {
      model::JobSetDependsOn d;
      dv.Get("name").Read(d.name);
      YamlValue status = dv.Get("status");
      if (!status.IsSet()) status.Error("is required");
      if (auto st = status.Enum({"Ready", "Complete"})) d.status = *st == 0 ? "Ready" : "Complete";
      // JobSet's webhook: only replicated jobs listed before this one.
      if (d.name == rj.name || !names.count(d.name)) {
        dv.Get("name").Error("replicatedJob: " + rj.name +
                             " cannot depend on replicatedJob: " + d.name);
      }
      rj.depends_on.push_back(std::move(d));
    }
    if (!rj.depends_on.empty() && js.replicated_jobs.empty()) {
      rv.Get("dependsOn").Error("DependsOn can't be set for the first ReplicatedJob");
    }
    if (rj.depends_on.size() > 1) {
      rv.Get("dependsOn").Error("must have at most 1 item (only one dependency is supported)");
    }
    if (YamlValue g = rv.Get("groupName"); g.IsSet()) {
      g.Warn("not acted on: muster does not set the jobset.sigs.k8s.io/group-name label");
    }
    rj.template_labels = tmpl.Get("metadata").Get("labels").StringMap();
    rj.template_annotations = tmpl.Get("metadata").Get("annotations").StringMap();
    js.replicated_jobs.push_back(std::move(rj));
  }
  YamlValue success = spec.Get("successPolicy");
  YamlValue op = success.Get("operator");
  if (op.IsSet()) {
    if (auto o = op.Enum({"All", "Any"})) js.success_policy.op = *o == 0 ? "All" : "Any";
  }
  for (const auto& t : success.Get("targetReplicatedJobs").Items()) {
    std::string name;
    t.Read(name);
    if (!names.count(name)) t.Error(Quote(name) + " is not a replicated job of this JobSet");
    js.success_policy.target_replicated_jobs.push_back(name);
  }
  js.failure_policy = DecodeJobSetFailurePolicy(spec.Get("failurePolicy"), names);
  YamlValue order = spec.Get("startupPolicy").Get("startupPolicyOrder");
  if (order.IsSet()) {
    if (auto o = order.Enum({"AnyOrder", "InOrder"})) {
      js.startup_policy_order = *o == 0 ? "AnyOrder" : "InOrder";
    }
  }
  if (js.startup_policy_order == "InOrder" &&
      std::any_of(js.replicated_jobs.begin(), js.replicated_jobs.end(),
                  [](const model::ReplicatedJob& rj) { return !rj.depends_on.empty(); })) {
    order.Error("StartupPolicy and DependsOn APIs are mutually exclusive");
  }
  spec.Get("suspend").Read(js.suspend);
  WarnJobSetFieldsNotActedOn(spec);
  return js;
}

void DecodeJobSet(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::JobSet js = DecodeJobSetSpec(root.Get("spec"));
  AddWorkloadRefs(root, meta);
  js.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.jobs.emplace_back(std::move(js));
}

}  // namespace muster::api::internal
