// `kubectl exec` against `muster serve`: GET (or POST) .../pods/{name}/exec, upgraded
// to a WebSocket speaking Kubernetes' remote-command protocol (v5.channel.k8s.io or
// v4.channel.k8s.io, exec_protocol.h), as kube-apiserver and the kubelet answer it.
// The request is checked as kube-apiserver checks it (the container named and the
// pod's; at least one stream; a command), then the command is started in the pod's
// running container as its runtime's exec would (exec_process.h): under podman by
// `podman exec`, otherwise in the pod's cgroup and namespaces as its main process's
// account and environment. RBAC: `create` on pods/exec, whichever the method
// (upstream's rule for WebSocket upgrades, request_attributes.cc).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/api_handler.h"
#include "server/exec_process.h"
#include "server/object_store.h"
#include "server/pod_paths.h"

namespace muster::server {

class ProcessSupervisor;  // server/process_supervisor.h

using PodExecTarget = PodName;
// The pod a ".../pods/{name}/exec" path names; nullopt for any other path.
std::optional<PodExecTarget> MatchPodExecPath(const std::string& path);

// What kubectl asks for in the query: command (repeated), container, stdin, stdout,
// stderr, tty. InvalidArgument with kube-apiserver's message when no command or no
// stream is asked for.
struct ExecRequest {
  std::vector<std::string> command;
  std::string container;
  ExecStreams streams;
};
Result<ExecRequest> ParseExecQuery(std::string_view query_string);

// Where serve's pods run: finds a pod's running container and plans a command in it.
class PodExec {
 public:
  struct Config {
    // The local executor's processes; nullptr: pods run no process (the emulated
    // executor), and an exec is refused saying so.
    const ProcessSupervisor* processes = nullptr;
    std::string data_dir = {};
    std::string podman = {};  // podman's path when pods run as containers, else ""
    std::vector<std::string> podman_env = {};
    bool root = false;  // the server runs as root: commands take the pod's account
    size_t max_sessions = 64;
  };
  explicit PodExec(Config config) : config_(std::move(config)) {}

  // `command` in the running container of pod ns/name; `working_dir` is the
  // container's workingDir ("" for the pod's default). FailedPrecondition when the
  // container does not run now.
  Result<ExecPlan> Plan(const std::string& ns, const std::string& name,
                        const std::string& working_dir, const ExecRequest& request) const;

  // A slot for one more session; false when max_sessions are open.
  bool Acquire();
  void Release() { --sessions_; }

 private:
  Config config_;
  std::atomic<size_t> sessions_{0};
};

// The exec subresource. `exec` nullptr: this server runs no pods (400).
ApiResult HandlePodExec(ObjectStore& store, PodExec* exec, const PodExecTarget& target,
                        const ApiRequest& request);

}  // namespace muster::server
