#include "server/process_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "server/async_safe.h"
#include "server/shim_plan.h"

namespace muster::server {
namespace {

using async_safe::WriteAll;
using async_safe::WriteFailure;

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// ---- the shim (async-signal-safe from here to StartShim) ----

// Closes every descriptor >= 3 except those in keep (sorted ascending).
void CloseAllExcept(const int* keep, int keep_count, int max_fd) {
  int next = 3;
  for (int i = 0; i <= keep_count; ++i) {
    int stop = i < keep_count ? keep[i] - 1 : max_fd;  // close [next, stop]
    if (stop >= next) {
      if (::syscall(SYS_close_range, next, i < keep_count ? stop : ~0u, 0) != 0) {
        for (int fd = next; fd <= stop; ++fd) ::close(fd);  // kernel without close_range
      }
    }
    if (i < keep_count) next = keep[i] + 1;
  }
}

void WriteExitFile(const shim::Plan& plan, int status) {
  int exit_code = 0;
  int signal_number = 0;
  if (WIFSIGNALED(status)) {
    signal_number = WTERMSIG(status);
    exit_code = 128 + signal_number;
  } else if (WIFEXITED(status)) {
    exit_code = WEXITSTATUS(status);
  }
  char buf[64];
  size_t len = 0;
  for (const char* p = "exit_code "; *p != '\0'; ++p) buf[len++] = *p;
  async_safe::AppendInt(buf, &len, exit_code);
  for (const char* p = "\nsignal "; *p != '\0'; ++p) buf[len++] = *p;
  async_safe::AppendInt(buf, &len, signal_number);
  buf[len++] = '\n';

  int fd = ::open(plan.exit_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  WriteAll(fd, buf, len);
  ::fsync(fd);
  ::close(fd);
  ::rename(plan.exit_tmp_path, plan.exit_path);
  int dir_fd = ::open(plan.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

// Reaps the group members just killed (and other orphans) for up to a second, so
// they do not linger as zombies; descendants that survive (no cgroup, setsid) are
// handed to the next subreaper when the shim exits.
void ReapRemaining() {
  const struct timespec tick = {0, 10'000'000};  // 10 ms
  for (int round = 0; round < 100; ++round) {
    pid_t reaped;
    while ((reaped = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (reaped < 0 && errno != EINTR) return;  // ECHILD: nothing left
    ::nanosleep(&tick, nullptr);
  }
}

int64_t MonotonicMillis() {
  struct timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// The live log file and its rotations (log, log.1, ... newest first): at most
// log_files files of at most log_max_bytes each, like the kubelet's container log
// manager (which rotates by size and keeps containerLogMaxFiles).
class LogWriter {
 public:
  explicit LogWriter(const shim::Plan& plan) : plan_(plan), fd_(plan.log_fd) {}

  void Write(const char* data, size_t size) {
    while (size > 0 && fd_ >= 0) {
      size_t chunk = size;
      if (plan_.log_max_bytes > 0) {
        if (written_ >= plan_.log_max_bytes) Rotate();
        size_t room = static_cast<size_t>(plan_.log_max_bytes - written_);
        if (chunk > room) chunk = room;
      }
      if (!WriteAll(fd_, data, chunk)) return;  // disk full: output is dropped, never blocks
      written_ += static_cast<int64_t>(chunk);
      data += chunk;
      size -= chunk;
    }
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  void Rotate() {
    written_ = 0;
    if (plan_.log_files <= 1) {  // a single file: start it over
      if (::ftruncate(fd_, 0) != 0) return;
      return;
    }
    ::close(fd_);
    for (int k = plan_.log_files - 1; k >= 1; --k)
      ::rename(plan_.log_paths[k - 1], plan_.log_paths[k]);
    fd_ = ::open(plan_.log_paths[0], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  }

  const shim::Plan& plan_;
  int fd_;
  int64_t written_ = 0;
};

}  // namespace

namespace shim {

void RunShim(const Plan& plan) {
  // Signals are all blocked (inherited from StartShim): reset every disposition so
  // the child starts from defaults, and leave them blocked in the shim for good.
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof(default_action));
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);
  }
  ::setsid();  // out of the server's session: a terminal's ^C or hangup never reaches it
  ::dup2(plan.null_fd, STDIN_FILENO);
  ::dup2(plan.null_fd, STDOUT_FILENO);
  ::dup2(plan.null_fd, STDERR_FILENO);
  // The server's sockets and database must not stay open in a long-lived shim (a
  // restarted server could not bind its port again).
  int keep[4] = {plan.log_fd, plan.null_fd, plan.report_fd, plan.release_fd};
  for (int i = 1; i < 4; ++i) {
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  }
  CloseAllExcept(keep, 4, plan.max_fd);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  int report = 0;
  int out[2] = {-1, -1};
  // shim -> child: one byte once the server released the shim; the child execs only
  // then, and ends without running the command on EOF instead.
  int go[2] = {-1, -1};
  // child -> shim: never written; the child's end closes at its exec (O_CLOEXEC) or
  // its death, which is how the shim learns the child stopped being a server copy.
  int execed[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(go, O_CLOEXEC) != 0 ||
      ::pipe2(execed, O_CLOEXEC) != 0) {
    report = -errno;
    WriteAll(plan.report_fd, reinterpret_cast<const char*>(&report), sizeof(report));
    ::_exit(127);
  }
  pid_t child = ::fork();
  if (child == 0) {
    ::close(out[0]);
    ::close(go[1]);
    ::close(execed[0]);
    RunChild(plan, out[1], go[0]);
  }
  ::close(out[1]);
  ::close(go[0]);
  ::close(execed[1]);
  if (child < 0) {
    int error = errno;
    WriteFailure(plan.log_fd, "cannot fork", plan.executable, error);
    report = -error;
    WriteAll(plan.report_fd, reinterpret_cast<const char*>(&report), sizeof(report));
    ::_exit(127);
  }
  ::setpgid(child, child);  // also here, so the group exists before the server signals it
  ::close(plan.null_fd);
  report = child;
  WriteAll(plan.report_fd, reinterpret_cast<const char*>(&report), sizeof(report));
  ::close(plan.report_fd);

  // Released: the server wrote a byte once the state file was durable. EOF: the
  // server died (or gave up) before that, so no server will ever know this process:
  // it must not run the command, and leaves no exit file.
  char byte = 0;
  ssize_t released;
  while ((released = ::read(plan.release_fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  ::close(plan.release_fd);
  if (released != 1) {
    // The child has not exec'd (nor forked): it alone is to end.
    ::close(go[1]);
    ::kill(-child, SIGKILL);
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  WriteAll(go[1], &byte, 1);
  ::close(go[1]);
  // Until the exec the child writes at most one failure line (the pipe holds it), so
  // waiting here stalls no output.
  while (::read(execed[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(execed[0]);
  int marker = ::open(plan.execed_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (marker >= 0) ::close(marker);

  // SIGCHLD (blocked, so it queues) through a signalfd: the pump sleeps in poll()
  // on the output pipe and the child's exit together.
  sigset_t chld;
  ::sigemptyset(&chld);
  ::sigaddset(&chld, SIGCHLD);
  int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);

  LogWriter log(plan);
  static char buf[64 << 10];  // the shim is single-threaded
  int status = 0;
  bool have_status = false;
  bool pipe_open = true;
  int64_t drain_until = 0;  // after the child's exit: how long to wait for its output
  while (true) {
    // waitpid(-1): orphans of the pod are reparented to the shim (subreaper) and are
    // reaped here as they die instead of piling up as zombies.
    while (true) {
      int st = 0;
      pid_t reaped = ::waitpid(-1, &st, WNOHANG);
      if (reaped <= 0) break;
      if (reaped == child) {
        status = st;
        have_status = true;
        // The rest of the pod: its group (torch workers) and its cgroup (setsid
        // daemons), as a container runtime ends a container with its main process.
        ::kill(-child, SIGKILL);
        async_safe::KillCgroup(plan.cgroup_procs, plan.cgroup_count, plan.cgroup_kill, 100);
        drain_until = MonotonicMillis() + 2000;
      }
    }
    if (have_status && (!pipe_open || MonotonicMillis() >= drain_until)) break;
    struct pollfd fds[2];
    int nfds = 0;
    if (pipe_open) fds[nfds++] = {out[0], POLLIN, 0};
    if (sfd >= 0) fds[nfds++] = {sfd, POLLIN, 0};
    int timeout = -1;
    if (have_status) timeout = static_cast<int>(drain_until - MonotonicMillis());
    if (timeout < -1) timeout = 0;
    if (sfd < 0 && timeout == -1) timeout = 100;  // no signalfd: look for exits 10x a second
    int ready = ::poll(fds, static_cast<nfds_t>(nfds), timeout);
    if (ready < 0 && errno != EINTR) break;
    if (pipe_open && fds[0].revents != 0) {
      ssize_t n = ::read(out[0], buf, sizeof(buf));
      if (n > 0) {
        log.Write(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        pipe_open = false;  // every writer closed it (or it broke)
      }
    }
    if (sfd >= 0) {
      struct signalfd_siginfo info;
      while (::read(sfd, &info, sizeof(info)) > 0) {
      }
    }
  }
  ::close(out[0]);
  log.Close();
  // Without a status there is nothing true to record: the server reports it lost.
  if (have_status) WriteExitFile(plan, status);
  ReapRemaining();
  ::_exit(0);
}

}  // namespace shim

namespace {

// Moves fd to a number >= 3 (the shim rewires 0-2), keeping O_CLOEXEC.
int AboveStdio(int fd) {
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  ::close(fd);
  return moved;
}

void CloseIfOpen(int fd) {
  if (fd >= 0) ::close(fd);
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::vector<const char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  out.reserve(strings.size());
  for (const auto& s : strings) out.push_back(s.c_str());
  return out;
}

std::string Errno(int error) { return std::strerror(error); }

}  // namespace

Result<std::string> FindExecutable(const std::string& name, const std::string& path_env,
                                   const std::string& working_dir) {
  if (name.empty()) return InvalidArgument("empty command");
  if (name.find('/') != std::string::npos) {
    std::string path = name[0] == '/' ? name : working_dir + "/" + name;
    if (IsExecutableFile(path)) return name[0] == '/' ? name : path;
    return NotFound("command \"" + name + "\" is not an executable file (looked at " + path + ")");
  }
  size_t begin = 0;
  while (begin <= path_env.size()) {
    size_t end = path_env.find(':', begin);
    if (end == std::string::npos) end = path_env.size();
    std::string dir = path_env.substr(begin, end - begin);
    if (dir.empty()) dir = working_dir;  // an empty PATH element means the current directory
    std::string candidate = dir + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    begin = end + 1;
  }
  return NotFound("executable \"" + name + "\" not found in PATH (" + path_env + ")");
}

Result<StartedShim> StartShim(const ShimLaunch& launch) {
  if (launch.argv.empty()) return InvalidArgument("empty argv");
  std::vector<std::string> argv_strings = launch.argv;
  std::vector<std::string> env_strings = launch.env;
  std::vector<char*> argv = NullTerminated(argv_strings);
  std::vector<char*> envp = NullTerminated(env_strings);
  std::string exit_path = launch.dir + "/" + kExitFileName;
  std::string exit_tmp_path = launch.dir + "/" + kExitTmpFileName;
  std::string execed_path = launch.dir + "/" + kExecedFileName;
  const int32_t log_files = launch.log_max_files < 1 ? 1 : launch.log_max_files;
  std::vector<std::string> log_path_strings;
  log_path_strings.reserve(static_cast<size_t>(log_files));
  for (int32_t k = 0; k < log_files; ++k) {
    log_path_strings.push_back(k == 0 ? launch.log_path
                                      : launch.log_path + "." + std::to_string(k));
  }
  std::vector<const char*> log_paths = Pointers(log_path_strings);
  std::vector<const char*> cgroup_procs = Pointers(launch.cgroup_procs);
  std::vector<shim::Mount> mounts;
  for (const MountStep& m : launch.mounts) {
    mounts.push_back({static_cast<int>(m.kind), m.source.c_str(), m.target.c_str(), m.read_only,
                      m.target_is_file, m.create_target, m.options.c_str()});
  }
  std::vector<int> mount_fds(mounts.size(), -1);
  std::vector<gid_t> groups =
      launch.credentials ? launch.credentials->groups : std::vector<gid_t>{};

  int log_fd = AboveStdio(
      ::open(launch.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600));
  if (log_fd < 0) return Internal("cannot open log " + launch.log_path + ": " + Errno(errno));
  int null_fd = AboveStdio(::open("/dev/null", O_RDWR | O_CLOEXEC));
  int report[2] = {-1, -1};
  int release[2] = {-1, -1};
  bool pipes_ok = ::pipe2(report, O_CLOEXEC) == 0 && ::pipe2(release, O_CLOEXEC) == 0;
  int error = errno;
  for (int* fd : {&report[0], &report[1], &release[0], &release[1]}) *fd = AboveStdio(*fd);
  auto close_all = [&] {
    for (int fd : {log_fd, null_fd, report[0], report[1], release[0], release[1]}) CloseIfOpen(fd);
  };
  if (null_fd < 0 || !pipes_ok || report[0] < 0 || report[1] < 0 || release[0] < 0 ||
      release[1] < 0) {
    close_all();
    return Internal("cannot set up pipes for " + launch.executable + ": " + Errno(error));
  }

  struct rlimit files;
  int max_fd = 65535;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      files.rlim_cur < static_cast<rlim_t>(1) << 20) {
    max_fd = static_cast<int>(files.rlim_cur) - 1;
  }
  shim::Plan plan{};
  plan.executable = launch.executable.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.working_dir = launch.working_dir.c_str();
  plan.create_working_dir = launch.create_working_dir;
  plan.dir = launch.dir.c_str();
  plan.exit_path = exit_path.c_str();
  plan.exit_tmp_path = exit_tmp_path.c_str();
  plan.execed_path = execed_path.c_str();
  plan.log_paths = log_paths.data();
  plan.log_files = log_files;
  plan.log_max_bytes = launch.log_max_bytes;
  plan.cgroup_procs = cgroup_procs.data();
  plan.cgroup_count = static_cast<int>(cgroup_procs.size());
  plan.cgroup_kill = launch.cgroup_kill.empty() ? nullptr : launch.cgroup_kill.c_str();
  plan.private_mounts = launch.private_mounts;
  plan.mounts = mounts.data();
  plan.mount_count = static_cast<int>(mounts.size());
  plan.mount_fds = mount_fds.data();
  plan.hostname = launch.hostname.c_str();
  plan.set_credentials = launch.credentials.has_value();
  plan.uid = launch.credentials ? launch.credentials->uid : 0;
  plan.gid = launch.credentials ? launch.credentials->gid : 0;
  plan.groups = groups.data();
  plan.group_count = static_cast<int>(groups.size());
  plan.no_new_privs = launch.no_new_privs;
  plan.log_fd = log_fd;
  plan.null_fd = null_fd;
  plan.report_fd = report[1];
  plan.release_fd = release[0];
  plan.max_fd = max_fd;

  // Block every signal across fork so the shim never runs one of the server's
  // handlers; the parent restores its mask right after.
  sigset_t all;
  sigset_t saved;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  pid_t shim = ::fork();
  if (shim == 0) shim::RunShim(plan);
  error = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::close(log_fd);
  ::close(null_fd);
  ::close(report[1]);
  ::close(release[0]);
  if (shim < 0) {
    ::close(report[0]);
    ::close(release[1]);
    return Internal("cannot fork a shim for " + launch.executable + ": " + Errno(error));
  }

  int child = 0;
  size_t got = 0;
  while (got < sizeof(child)) {
    ssize_t n = ::read(report[0], reinterpret_cast<char*>(&child) + got, sizeof(child) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(report[0]);
  if (got < sizeof(child) || child <= 0) {
    ::close(release[1]);
    while (::waitpid(shim, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (got == sizeof(child)) {
      return Internal("cannot start " + launch.executable + ": " + Errno(-child));
    }
    return Internal("the shim for " + launch.executable + " died before starting it");
  }
  return StartedShim{shim, child, release[1]};
}

void ReleaseShim(StartedShim& shim) {
  if (shim.release_fd < 0) return;
  const char go = 1;
  // A shim that is gone already (killed) has nothing to release: EPIPE (the server
  // ignores SIGPIPE) is ignored, and Poll reports the process lost.
  while (::write(shim.release_fd, &go, 1) < 0 && errno == EINTR) {
  }
  CancelShim(shim);
}

void CancelShim(StartedShim& shim) {
  if (shim.release_fd >= 0) ::close(shim.release_fd);
  shim.release_fd = -1;
}

}  // namespace muster::server
