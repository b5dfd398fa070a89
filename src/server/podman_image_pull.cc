// PodmanRuntime: the image pull as a step of its own before `podman run`, as the
// kubelet pulls through its image manager before it creates the container. The pull
// runs in the background (its output through a non-blocking pipe) and the executor
// looks at it at each Run: a pull can take minutes and the executor's thread must
// not wait on it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "server/host_command.h"
#include "server/podman_runtime.h"

namespace muster::server {
namespace {

constexpr int kImageCheckTimeoutMs = 20'000;

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

PodmanRuntime::~PodmanRuntime() {
  while (!pulls_.empty()) CancelPull(pulls_.begin()->first);
}

std::optional<bool> PodmanRuntime::ImagePresent(const std::string& image) {
  auto result =
      RunCommand({settings_.podman, "image", "exists", "--", image}, kImageCheckTimeoutMs, Env());
  if (!result.ok() || (result->exit_code != 0 && result->exit_code != 1)) return std::nullopt;
  return result->exit_code == 0;
}

void PodmanRuntime::StartPull(const std::string& id, const std::string& image) {
  if (pulls_.count(id) != 0) return;
  Pull& pull = pulls_[id];
  pull.image = image;
  pull.started = SteadySeconds();
  auto spawned = SpawnCommandCapturing(PodmanPullArgv(settings_.podman, image), Env());
  if (!spawned.ok()) {
    pull.failed_to_start = PullResult{false, spawned.status().message(), -1};
    return;
  }
  pull.pid = spawned->pid;
  pull.fd = spawned->output_fd;
}

std::optional<PodmanRuntime::PullResult> PodmanRuntime::PollPull(const std::string& id) {
  auto it = pulls_.find(id);
  if (it == pulls_.end()) return std::nullopt;
  Pull& pull = it->second;
  if (pull.failed_to_start) {
    PullResult result = *pull.failed_to_start;
    pulls_.erase(it);
    return result;
  }
  ReadAvailable(pull.fd, pull.output);
  std::optional<int> exit_code = ReapCommandStatus(pull.pid);
  if (!exit_code && SteadySeconds() - pull.started <= kPullTimeoutSeconds) return std::nullopt;
  PullResult result;
  if (!exit_code) {
    result.error = "podman pull did not finish within " +
                   std::to_string(static_cast<int>(kPullTimeoutSeconds)) + " s";
    CancelPull(id);
    return result;
  }
  ReadAvailable(pull.fd, pull.output);
  ::close(pull.fd);
  const std::string output = std::move(pull.output);
  const std::string image = std::move(pull.image);
  pulls_.erase(it);
  if (*exit_code != 0) {
    result.error = PodmanPullError(*exit_code, output);
    return result;
  }
  result.ok = true;
  auto size = RunCommand({settings_.podman, "image", "inspect", "--format={{.Size}}", "--", image},
                         CommandOptions{kImageCheckTimeoutMs, Env(), false});
  if (size.ok() && size->exit_code == 0) {
    try {
      result.size = std::stoll(size->output);
    } catch (const std::exception&) {
      result.size = -1;
    }
  }
  return result;
}

void PodmanRuntime::CancelPull(const std::string& id) {
  auto it = pulls_.find(id);
  if (it == pulls_.end()) return;
  if (it->second.pid > 0) {
    ::kill(it->second.pid, SIGKILL);
    // SIGKILL: it ends at once; reaped here so no zombie stays.
    int status = 0;
    while (::waitpid(it->second.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (it->second.fd >= 0) ::close(it->second.fd);
  pulls_.erase(it);
}

}  // namespace muster::server
