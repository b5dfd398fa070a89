#include "server/local_pod.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "server/pod_paths.h"
#include "server/podman_runtime.h"
#include "workloads/container_env.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr char kMpiDir[] = "/etc/mpi";
constexpr char kVolcanoDir[] = "/etc/volcano";

// Loader variables that inject code into every process of the pod.
constexpr const char* kRefusedEnv[] = {"LD_PRELOAD", "LD_AUDIT"};

// OpenMPI starts one orted per host of the hostfile through an rsh agent (ssh in
// mpi-operator's images, to an sshd in each worker). Local pods have no sshd: this
// agent runs the command on this machine, in the launcher pod, so mpirun works over
// the hostfile as written (its ranks then share the launcher's cgroup).
constexpr char kRshAgent[] =
    "#!/bin/sh\n"
    "# muster: OpenMPI's rsh agent for local pods: runs orted here, in the launcher pod.\n"
    "while [ $# -gt 0 ]; do\n"
    "  case \"$1\" in -o|-l|-p) shift 2 ;; -*) shift ;; *) break ;; esac\n"
    "done\n"
    "echo \"muster rsh-agent: $1: orted runs in the launcher pod\" >&2\n"
    "# Each orted its own session directory: they share the launcher's hostname and /tmp,\n"
    "# and Open MPI's mkdir of the same path from two at once fails (File exists).\n"
    "OMPI_MCA_orte_tmpdir_base=\"${TMPDIR:-/tmp}/muster-orted.$1\"\n"
    "export OMPI_MCA_orte_tmpdir_base\n"
    "mkdir -p \"$OMPI_MCA_orte_tmpdir_base\" || exit 1\n"
    "shift\n"
    "exec /bin/sh -c \"$*\"\n";

Status WriteFile(const std::string& path, const std::string& content, mode_t mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return Internal("cannot write " + path + ": " + std::strerror(errno));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  ::chmod(path.c_str(), mode);
  return ok ? Status::Ok() : Internal("cannot write " + path);
}

std::optional<int64_t> MilliOf(const model::QuantityMap& m, const char* name) {
  auto it = m.find(name);
  if (it == m.end()) return std::nullopt;
  return it->second.MilliValue();
}

CgroupLimits LimitsOf(const model::Container& container) {
  CgroupLimits limits;
  if (auto it = container.limits.find("memory"); it != container.limits.end()) {
    limits.memory_bytes = it->second.Value();
  }
  limits.cpu_millis = MilliOf(container.limits, "cpu");
  limits.cpu_shares_millis = MilliOf(container.requests, "cpu");
  if (!limits.cpu_shares_millis) limits.cpu_shares_millis = limits.cpu_millis;
  return limits;
}

// The files the pod sees: its /etc/hosts, /etc/mpi for an MPIJob launcher and
// /etc/volcano for a Volcano Job's svc plugin.
Status WritePodFiles(const std::string& pod_dir, const LocalPodInput& pod) {
  if (Status s = WriteFile(pod_dir + "/hosts", pod.hosts, 0644); !s.ok()) return s;
  for (const auto& [name, content] : pod.volcano_hostfiles) {
    if (Status s = WriteFile(pod_dir + "/etc-volcano/" + name, content, 0644); !s.ok()) return s;
  }
  if (!pod.mpi_hostfile.empty()) {
    std::string dir = pod_dir + "/etc-mpi";
    if (Status s = WriteFile(dir + "/hostfile", pod.mpi_hostfile, 0644); !s.ok()) return s;
    if (Status s = WriteFile(dir + "/rsh-agent", kRshAgent, 0755); !s.ok()) return s;
  }
  return Status::Ok();
}

// The pod as a podman container (podman_runtime.h): the same user, env, hosts file,
// volumes and limits, from its image; CUDA_VISIBLE_DEVICES only where it hides GPUs,
// since a container sees just the GPUs passed to it, numbered from 0.
Result<LocalPodPlan> PlanPodmanPod(const LocalPodConfig& config, const LocalPodInput& pod,
                                   const VolumeSources& sources, const workloads::PodFacts& facts,
                                   const Account& account,
                                   const workloads::ResolvedContainer& resolved,
                                   std::vector<std::pair<std::string, std::string>> env,
                                   LocalPodPlan plan) {
  const model::PodSpec& spec = pod.workload->pod_sets[pod.pod_set].tmpl.spec;
  const model::Container& container = spec.containers.front();
  const std::string& ns = pod.workload->meta.namespace_;
  PodmanPodInput in;
  in.id = PodProcessId(ns, pod.name);
  in.namespace_ = ns;
  in.name = pod.name;
  in.pod_dir = PodDir(config.data_dir, ns, pod.name);
  in.container = &container;
  in.command = resolved.command;
  in.args = resolved.args;
  for (const auto& [name, value] : pod.identity_env) {
    if (name != "CUDA_VISIBLE_DEVICES") continue;
    std::string ids = value;
    for (size_t at = 0; !ids.empty();) {
      size_t comma = ids.find(',', at);
      in.gpus.push_back(ids.substr(at, comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (!in.gpus.empty()) {
      // Named captures: clang before 16 (clang-tidy here) cannot capture structured
      // bindings, which C++20 allows.
      std::erase_if(
          env, [&n = name, &v = value](const auto& e) { return e.first == n && e.second == v; });
    }
  }
  in.env = std::move(env);
  in.account = account;
  in.hosts_file = in.pod_dir + "/hosts";
  in.limits = LimitsOf(container);
  if (Status s = WritePodFiles(in.pod_dir, pod); !s.ok()) return s;
  PodVolumeContext volume_context{config.data_dir, in.pod_dir,       ns,
                                  account,         account.uid == 0, facts};
  VolumePolicy policy = config.volumes;
  policy.mounts = true;
  policy.container = true;
  auto volumes = PrepareVolumes(spec, container, volume_context, sources, policy);
  if (!volumes.ok()) return volumes.status();
  in.mounts = std::move(volumes).value();
  if (!pod.mpi_hostfile.empty()) {
    in.mounts.push_back(
        {MountStep::Kind::kBind, in.pod_dir + "/etc-mpi", kMpiDir, true, false, false, ""});
  }
  if (!pod.volcano_hostfiles.empty()) {
    in.mounts.push_back(
        {MountStep::Kind::kBind, in.pod_dir + "/etc-volcano", kVolcanoDir, true, false, false, ""});
  }
  if (!container.ports.empty()) {
    plan.warnings.push_back(
        "container ports are not mapped: the container shares the host's network, so it "
        "listens on its pod address and its own port numbers");
  }
  auto process = config.podman->Plan(in);
  if (!process.ok()) return process.status();
  plan.spec = std::move(process).value();
  return plan;
}

}  // namespace

std::string OwnerOf(const model::Workload& workload) {
  auto it = workload.meta.annotations.find(kOwnerAnnotation);
  return it == workload.meta.annotations.end() ? "" : it->second;
}

Result<LocalPodPlan> PlanLocalPod(const LocalPodConfig& config, const LocalPodInput& pod,
                                  const VolumeSources& sources) {
  const model::Workload& w = *pod.workload;
  const model::PodSet& ps = w.pod_sets[pod.pod_set];
  if (ps.tmpl.spec.containers.empty()) return FailedPrecondition("the pod has no containers");
  const model::Container& container = ps.tmpl.spec.containers.front();
  const std::string& ns = w.meta.namespace_;
  LocalPodPlan plan;

  // Who runs it.
  plan.owner = OwnerOf(w);
  Account account = config.server;
  if (!plan.owner.empty() && plan.owner != config.server.name) {
    auto resolved = config.users.Resolve(plan.owner);
    if (!resolved.ok()) return resolved.status();
    account = std::move(resolved).value();
  } else if (plan.owner.empty()) {
    plan.owner = config.server.name;
  }
  if (!config.isolate && account.uid != config.server.uid) {
    return FailedPrecondition("muster serve runs as " + config.server.name +
                              " (not root) and runs pods only as that account; the job's owner \"" +
                              plan.owner + "\" maps to " + account.name);
  }
  plan.account = account.name;

  const std::string pod_dir = PodDir(config.data_dir, ns, pod.name);
  const std::string work_dir = pod_dir + "/work";

  // The downward API's view of the pod.
  workloads::PodFacts facts;
  facts.name = pod.name;
  facts.namespace_ = ns;
  facts.uid = pod.uid;
  facts.node_name = pod.node;
  facts.service_account =
      ps.tmpl.spec.service_account_name.empty() ? "default" : ps.tmpl.spec.service_account_name;
  facts.pod_ip = pod.ip;
  facts.host_ip = "127.0.0.1";
  facts.labels = pod.labels;
  facts.annotations = pod.annotations;
  facts.node_allocatable = pod.node_allocatable;

  std::vector<std::pair<std::string, std::string>> identity = pod.identity_env;
  if (!pod.mpi_hostfile.empty()) {
    std::string dir = config.isolate ? kMpiDir : pod_dir + "/etc-mpi";
    for (auto& [name, value] : identity) {
      if (value == std::string(kMpiDir) + "/hostfile") value = dir + "/hostfile";
    }
    identity.emplace_back("OMPI_MCA_plm_rsh_agent", dir + "/rsh-agent");
  }
  auto resolved = workloads::ResolveContainer(ps.tmpl.spec, container, facts, sources, identity);
  if (!resolved.ok()) return resolved.status();
  plan.warnings = resolved->warnings;

  std::vector<std::pair<std::string, std::string>> env;
  for (auto& [name, value] : resolved->env) {
    if (std::find(std::begin(kRefusedEnv), std::end(kRefusedEnv), name) != std::end(kRefusedEnv)) {
      plan.warnings.push_back("environment variable " + name +
                              " is ignored: muster does not let a manifest inject libraries "
                              "into the pod's processes");
      continue;
    }
    env.emplace_back(name, value);
  }
  if (config.podman) {
    return PlanPodmanPod(config, pod, sources, facts, account, *resolved, env, plan);
  }

  ProcessSpec& spec = plan.spec;
  spec.id = PodProcessId(ns, pod.name);
  spec.argv = resolved->command;
  spec.argv.insert(spec.argv.end(), resolved->args.begin(), resolved->args.end());
  if (spec.argv.empty()) {
    return FailedPrecondition(
        "the container has no command: the local executor runs the container's command and "
        "args on this machine and does not pull images (use --container-runtime=podman)");
  }
  for (auto& [name, value] : env) spec.env[name] = value;
  spec.env.emplace("PATH", kDefaultPath);
  spec.env.emplace("HOSTNAME", pod.name);
  spec.env.emplace("HOME", account.home.empty() || !config.isolate ? work_dir : account.home);
  spec.env.emplace("USER", account.name);
  spec.env.emplace("LOGNAME", account.name);

  // workingDir: as the pod's user (confined by the kernel's permission checks).
  if (!container.working_dir.empty()) {
    spec.working_dir = container.working_dir.starts_with("/")
                           ? container.working_dir
                           : work_dir + "/" + container.working_dir;
  }

  spec.limits = LimitsOf(container);
  if (Status s = WritePodFiles(pod_dir, pod); !s.ok()) return s;

  PodVolumeContext volume_context{config.data_dir, pod_dir, ns, account, account.uid == 0, facts};
  VolumePolicy policy = config.volumes;
  policy.mounts = config.isolate;
  auto volumes = PrepareVolumes(ps.tmpl.spec, container, volume_context, sources, policy);
  if (!volumes.ok()) return volumes.status();

  if (config.isolate) {
    spec.credentials = Credentials{account.uid, account.gid, account.groups};
    spec.no_new_privs = account.uid != 0;
    spec.private_mounts = true;
    spec.hostname = pod.name;
    // The data directory (store, other pods) hidden; the pod's own work dir put back.
    spec.mounts.push_back({MountStep::Kind::kTmpfs, "", config.data_dir, false, false, false, ""});
    // Overlays (upper layers in that tmpfs) before anything is mounted below them.
    for (auto& m : *volumes) {
      if (m.kind == MountStep::Kind::kOverlay) spec.mounts.push_back(m);
    }
    std::erase_if(*volumes, [](const MountStep& m) { return m.kind == MountStep::Kind::kOverlay; });
    spec.mounts.push_back({MountStep::Kind::kBind, work_dir, work_dir, false, false, true, ""});
    spec.mounts.push_back(
        {MountStep::Kind::kBind, pod_dir + "/hosts", "/etc/hosts", true, true, false, ""});
    if (!pod.mpi_hostfile.empty()) {
      spec.mounts.push_back({MountStep::Kind::kBind, pod_dir + "/etc-mpi", kMpiDir, true, false,
                             !fs::exists(kMpiDir), ""});
    }
    if (!pod.volcano_hostfiles.empty()) {
      spec.mounts.push_back({MountStep::Kind::kBind, pod_dir + "/etc-volcano", kVolcanoDir, true,
                             false, !fs::exists(kVolcanoDir), ""});
    }
    for (auto& m : *volumes) spec.mounts.push_back(std::move(m));
  }
  return plan;
}

}  // namespace muster::server
