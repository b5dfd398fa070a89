#include "server/host_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace muster::server {
namespace {

using Clock = std::chrono::steady_clock;

// stdout to `out_fd` (-1: /dev/null), stderr too when `stderr_to_out`; `env` null:
// this process's environment.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>* env,
                    int out_fd, bool stderr_to_out) {
  if (argv.empty()) return InvalidArgument("no command");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  if (out_fd >= 0 && stderr_to_out) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (env != nullptr) {
    for (const auto& e : *env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, args[0], &actions, &attr, args.data(),
                            env != nullptr ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) return Internal("cannot run " + argv[0] + ": " + std::strerror(spawned));
  return pid;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                 const std::vector<std::string>& env) {
  return RunCommand(argv, CommandOptions{timeout_ms, env, true});
}

Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const CommandOptions& options) {
  const int timeout_ms = options.timeout_ms;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Internal("pipe: " + std::string(strerror(errno)));
  auto pid =
      Spawn(argv, options.env ? &*options.env : nullptr, pipe_fds[1], options.capture_stderr);
  ::close(pipe_fds[1]);
  if (!pid.ok()) {
    ::close(pipe_fds[0]);
    return pid.status();
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto left_ms = [&] {
    return static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
  };
  CommandResult result;
  bool timed_out = false;
  char buf[4096];
  while (true) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, left_ms());
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) timed_out = true;
    if (ready <= 0) break;
    ssize_t n = ::read(pipe_fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < (1u << 20)) result.output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  pid_t waited = 0;
  // Output closed: the process is exiting; still bound the wait by the deadline.
  while (!timed_out && (waited = ::waitpid(*pid, &status, WNOHANG)) == 0) {
    if (left_ms() == 0) timed_out = true;
    if (!timed_out) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (timed_out || waited < 0) {
    ::kill(*pid, SIGKILL);
    while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    return Status(StatusCode::kUnavailable,
                  argv[0] + " did not finish within " + std::to_string(timeout_ms) + " ms");
  }
  result.exit_code = ExitCodeOf(status);
  return result;
}

Result<pid_t> SpawnCommand(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  return Spawn(argv, &env, -1, false);
}

bool ReapCommand(pid_t pid) {
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  return r != 0;  // reaped, or ECHILD
}

Result<SpawnedCommand> SpawnCommandCapturing(const std::vector<std::string>& argv,
                                             const std::vector<std::string>& env) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Internal(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  auto pid = Spawn(argv, &env, pipe_fds[1], true);
  ::close(pipe_fds[1]);
  if (!pid.ok()) {
    ::close(pipe_fds[0]);
    return pid.status();
  }
  ::fcntl(pipe_fds[0], F_SETFL, ::fcntl(pipe_fds[0], F_GETFL) | O_NONBLOCK);
  return SpawnedCommand{*pid, pipe_fds[0]};
}

void ReadAvailable(int fd, std::string& out, size_t limit) {
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: nothing more now; 0: closed
    // Past the limit the output is still drained (the child must not block on it).
    if (out.size() < limit) out.append(buf, std::min(static_cast<size_t>(n), limit - out.size()));
  }
}

std::optional<int> ReapCommandStatus(pid_t pid) {
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == 0) return std::nullopt;
  return r < 0 ? -1 : ExitCodeOf(status);
}

}  // namespace muster::server
