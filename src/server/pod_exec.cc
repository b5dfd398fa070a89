#include "server/pod_exec.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "control/json_fields.h"
#include "server/auth/identity.h"
#include "server/exec_protocol.h"
#include "server/http_parser.h"
#include "server/pod_log.h"
#include "server/pod_paths.h"
#include "server/process_supervisor.h"
#include "server/websocket.h"

namespace muster::server {
namespace {

using nlohmann::json;

// A command line longer than this (all arguments together) is refused: a URL carries
// it, and the kubelet's own request is bounded the same way by its server.
constexpr size_t kMaxCommandBytes = 64 << 10;

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::vector<std::string> InitContainerNames(const json& pod) {
  std::vector<std::string> names;
  const json* spec = pod.contains("spec") ? &pod["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object() || !spec->contains("initContainers")) return names;
  const json& init = (*spec)["initContainers"];
  if (!init.is_array()) return names;
  for (const auto& c : init) {
    if (c.is_object() && c.contains("name") && c["name"].is_string()) names.push_back(c["name"]);
  }
  return names;
}

std::string WorkingDirOf(const json& pod) {
  const json* spec = pod.contains("spec") ? &pod["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object() || !spec->contains("containers")) return "";
  const json& containers = (*spec)["containers"];
  if (!containers.is_array() || containers.empty() || !containers[0].is_object()) return "";
  auto it = containers[0].find("workingDir");
  return it != containers[0].end() && it->is_string() ? it->get<std::string>() : "";
}

// Checks the WebSocket upgrade and picks its protocol; the error otherwise.
Result<std::string> UpgradeProtocol(const ApiRequest::Upgrade& u) {
  if (u.protocol.starts_with("spdy")) {
    return InvalidArgument(
        "muster serve speaks exec over WebSocket only (v5.channel.k8s.io, v4.channel.k8s.io), "
        "not SPDY: use kubectl 1.30 or newer (or a client with WebSocket remote commands)");
  }
  if (u.protocol != "websocket") {
    return InvalidArgument(
        "exec needs its connection upgraded to a WebSocket (Connection: Upgrade, Upgrade: "
        "websocket) speaking v5.channel.k8s.io or v4.channel.k8s.io");
  }
  if (u.version != "13") {
    return InvalidArgument("Sec-WebSocket-Version: \"" + u.version + "\": only 13 is served");
  }
  if (!websocket::ValidKey(u.key)) {
    return InvalidArgument("Sec-WebSocket-Key: not the base64 of 16 bytes");
  }
  auto protocol = exec_protocol::ChooseProtocol(u.protocols);
  if (!protocol) {
    return InvalidArgument("Sec-WebSocket-Protocol: none of \"" + u.protocols +
                           "\" is served; muster serve speaks v5.channel.k8s.io and "
                           "v4.channel.k8s.io");
  }
  return *protocol;
}

}  // namespace

std::optional<PodExecTarget> MatchPodExecPath(const std::string& path) {
  return MatchPodSubresourcePath(path, "exec");
}

Result<ExecRequest> ParseExecQuery(std::string_view query_string) {
  ExecRequest r;
  r.streams.out = false;
  r.streams.err = false;
  size_t command_bytes = 0;
  for (auto& [key, value] : ParseQueryPairs(query_string)) {
    if (key == "command") {
      command_bytes += value.size() + 1;
      if (command_bytes > kMaxCommandBytes) {
        return InvalidArgument("command: exceeds " + std::to_string(kMaxCommandBytes) + " bytes");
      }
      r.command.push_back(std::move(value));
    } else if (key == "container") {
      r.container = std::move(value);
    } else if (key == "stdin") {
      r.streams.in = IsTrueParam(value);
    } else if (key == "stdout") {
      r.streams.out = IsTrueParam(value);
    } else if (key == "stderr") {
      r.streams.err = IsTrueParam(value);
    } else if (key == "tty") {
      r.streams.tty = IsTrueParam(value);
    }
  }
  if (!r.streams.in && !r.streams.out && !r.streams.err) {
    return InvalidArgument("you must specify at least 1 of stdin, stdout, stderr");
  }
  if (r.command.empty() || r.command[0].empty()) {
    return InvalidArgument("you must specify at least one command for the container");
  }
  for (const auto& arg : r.command) {
    if (arg.find('\0') != std::string::npos) return InvalidArgument("command: contains a NUL");
  }
  // A terminal carries stdout and stderr together (the kubelet's rule).
  if (r.streams.tty) r.streams.err = false;
  return r;
}

bool PodExec::Acquire() {
  if (++sessions_ > config_.max_sessions) {
    --sessions_;
    return false;
  }
  return true;
}

Result<ExecPlan> PodExec::Plan(const std::string& ns, const std::string& name,
                               const std::string& working_dir, const ExecRequest& request) const {
  if (config_.processes == nullptr) {
    return FailedPrecondition(
        "pods of the emulated executor run no processes (muster serve --executor emulated)");
  }
  const std::string id = PodProcessId(ns, name);
  const auto target = config_.processes->ExecTarget(id);
  if (!target) return FailedPrecondition("its container is not running");
  ExecPlan plan;
  if (!config_.podman.empty()) {
    // The container runtime's own exec: the container's user, environment and view.
    std::ifstream in(PodDir(config_.data_dir, ns, name) + "/container.name");
    std::string container;
    if (!std::getline(in, container) || container.empty()) {
      return FailedPrecondition("its container is not running");
    }
    plan.argv = {config_.podman, "exec"};
    if (request.streams.in) plan.argv.push_back("--interactive");
    if (request.streams.tty) plan.argv.push_back("--tty");
    plan.argv.push_back(container);
    plan.argv.insert(plan.argv.end(), request.command.begin(), request.command.end());
    plan.env = config_.podman_env;
    return plan;
  }
  auto identity = ReadProcessIdentity(target->pid, target->start_ticks);
  if (!identity.ok()) return FailedPrecondition("its container is not running");
  plan.argv = request.command;
  plan.env = std::move(identity->env);
  // As the executor starts the container: a relative workingDir is in the pod's work
  // directory.
  const std::string work = PodDir(config_.data_dir, ns, name) + "/work";
  plan.working_dir = working_dir.starts_with("/") ? working_dir
                     : working_dir.empty()        ? work
                                                  : work + "/" + working_dir;
  plan.namespaces_of = target->pid;
  plan.namespaces_of_start_ticks = target->start_ticks;
  plan.cgroup_procs = target->cgroup_procs;
  if (config_.root) plan.credentials = identity->credentials;
  plan.no_new_privs = identity->no_new_privs;
  return plan;
}

ApiResult HandlePodExec(ObjectStore& store, PodExec* exec, const PodExecTarget& target,
                        const ApiRequest& request) {
  if (request.method != "GET" && request.method != "POST") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  auto pod = store.Get({"pods", target.namespace_, target.name});
  if (!pod.ok()) return ErrorResponse(FromStatus(pod.status(), "pods", "", target.name));
  auto parsed = ParseExecQuery(request.query_string);
  if (!parsed.ok()) return ErrorResponse(BadRequest(parsed.status().message()));
  ExecRequest& r = *parsed;

  // The container, as kube-apiserver resolves it.
  const std::vector<std::string> containers = PodContainerNames(*pod);
  const std::vector<std::string> init = InitContainerNames(*pod);
  if (r.container.empty()) {
    if (containers.size() != 1) {
      std::string message = "a container name must be specified for pod " + target.name;
      if (!containers.empty()) message += ", choose one of: [" + JoinNames(containers) + "]";
      if (!init.empty()) message += " or one of the init containers: [" + JoinNames(init) + "]";
      return ErrorResponse(BadRequest(message));
    }
    r.container = containers.front();
  }
  const bool known =
      std::find(containers.begin(), containers.end(), r.container) != containers.end() ||
      std::find(init.begin(), init.end(), r.container) != init.end();
  if (!known) {
    return ErrorResponse(
        BadRequest("container " + r.container + " is not valid for pod " + target.name));
  }
  if (containers.empty() || r.container != containers.front()) {
    return ErrorResponse(BadRequest("container " + r.container + " of pod " + target.name +
                                    " is not run by muster serve (its pods run their first "
                                    "container only: docs/containers.md)"));
  }
  if (control::StringField(control::ObjectField(*pod, "spec"), "nodeName").empty()) {
    return ErrorResponse(BadRequest("pod " + target.name + " does not have a host assigned"));
  }
  const std::string phase = control::StringField(control::ObjectField(*pod, "status"), "phase");
  if (phase == "Succeeded" || phase == "Failed") {
    return ErrorResponse(
        BadRequest("cannot exec into a container in a completed pod; current phase is " + phase));
  }
  if (exec == nullptr) {
    return ErrorResponse(BadRequest("this server runs no pods: exec is not available"));
  }
  if (!exec->Acquire()) {
    return ErrorResponse(
        MakeError(429, "TooManyRequests", "too many exec sessions are open; try again later"));
  }
  auto plan = exec->Plan(target.namespace_, target.name, WorkingDirOf(*pod), r);
  // A pod runs as its owner's account: root's pods (and unowned ones, which run as
  // the server's account) run as root, which a pod's namespaces do not confine. A
  // command there is the machine's root, so only system:masters may start one
  // (namespace RBAC alone would hand root to anyone who may exec in the namespace).
  if (plan.ok() && plan->credentials && plan->credentials->uid == 0 && !request.user.name.empty() &&
      !request.user.InGroup(auth::kMastersGroup)) {
    exec->Release();
    return ErrorResponse(
        MakeError(403, "Forbidden",
                  "pods \"" + target.name +
                      "\" is forbidden: its container runs as root on this machine: only "
                      "system:masters may exec into it"));
  }
  // Last of the checks: a client that falls back to SPDY when its WebSocket is refused
  // (kubectl) then shows the refusal above, not this one.
  auto protocol = UpgradeProtocol(request.upgrade);
  if (plan.ok() && !protocol.ok()) {
    exec->Release();
    return ErrorResponse(BadRequest(protocol.status().message()));
  }
  Result<ExecProcess> process =
      plan.ok() ? StartExecProcess(*plan, r.streams) : Result<ExecProcess>(plan.status());
  if (!process.ok()) {
    exec->Release();
    if (process.status().code() == StatusCode::kFailedPrecondition) {
      return ErrorResponse(BadRequest("container " + r.container + " of pod " + target.name + ": " +
                                      process.status().message()));
    }
    return ErrorResponse(
        MakeError(500, "InternalError", "cannot start the command: " + process.status().message()));
  }
  ExecSession::Options options;
  options.protocol = *protocol;
  options.accept = websocket::AcceptValue(request.upgrade.key);
  options.command = r.command;
  return std::make_unique<ExecSession>(*process, std::move(options), [exec] { exec->Release(); });
}

}  // namespace muster::server
