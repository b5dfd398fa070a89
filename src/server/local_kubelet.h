// The local executor and what it runs on, built from `muster serve`'s kubelet flags:
// the process supervisor with the container log caps, per-pod cgroups when this
// machine has them (and muster runs as root), the owner -> account map, and the
// hostPath policy. Isolation (namespaces, owners' accounts, the private data
// directory) needs root; without it pods run as the server's own account with a
// warning at start.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/local_executor.h"
#include "server/object_store.h"
#include "server/pod_exec.h"
#include "server/process_supervisor.h"

namespace muster::server {

struct KubeletOptions {
  std::string user_map_file;                    // --user-map
  std::vector<std::string> host_path_prefixes;  // --host-path-prefix (repeatable)
  std::string container_log_max_size = "10Mi";  // --container-log-max-size (kubelet's default)
  int32_t container_log_max_files = 5;          // --container-log-max-files (kubelet's default)
  std::string container_runtime = "none";       // --container-runtime: none, podman, auto
  std::string image_pull_backoff = "10s,300s";  // --image-pull-backoff: INITIAL,MAX
};

// "INITIAL,MAX" (durations such as 10s, 5m, 500ms) -> the back-off of image pulls;
// InvalidArgument naming --image-pull-backoff unless 0 < INITIAL <= MAX.
Result<ImagePullBackOffSettings> ParseImagePullBackOff(const std::string& text);

// Validates the options (a quantity >= 16Ki, 2..100 files, a readable user map).
Result<SupervisorOptions> MakeSupervisorOptions(const KubeletOptions& options,
                                                const std::string& data_dir);

struct LocalKubelet {
  std::unique_ptr<ProcessSupervisor> processes;
  std::unique_ptr<LocalExecutor> executor;
  std::unique_ptr<PodExec> exec;  // `kubectl exec` into its pods
};

// Builds the supervisor (pods under <data_dir>/pods) and the executor. Makes the data
// directory private (0700). Describes what it set up on `log`.
Result<LocalKubelet> MakeLocalKubelet(ObjectStore& store, const std::string& data_dir,
                                      const KubeletOptions& options, std::ostream& log);

}  // namespace muster::server
