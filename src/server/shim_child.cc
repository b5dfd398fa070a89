// The pod process between fork and exec (shim_plan.h): joins its cgroup, enters
// private mount and UTS namespaces, mounts what the pod sees, drops to its owner's
// credentials, changes to its working directory and execs. Async-signal-safe only.
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/async_safe.h"
#include "server/process_launch.h"
#include "server/shim_plan.h"

namespace muster::server::shim {
namespace {

using async_safe::WriteFailure;

[[noreturn]] void Fail(int fd, const char* what, const char* subject, int error) {
  WriteFailure(fd, what, subject, error);
  ::_exit(127);
}

// mkdir -p of `path` (its parents only when `parents_only`); 0 or errno.
int MakeDirs(const char* path, bool parents_only, mode_t mode) {
  char buf[PATH_MAX];
  size_t len = async_safe::Strlen(path);
  if (len == 0 || len >= sizeof(buf)) return ENAMETOOLONG;
  for (size_t i = 0; i <= len; ++i) buf[i] = path[i];
  for (size_t i = 1; i <= len; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    if (buf[i] == '\0' && parents_only) break;
    char saved = buf[i];
    buf[i] = '\0';
    if (::mkdir(buf, mode) != 0 && errno != EEXIST) return errno;
    buf[i] = saved;
  }
  return 0;
}

// "/proc/self/fd/N" for a bind source opened before the mounts.
void FdPath(int fd, char* out) {
  const char* prefix = "/proc/self/fd/";
  size_t len = 0;
  for (const char* p = prefix; *p != '\0'; ++p) out[len++] = *p;
  async_safe::AppendInt(out, &len, fd);
  out[len] = '\0';
}

// `base` + `suffix` into `out` (PATH_MAX); false when too long.
bool JoinPath(const char* base, const char* suffix, char* out) {
  size_t len = 0;
  for (const char* p : {base, suffix}) {
    for (; *p != '\0'; ++p) {
      if (len + 1 >= PATH_MAX) return false;
      out[len++] = *p;
    }
  }
  out[len] = '\0';
  return true;
}

void ApplyOverlay(const Mount& m, int out) {
  char upper[PATH_MAX], work[PATH_MAX];
  if (!JoinPath(m.source, "/u", upper) || !JoinPath(m.source, "/w", work)) {
    Fail(out, "cannot prepare an overlay for", m.target, ENAMETOOLONG);
  }
  for (const char* dir : {upper, work}) {
    if (int error = MakeDirs(dir, false, 0755); error != 0) {
      Fail(out, "cannot create the overlay's directory", dir, error);
    }
  }
  if (::mount("overlay", m.target, "overlay", 0, m.options) != 0) {
    Fail(out, "cannot mount an overlay on", m.target, errno);
  }
}

void ApplyMount(const Plan& plan, int i, int out) {
  const Mount& m = plan.mounts[i];
  if (m.kind == static_cast<int>(MountStep::Kind::kOverlay)) return ApplyOverlay(m, out);
  if (m.create_target) {
    int error = MakeDirs(m.target, m.target_is_file, 0755);
    if (error == 0 && m.target_is_file) {
      int fd = ::open(m.target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EISDIR) error = errno;
      if (fd >= 0) ::close(fd);
    }
    if (error != 0) Fail(out, "cannot create mount point", m.target, error);
  }
  if (m.kind == static_cast<int>(MountStep::Kind::kTmpfs)) {
    const char* data = m.options[0] != '\0' ? m.options : "mode=0755,size=1m";
    if (::mount("tmpfs", m.target, "tmpfs", MS_NOSUID | MS_NODEV, data) != 0) {
      Fail(out, "cannot mount a tmpfs on", m.target, errno);
    }
    return;
  }
  char source[40];
  FdPath(plan.mount_fds[i], source);
  if (::mount(source, m.target, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    Fail(out, "cannot mount", m.target, errno);
  }
  if (m.read_only &&
      ::mount(nullptr, m.target, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
              nullptr) != 0) {
    Fail(out, "cannot make read-only", m.target, errno);
  }
}

void EnterNamespaces(const Plan& plan, int out) {
  bool uts = plan.hostname != nullptr && plan.hostname[0] != '\0';
  int flags = (plan.private_mounts ? CLONE_NEWNS : 0) | (uts ? CLONE_NEWUTS : 0);
  if (flags == 0) return;
  if (::unshare(flags) != 0)
    Fail(out, "cannot create the pod's namespaces for", plan.executable, errno);
  if (uts && ::sethostname(plan.hostname, async_safe::Strlen(plan.hostname)) != 0) {
    Fail(out, "cannot set hostname", plan.hostname, errno);
  }
  if (!plan.private_mounts) return;
  // Nothing mounted here may propagate back to the machine.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    Fail(out, "cannot make mounts private for", plan.executable, errno);
  }
  // Sources first: a later tmpfs (over the data directory) must not hide them.
  for (int i = 0; i < plan.mount_count; ++i) {
    plan.mount_fds[i] = -1;
    if (plan.mounts[i].kind != static_cast<int>(MountStep::Kind::kBind)) continue;
    plan.mount_fds[i] = ::open(plan.mounts[i].source, O_PATH | O_CLOEXEC);
    if (plan.mount_fds[i] < 0) Fail(out, "cannot open volume source", plan.mounts[i].source, errno);
  }
  for (int i = 0; i < plan.mount_count; ++i) ApplyMount(plan, i, out);
  for (int i = 0; i < plan.mount_count; ++i) {
    if (plan.mount_fds[i] >= 0) ::close(plan.mount_fds[i]);
  }
}

void DropPrivileges(const Plan& plan, int out) {
  if (plan.set_credentials) {
    if (::setgroups(static_cast<size_t>(plan.group_count), plan.groups) != 0) {
      Fail(out, "cannot set supplementary groups for", plan.executable, errno);
    }
    if (::setgid(plan.gid) != 0) Fail(out, "cannot set the group id for", plan.executable, errno);
    if (::setuid(plan.uid) != 0) Fail(out, "cannot set the user id for", plan.executable, errno);
    // setuid to a non-root uid from root drops every capability; check it took.
    if (plan.uid != 0 && (::setuid(0) == 0 || ::getuid() != plan.uid)) {
      Fail(out, "could not drop root privileges for", plan.executable, EPERM);
    }
  }
  if (plan.no_new_privs && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    Fail(out, "cannot set no_new_privs for", plan.executable, errno);
  }
}

}  // namespace

void RunChild(const Plan& plan, int out_fd, int go_fd) {
  ::setpgid(0, 0);
  ::umask(022);  // a container's default, whatever the server's (mount points too)
  ::dup2(plan.null_fd, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  const int out = STDERR_FILENO;
  // Into the pod's cgroup before anything else: every descendant inherits it.
  for (int i = 0; i < plan.cgroup_count; ++i) {
    int error = async_safe::WriteFile(plan.cgroup_procs[i], "0");
    if (error != 0) Fail(out, "cannot join cgroup", plan.cgroup_procs[i], error);
  }
  EnterNamespaces(plan, out);
  DropPrivileges(plan, out);
  // As the pod's user: a workingDir it may not enter fails here, as in a container.
  if (::chdir(plan.working_dir) != 0) {
    int error = errno;
    if (error == ENOENT && plan.create_working_dir &&
        MakeDirs(plan.working_dir, false, 0755) == 0 && ::chdir(plan.working_dir) == 0) {
      error = 0;
    }
    if (error != 0) Fail(out, "cannot change to working directory", plan.working_dir, error);
  }
  // Not before the server recorded the process (its state file is durable): a
  // server killed before that would not know it ran, and would run the pod again.
  char go = 0;
  ssize_t got;
  while ((got = ::read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1) ::_exit(127);
  // Dispositions are already default (the shim reset them); unblocking delivers a
  // TERM that arrived since fork.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(plan.executable, plan.argv, plan.envp);
  Fail(out, "cannot execute", plan.executable, errno);
}

}  // namespace muster::server::shim
