#include "server/exec_process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

#include "server/async_safe.h"
#include "server/process_handle.h"

namespace muster::server {
namespace {

// An environment read from /proc larger than this is not taken whole (ARG_MAX-sized).
constexpr size_t kMaxEnvironBytes = 2 << 20;

struct ExecFd {
  int fd = -1;
  ~ExecFd() {
    if (fd >= 0) ::close(fd);
  }
  int Release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// Everything the child touches, prepared before the fork.
struct ChildPlan {
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* path_env = nullptr;  // the value of PATH in envp (or a default)
  const char* working_dir = "/";
  std::vector<const char*> cgroup_procs;
  int mnt_ns = -1;
  int uts_ns = -1;
  const Credentials* credentials = nullptr;
  bool no_new_privs = false;
  int in = -1, out = -1, err = -1;  // the child's ends
  int null_fd = -1;
  bool tty = false;
};

constexpr char kExecDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

[[noreturn]] void FailExec(const char* what, const char* subject, int error) {
  async_safe::WriteFailure(STDERR_FILENO, what, subject, error);
  ::_exit(127);
}

// execve of argv[0] along PATH, as execvp does (without allocating). Returns the most
// telling errno when nothing could be executed.
int ExecAlongPath(const ChildPlan& plan) {
  const char* file = plan.argv[0];
  bool has_slash = false;
  for (const char* p = file; *p != '\0'; ++p) has_slash |= *p == '/';
  if (has_slash) {
    ::execve(file, plan.argv.data(), plan.envp.data());
    return errno;
  }
  const size_t file_len = async_safe::Strlen(file);
  int error = ENOENT;
  const char* dir = plan.path_env;
  while (true) {
    const char* end = dir;
    while (*end != '\0' && *end != ':') ++end;
    char path[PATH_MAX];
    size_t len = static_cast<size_t>(end - dir);
    if (len == 0) {
      path[0] = '.';
      len = 1;
    } else if (len < PATH_MAX) {
      for (size_t i = 0; i < len; ++i) path[i] = dir[i];
    }
    if (len + 1 + file_len < PATH_MAX) {
      path[len] = '/';
      for (size_t i = 0; i <= file_len; ++i) path[len + 1 + i] = file[i];
      ::execve(path, plan.argv.data(), plan.envp.data());
      // Found but not executable is remembered; a later directory may still have it.
      if (errno == EACCES) error = EACCES;
      if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) return errno;
    }
    if (*end == '\0') break;
    dir = end + 1;
  }
  return error;
}

[[noreturn]] void RunExecChild(const ChildPlan& plan) {
  ::setsid();
  if (plan.tty) {
    ::ioctl(plan.in, TIOCSCTTY, 0);
    ::dup2(plan.in, STDIN_FILENO);
    ::dup2(plan.in, STDOUT_FILENO);
    ::dup2(plan.in, STDERR_FILENO);
  } else {
    ::dup2(plan.in >= 0 ? plan.in : plan.null_fd, STDIN_FILENO);
    ::dup2(plan.out >= 0 ? plan.out : plan.null_fd, STDOUT_FILENO);
    ::dup2(plan.err >= 0 ? plan.err : plan.null_fd, STDERR_FILENO);
  }
  // The server blocks SIGINT/SIGTERM and ignores SIGPIPE; a command gets defaults.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
    ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (const char* procs : plan.cgroup_procs) {
    if (int error = async_safe::WriteFile(procs, "0"); error != 0) {
      FailExec("cannot join cgroup", procs, error);
    }
  }
  if (plan.mnt_ns >= 0 && ::setns(plan.mnt_ns, CLONE_NEWNS) != 0) {
    FailExec("cannot enter the pod's mount namespace for", plan.argv[0], errno);
  }
  if (plan.uts_ns >= 0 && ::setns(plan.uts_ns, CLONE_NEWUTS) != 0) {
    FailExec("cannot enter the pod's UTS namespace for", plan.argv[0], errno);
  }
  if (const Credentials* c = plan.credentials) {
    if (::setgroups(c->groups.size(), c->groups.data()) != 0) {
      FailExec("cannot set supplementary groups for", plan.argv[0], errno);
    }
    if (::setgid(c->gid) != 0) FailExec("cannot set the group id for", plan.argv[0], errno);
    if (::setuid(c->uid) != 0) FailExec("cannot set the user id for", plan.argv[0], errno);
    if (c->uid != 0 && (::setuid(0) == 0 || ::getuid() != c->uid)) {
      FailExec("could not drop root privileges for", plan.argv[0], EPERM);
    }
  }
  if (plan.no_new_privs && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    FailExec("cannot set no_new_privs for", plan.argv[0], errno);
  }
  if (::chdir(plan.working_dir) != 0) (void)::chdir("/");
  ::syscall(SYS_close_range, 3U, ~0U, 0U);
  const int error = ExecAlongPath(plan);
  if (error == ENOENT) {
    // runc's words, which users search for.
    async_safe::WriteString(STDERR_FILENO, "exec: \"");
    async_safe::WriteString(STDERR_FILENO, plan.argv[0]);
    async_safe::WriteString(STDERR_FILENO, "\": executable file not found in $PATH\n");
    ::_exit(127);
  }
  async_safe::WriteFailure(STDERR_FILENO, "cannot execute", plan.argv[0], error);
  ::_exit(126);
}

// The namespace of `kind` of `process` when it is not the server's (-1 when it is);
// FailedPrecondition when it cannot be read (the process is gone, or a zombie): the
// command must never run in the server's view instead of the pod's.
Result<int> OpenNamespaceIfOther(const ProcessHandle& process, const char* kind) {
  const std::string name = std::string("ns/") + kind;
  const std::string ours = "/proc/self/" + name;
  ExecFd theirs;
  theirs.fd = process.OpenFile(name.c_str());
  struct stat a {
  }, b{};
  if (theirs.fd < 0 || ::fstat(theirs.fd, &a) != 0 || ::stat(ours.c_str(), &b) != 0) {
    return FailedPrecondition("the container's process has ended");
  }
  if (a.st_ino == b.st_ino && a.st_dev == b.st_dev) return -1;
  return theirs.Release();
}

Status ExecPipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  return Status::Ok();
}

}  // namespace

void ExecProcess::Close() {
  for (int* fd : {&in, &out, &err}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

Result<ExecProcess> StartExecProcess(const ExecPlan& plan, const ExecStreams& streams) {
  if (plan.argv.empty() || plan.argv[0].empty()) return InvalidArgument("no command to run");
  ChildPlan child;
  std::vector<std::string> argv = plan.argv;
  std::vector<std::string> env = plan.env;
  for (auto& a : argv) child.argv.push_back(a.data());
  child.argv.push_back(nullptr);
  child.path_env = kExecDefaultPath;
  for (auto& e : env) {
    child.envp.push_back(e.data());
    if (e.starts_with("PATH=")) child.path_env = e.data() + 5;
  }
  child.envp.push_back(nullptr);
  child.working_dir = plan.working_dir.empty() ? "/" : plan.working_dir.c_str();
  for (const auto& p : plan.cgroup_procs) child.cgroup_procs.push_back(p.c_str());
  child.credentials = plan.credentials ? &*plan.credentials : nullptr;
  child.no_new_privs = plan.no_new_privs;

  ExecFd mnt, uts, null_fd;
  if (plan.namespaces_of > 0) {
    auto process = ProcessHandle::Open(plan.namespaces_of, plan.namespaces_of_start_ticks);
    if (!process) return FailedPrecondition("the container's process has ended");
    auto m = OpenNamespaceIfOther(*process, "mnt");
    if (!m.ok()) return m.status();
    mnt.fd = *m;
    auto u = OpenNamespaceIfOther(*process, "uts");
    if (!u.ok()) return u.status();
    uts.fd = *u;
  }
  child.mnt_ns = mnt.fd;
  child.uts_ns = uts.fd;
  null_fd.fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd.fd < 0) return Internal(std::string("/dev/null: ") + std::strerror(errno));
  child.null_fd = null_fd.fd;

  // Parent and child ends.
  ExecFd p_in, p_out, p_err, c_in, c_out, c_err;
  if (streams.tty) {
    int master = -1, slave = -1;
    if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
      return Internal(std::string("cannot open a pseudo-terminal: ") + std::strerror(errno));
    }
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
    ::fcntl(slave, F_SETFD, FD_CLOEXEC);
    p_out.fd = master;
    c_in.fd = slave;
    child.tty = true;
    child.in = slave;
  } else {
    int fds[2];
    if (streams.in) {
      if (Status s = ExecPipe(fds); !s.ok()) return s;
      c_in.fd = fds[0];
      p_in.fd = fds[1];
    }
    if (streams.out) {
      if (Status s = ExecPipe(fds); !s.ok()) return s;
      p_out.fd = fds[0];
      c_out.fd = fds[1];
    }
    if (streams.err) {
      if (Status s = ExecPipe(fds); !s.ok()) return s;
      p_err.fd = fds[0];
      c_err.fd = fds[1];
    }
    child.in = c_in.fd;
    child.out = c_out.fd;
    child.err = c_err.fd;
  }
  const pid_t pid = ::fork();
  if (pid < 0) return Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) RunExecChild(child);
  ExecProcess process;
  process.pid = pid;
  process.tty = streams.tty;
  if (streams.tty) {
    process.out = p_out.Release();
    process.in = streams.in ? ::fcntl(process.out, F_DUPFD_CLOEXEC, 0) : -1;
  } else {
    process.in = p_in.Release();
    process.out = p_out.Release();
    process.err = p_err.Release();
  }
  for (int fd : {process.in, process.out, process.err}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return process;
}

Result<ProcessIdentity> ReadProcessIdentity(pid_t pid, uint64_t start_ticks) {
  const std::string gone = "process " + std::to_string(pid) + " is gone";
  auto process = ProcessHandle::Open(pid, start_ticks);
  if (!process) return NotFound(gone);
  auto status = process->Read("status", 64 << 10);
  if (!status) return NotFound(gone);
  ProcessIdentity id;
  bool have_uid = false, have_gid = false;
  std::istringstream lines(*status);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line.substr(line.find(':') + 1));
    if (line.starts_with("Uid:")) {
      // Real, effective, saved, filesystem: the effective one is who it runs as.
      uint64_t real = 0, effective = 0;
      have_uid = static_cast<bool>(fields >> real >> effective);
      id.credentials.uid = static_cast<uid_t>(effective);
    } else if (line.starts_with("Gid:")) {
      uint64_t real = 0, effective = 0;
      have_gid = static_cast<bool>(fields >> real >> effective);
      id.credentials.gid = static_cast<gid_t>(effective);
    } else if (line.starts_with("Groups:")) {
      for (uint64_t g = 0; fields >> g;) id.credentials.groups.push_back(static_cast<gid_t>(g));
    } else if (line.starts_with("State:")) {
      std::string state;
      fields >> state;
      if (state == "Z" || state == "X") {
        return NotFound("process " + std::to_string(pid) + " has ended");
      }
    } else if (line.starts_with("NoNewPrivs:")) {
      int v = 0;
      fields >> v;
      id.no_new_privs = v != 0;
    }
  }
  if (!have_uid || !have_gid) return NotFound(gone);
  auto all = process->Read("environ", kMaxEnvironBytes);
  if (!all) return NotFound(gone);
  size_t pos = 0;
  while (pos < all->size()) {
    size_t end = all->find('\0', pos);
    if (end == std::string::npos) break;  // cut at the bound: the partial one is dropped
    if (end > pos) id.env.push_back(all->substr(pos, end - pos));
    pos = end + 1;
  }
  return id;
}

}  // namespace muster::server
