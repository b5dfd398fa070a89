// How one bound pod becomes a local process: the kubelet's part of starting a
// container, for the local executor. Given the pod (its job's template, its rank
// identity, its address and hosts file), it decides who runs it, with which
// environment and command, where, with which mounts and limits:
//
//   - user: the job's owner (annotation muster.dev/owner, user_map.h), else the server's
//     own account; as root the process runs with that account's uid/gid/groups (and
//     no_new_privs unless it is root); a server not run as root runs pods only as itself.
//   - environment: exactly the container's (envFrom, env with valueFrom and $(VAR)
//     expansion, workloads/container_env.h), then the controller's rank identity, then
//     HOSTNAME, HOME, USER, LOGNAME and a default PATH where the pod sets none. Nothing
//     of the server's environment. LD_PRELOAD and LD_AUDIT are dropped with a warning:
//     they would inject code into every process of the pod, including programs that are
//     not the user's, and nothing legitimate in a training job needs them from the
//     manifest (a wrapper script can still set them).
//   - view (root): private mount and UTS namespaces: hostname = the pod's, /etc/hosts =
//     the pod's, the data directory hidden behind an empty tmpfs except the pod's own
//     work directory (so no pod sees the store, other pods' directories or logs), the
//     MPI hostfile at /etc/mpi (MPIJob launchers), the volumes at their mountPaths.
//   - cgroup limits: limits.memory, limits.cpu (CFS quota), requests.cpu (shares).
// Does I/O (hosts file, hostfile, volumes); called from the executor's thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/workload.h"
#include "server/image_pull_backoff.h"
#include "server/pod_volumes.h"
#include "server/process_supervisor.h"
#include "server/user_map.h"

namespace muster::server {

class PodmanRuntime;

struct LocalPodConfig {
  std::string data_dir;
  UserMap users;
  Account server;        // the account muster serve runs as
  bool isolate = false;  // root: namespaces, owners' accounts, private data directory
  VolumePolicy volumes;
  // Set: pods run as podman containers of their images (podman_runtime.h).
  std::shared_ptr<PodmanRuntime> podman;
  // Its back-off when a pod's image cannot be pulled (--image-pull-backoff).
  ImagePullBackOffSettings image_pull_backoff;
};

struct LocalPodInput {
  const model::Workload* workload = nullptr;
  int32_t pod_set = 0;
  int32_t index = 0;
  std::string name;  // pod name (= hostname)
  std::string subdomain;
  std::string uid;  // metadata.uid of the Pod object
  std::string node;
  std::string ip;
  model::StringMap labels;       // of the Pod object
  model::StringMap annotations;  // of the Pod object
  model::QuantityMap node_allocatable;
  // Appended after the template's env: rank identity, CUDA_VISIBLE_DEVICES...
  std::vector<std::pair<std::string, std::string>> identity_env;
  std::string hosts;         // content of its /etc/hosts
  std::string mpi_hostfile;  // MPIJob launcher: written to /etc/mpi/hostfile
  // Volcano svc plugin: file name -> content, mounted read-only at /etc/volcano.
  std::map<std::string, std::string> volcano_hostfiles;
};

struct LocalPodPlan {
  ProcessSpec spec;
  std::string owner;
  std::string account;
  std::vector<std::string> warnings;  // for the pod's events
};

// The owner recorded on `workload` (muster.dev/owner), or "" when none is.
std::string OwnerOf(const model::Workload& workload);

// Prepares the pod's files and returns how to start it. FailedPrecondition /
// InvalidArgument with the kubelet's reason in the message (no account for the owner,
// a missing ConfigMap key, an unmountable volume...); nothing is started then.
Result<LocalPodPlan> PlanLocalPod(const LocalPodConfig& config, const LocalPodInput& pod,
                                  const VolumeSources& sources);

}  // namespace muster::server
