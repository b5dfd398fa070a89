// The podman container runtime under the local executor (`muster serve
// --container-runtime=podman|auto`): each pod's supervised process becomes `podman run`
// of its image (podman_command.h), so everything the executor does around a process
// (gang start, the shim that outlives the server, logs, grace periods, adoption after a
// restart) applies unchanged; this class adds what only a container needs:
//
//   - the image before a start, as the kubelet's image manager: imagePullPolicy Never
//     and no such image -> ErrImageNeverPull (nothing is started); Always, or
//     IfNotPresent without the image, -> `podman pull` as a step of its own, in the
//     background (StartPull/PollPull; the executor shows the pod ContainerCreating
//     meanwhile); a pull that still fails inside `podman run` (exit 125) is read back
//     from its output as ErrImagePull;
//   - stopping: the supervisor's SIGTERM reaches the container through podman run's
//     signal proxy; `podman stop --time GRACE` (by label) makes sure the container
//     itself is killed at the deadline even when podman run is gone;
//   - an exit with 137: OOMKilled when conmon (podman's monitor of the container's
//     cgroup) reported an OOM kill: its `oom` file in its working directory (the
//     pod's), or podman's State.OOMKilled (seen to say false on a cgroup v1 hybrid
//     machine with runc, where the file was written);
//   - cleanup: each start has its own container name, removed (`podman rm -f`) once its
//     process ended; at start-up, containers labelled by muster whose process is not
//     running any more (the server and its shims were killed) are removed.
// Every podman call after start-up is spawned without waiting (the executor's thread
// must not block), except `image exists` before a start and `image inspect` of a
// pulled image's size (milliseconds each, bounded by a timeout).
// Called from the executor's thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/pod.h"
#include "server/podman_command.h"
#include "server/process_supervisor.h"
#include "server/user_map.h"

namespace muster::server {

enum class ContainerRuntimeMode { kNone, kPodman, kAuto };

// "none", "podman", "auto"; InvalidArgument naming --container-runtime otherwise.
Result<ContainerRuntimeMode> ParseContainerRuntime(const std::string& text);

struct PodmanSettings {
  std::string podman;                // absolute path
  std::string oci_runtime = "runc";  // crun refuses hybrid cgroup layouts
  bool cdi = false;                  // NVIDIA CDI specs found (/etc/cdi, /var/run/cdi)
  int64_t nofile = 1024;             // the machine's hard limits (podman's defaults
  int64_t nproc = 0;                 // may exceed them and then every start fails)
};

// What PlanLocalPod hands over for one pod (the rest is the pod's container).
struct PodmanPodInput {
  std::string id;  // process id
  std::string namespace_;
  std::string name;
  std::string pod_dir;
  const model::Container* container = nullptr;
  std::vector<std::string> command, args;                // $(VAR) expanded
  std::vector<std::pair<std::string, std::string>> env;  // resolved, rank identity included
  Account account;
  std::string hosts_file;
  std::vector<MountStep> mounts;  // volumes (and /etc/mpi)
  CgroupLimits limits;
  std::vector<std::string> gpus;  // physical ids
};

class PodmanRuntime {
 public:
  explicit PodmanRuntime(PodmanSettings settings) : settings_(std::move(settings)) {}
  ~PodmanRuntime();  // kills pulls still running
  PodmanRuntime(const PodmanRuntime&) = delete;
  PodmanRuntime& operator=(const PodmanRuntime&) = delete;

  // nullptr for kNone, and for kAuto where podman is missing or cannot run (said on
  // `log`); FailedPrecondition for kPodman then. Needs root (`root`): podman runs
  // rootful and the containers as the pods' owners.
  static Result<std::unique_ptr<PodmanRuntime>> Make(ContainerRuntimeMode mode, bool root,
                                                     std::ostream& log);

  const PodmanSettings& settings() const { return settings_; }

  // The environment podman runs in: nothing of the pod's or the server's (variables
  // such as CONTAINERS_CONF would steer a root podman).
  std::vector<std::string> Env() const;

  // Writes the pod's env file (0600) and returns the supervised process: podman run.
  Result<ProcessSpec> Plan(const PodmanPodInput& pod);

  // Whether `image` is here (`podman image exists`); nullopt when podman failed.
  std::optional<bool> ImagePresent(const std::string& image);
  // Starts `podman pull` of `image` for process `id` and returns at once (one pull
  // per id: a second call while it runs does nothing). podman_image_pull.cc.
  void StartPull(const std::string& id, const std::string& image);
  struct PullResult {
    bool ok = false;
    std::string error;  // podman's error line (the container's ErrImagePull message)
    int64_t size = -1;  // the pulled image's size in bytes (-1: unknown)
  };
  // nullopt while `id`'s pull runs (or none was started); its result once it ended
  // (a pull past kPullTimeoutSeconds is killed and fails).
  std::optional<PullResult> PollPull(const std::string& id);
  // Kills `id`'s pull, if any (its pod stopped or was deleted).
  void CancelPull(const std::string& id);
  bool Pulling(const std::string& id) const { return pulls_.count(id) != 0; }
  static constexpr double kPullTimeoutSeconds = 30 * 60;

  // The kubelet's reason for process `id` that ended with `exit_code`, from its log;
  // for 137 (SIGKILL), OOMKilled when the kernel killed the container at its memory
  // limit: conmon's `oom` file in the pod's directory (podman's working directory),
  // else podman's State.OOMKilled (`podman inspect`: it needs the container, so call
  // this before Exited; it runs to its end, a fraction of a second, once per
  // SIGKILLed container).
  std::optional<PodmanFailure> ExitReason(const std::string& id, int exit_code,
                                          const std::string& log_path);

  // The pod is being stopped with `grace_seconds`.
  void Stop(const std::string& id, double grace_seconds);
  // Its process ended: its container is removed (named in `process_dir` when this
  // server did not start it).
  void Exited(const std::string& id, const std::string& process_dir);

  // Spawns what Stop/Exited queued and reaps earlier spawns; the first call removes
  // muster's containers whose process is not in `running` (left by a killed server).
  void Run(const ProcessSupervisor& processes);

 private:
  PodmanSettings settings_;
  std::map<std::string, std::string> names_;  // process id -> its latest container
  std::vector<std::vector<std::string>> queued_;
  std::vector<pid_t> spawned_;
  bool collected_ = false;
  struct Pull {
    pid_t pid = -1;
    int fd = -1;
    std::string image;
    std::string output;
    double started = 0;  // steady seconds
    std::optional<PullResult> failed_to_start;
  };
  std::map<std::string, Pull> pulls_;  // by process id
};

}  // namespace muster::server
