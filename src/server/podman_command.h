// The `podman run` command line that runs one pod's container, built from what the
// local executor already decided for it (its user, env, hosts file, volumes, limits,
// GPUs). Pure functions: no I/O, so every flag is checked by unit tests.
//
// Kubernetes' container semantics on podman:
//   - `command` replaces the image's ENTRYPOINT (--entrypoint, as a JSON array) and
//     `args` replace its CMD; `args` alone keep the ENTRYPOINT; neither runs the image
//     as built.
//   - imagePullPolicy Always / IfNotPresent / Never -> --pull=always / missing / never;
//     unset: Always for `:latest` or no tag (and no digest), else IfNotPresent.
//   - the network is the host's (--network host): the pod's own loopback address
//     (status.podIP) and its /etc/hosts (bind-mounted read-only) keep working as for a
//     local process; the hostname is the pod's (own UTS namespace).
//   - env goes through a file (--env-file, 0600), never the command line, so Secret
//     values do not show in the host's process list.
//   - the container runs as the pod owner's uid:gid (--user, --group-add), with
//     no-new-privileges unless that is root.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "server/process_launch.h"

namespace muster::server {

// "always", "missing" or "never" for a container's image and imagePullPolicy ("" =
// upstream's default). InvalidArgument naming imagePullPolicy for any other value.
Result<std::string> PodmanPullPolicy(const std::string& image, const std::string& policy);

// The --env-file content: "NAME=value" lines. podman's env files hold one line per
// variable, so a value with a newline (or a name with '=') is an InvalidArgument
// naming the variable.
Result<std::string> PodmanEnvFile(const std::vector<std::pair<std::string, std::string>>& env);

// A container name for process `id` (unique per start: `stamp`, e.g. a start time).
// Names of stopped containers can then be removed without touching a newer one.
std::string PodmanContainerName(const std::string& id, int64_t stamp);

inline constexpr char kPodmanPodLabel[] = "muster.dev/pod";          // "<ns>/<name>"
inline constexpr char kPodmanProcessLabel[] = "muster.dev/process";  // the process id

struct PodmanRun {
  std::string podman = "podman";     // executable
  std::string oci_runtime = "runc";  // --runtime ("" = podman's default)
  std::string name;                  // --name (PodmanContainerName)
  std::map<std::string, std::string> labels;
  std::string image;
  std::string pull = "missing";      // PodmanPullPolicy
  std::vector<std::string> command;  // container command ($(VAR) expanded)
  std::vector<std::string> args;     // container args ($(VAR) expanded)
  std::string env_file;              // "" = none
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary
  std::string hostname;
  std::string hosts_file;  // bind-mounted at /etc/hosts, read-only
  // Volumes: kBind steps become -v SOURCE:TARGET[:ro], kTmpfs steps --tmpfs.
  std::vector<MountStep> mounts;
  std::string working_dir;                   // "" = the image's
  std::optional<int64_t> cpu_millis;         // limits.cpu -> --cpus
  std::optional<int64_t> cpu_shares_millis;  // requests.cpu -> --cpu-shares
  std::optional<int64_t> memory_bytes;       // limits.memory -> --memory (swap off)
  // The pod's GPUs: physical ids (nvidia-smi indices). With `cdi`, CDI names
  // nvidia.com/gpu=ID; without, /dev/nvidiaID plus the driver's control nodes.
  std::vector<std::string> gpus;
  bool cdi = false;
  int64_t nofile = 1024;  // --ulimit nofile=N:N
  int64_t nproc = 0;      // --ulimit nproc=N:N (0 = podman's default)
};

// What the command line cannot carry safely: an image that podman would read as a
// flag ("--privileged"), white space in it, or a ':' or ',' in a volume's path (podman
// would read mount options from it, e.g. "/data:suid"). InvalidArgument naming the
// field.
Status ValidatePodmanRun(const PodmanRun& run);

// argv of `podman run` (argv[0] = PodmanRun::podman). Call ValidatePodmanRun first.
std::vector<std::string> PodmanRunArgv(const PodmanRun& run);

// The kubelet's reason for a `podman run` that ended with `exit_code` before its
// container ran, from the last lines of its output: 125 (podman's own error) is
// ErrImagePull when the image could not be pulled, CreateContainerError otherwise;
// 126/127 with the OCI runtime's error (the command missing or not executable) is
// StartError, as containerd reports it. nullopt for the container's own exit codes.
struct PodmanFailure {
  std::string reason;
  std::string message;
};
std::optional<PodmanFailure> ClassifyPodmanExit(int exit_code, const std::string& log_tail);

// argv of `podman pull` of `image` (quiet: its output is the image id, or its error).
std::vector<std::string> PodmanPullArgv(const std::string& podman, const std::string& image);

// The container's ErrImagePull message for a `podman pull` that ended with
// `exit_code`: podman's last line ("Error: initializing source ...").
std::string PodmanPullError(int exit_code, const std::string& output);

// The kubelet's message for a missing image under imagePullPolicy Never.
std::string NeverPullMessage(const std::string& image);

}  // namespace muster::server
