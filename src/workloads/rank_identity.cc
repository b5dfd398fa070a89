// RankIdentity: hostnames and the env a pod gets from its job's controller, as a pure
// function of the Workload. The per-kind rules live in rank_<kind>.cc.
#include <string>

#include "workloads/rank_internal.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

bool IsVolcanoJob(const model::ObjectMeta& meta) {
  return meta.kind == "Job" && meta.api_version.starts_with("batch.volcano.sh/");
}

// Indexed batch Jobs, and the child Jobs of a JobSet: the Job controller sets
// JOB_COMPLETION_INDEX; JobSet adds its own identity (exposed upstream as the
// jobset.sigs.k8s.io/{jobset-name,replicatedjob-name,job-index} labels).
void BatchIdentity(const model::Workload& w, int32_t pod_set, int32_t index, PodIdentity* id) {
  const model::PodSet& ps = w.pod_sets[pod_set];
  int32_t completion_index = index;
  if (ps.pods_per_job > 0) {
    completion_index = index % ps.pods_per_job;
    id->env["JOBSET_NAME"] = w.meta.name;
    id->env["REPLICATED_JOB_NAME"] = ps.name;
    id->env["JOB_INDEX"] = std::to_string(index / ps.pods_per_job);
  }
  if (ps.indexed) id->env["JOB_COMPLETION_INDEX"] = std::to_string(completion_index);
}

}  // namespace

std::string DefaultHostname(const model::Workload& workload, int32_t pod_set, int32_t index) {
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(workload.pod_sets.size())) return "";
  const model::PodSet& ps = workload.pod_sets[pod_set];
  if (!ps.existing_pod.empty()) return ps.existing_pod;  // a bare Pod keeps its name
  // JobSet pods are "<jobset>-<replicatedJob>-<jobIndex>-<podIndex>" upstream; users
  // write rendezvous addresses in that form, so keep it.
  if (ps.pods_per_job > 0) {
    return workload.meta.name + "-" + ps.name + "-" + std::to_string(index / ps.pods_per_job) +
           "-" + std::to_string(index % ps.pods_per_job);
  }
  // The Job controller names an Indexed Job's pods "<job>-<index>-<random>" with
  // hostname "<job>-<index>" (what "<job>-0.<subdomain>" rendezvous addresses name);
  // muster drops the random suffix so the pod name is the hostname.
  if (workload.meta.kind == "Job" && workload.meta.api_version == "batch/v1") {
    return workload.meta.name + "-" + std::to_string(index);
  }
  return workload.meta.name + "-" + ps.name + "-" + std::to_string(index);
}

std::string DefaultSubdomain(const model::Workload& workload, int32_t pod_set) {
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(workload.pod_sets.size())) return "";
  const model::PodSet& ps = workload.pod_sets[pod_set];
  if (!ps.tmpl.spec.subdomain.empty()) return ps.tmpl.spec.subdomain;
  const model::ObjectMeta& meta = workload.meta;
  if (meta.kind == "JobSet" || meta.kind == "TrainJob" || meta.kind == "MPIJob") return meta.name;
  if (IsVolcanoJob(meta) && workload.rank.volcano_plugins.contains("svc")) return meta.name;
  return "";
}

RankContext DefaultRankContext(const model::Workload& workload) {
  RankContext context;
  int32_t master = internal::PodSetIndex(workload, "master");
  if (workload.meta.kind == "TrainJob") context.master_port = model::kTrainerMasterPort;
  if (workload.meta.kind == "PyTorchJob" && master >= 0) {
    context.master_port = internal::DeclaredPort(workload.pod_sets[master].tmpl, "pytorch",
                                                 "pytorchjob-port", context.master_port);
  }
  return context;
}

PodIdentity RankIdentity(const model::Workload& workload, int32_t pod_set, int32_t index,
                         const RankContext& context) {
  PodIdentity id;
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(workload.pod_sets.size()) || index < 0) {
    return id;
  }
  id.hostname = internal::HostnameOf(workload, context, pod_set, index);
  const std::string& kind = workload.meta.kind;
  if (kind == "PyTorchJob") {
    internal::PyTorchIdentity(workload, pod_set, index, context, &id);
  } else if (kind == "TFJob") {
    internal::TensorFlowIdentity(workload, pod_set, index, context, &id);
  } else if (kind == "MPIJob") {
    internal::MpiIdentity(workload, pod_set, index, context, &id);
  } else if (IsVolcanoJob(workload.meta)) {
    internal::VolcanoIdentity(workload, pod_set, index, context, &id);
  } else if (kind == "Job" || kind == "JobSet") {
    BatchIdentity(workload, pod_set, index, &id);
  } else if (kind == "TrainJob") {
    BatchIdentity(workload, pod_set, index, &id);
    internal::TrainerTorchIdentity(workload, pod_set, index, context, &id);
  }
  return id;
}

namespace internal {

std::string HostnameOf(const model::Workload& workload, const RankContext& context, int32_t pod_set,
                       int32_t index) {
  return AddressOf(workload, context, pod_set, index, "");
}

std::string AddressOf(const model::Workload& workload, const RankContext& context, int32_t pod_set,
                      int32_t index, std::string_view dns_suffix) {
  const std::string& name = workload.pod_sets[pod_set].name;
  if (auto it = context.hostnames.find(name); it != context.hostnames.end()) {
    if (index < static_cast<int32_t>(it->second.size()) && !it->second[index].empty()) {
      return it->second[index];
    }
  }
  return DefaultHostname(workload, pod_set, index) + std::string(dns_suffix);
}

int32_t PodSetIndex(const model::Workload& workload, std::string_view name) {
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    if (workload.pod_sets[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

int32_t DeclaredPort(const model::PodTemplate& tmpl, std::string_view container,
                     std::string_view port_name, int32_t fallback) {
  for (const model::Container& c : tmpl.spec.containers) {
    if (c.name != container) continue;
    for (const model::ContainerPort& p : c.ports) {
      if (p.name == port_name && p.container_port > 0) return p.container_port;
    }
  }
  return fallback;
}

}  // namespace internal
}  // namespace muster::workloads
