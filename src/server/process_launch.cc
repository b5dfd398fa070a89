#include "server/process_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace muster::server {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// ---- async-signal-safe helpers (used between fork and exec / in the shim) ----

size_t SafeStrlen(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

void SafeWrite(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void SafeWriteString(int fd, const char* s) { SafeWrite(fd, s, SafeStrlen(s)); }

// Appends the decimal form of `value` at buf[*len]; buf must have room for 12 chars.
void AppendInt(char* buf, size_t* len, int value) {
  char digits[12];
  size_t n = 0;
  unsigned magnitude = value < 0 ? 0u - static_cast<unsigned>(value) : static_cast<unsigned>(value);
  do {
    digits[n++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0) buf[(*len)++] = '-';
  while (n > 0) buf[(*len)++] = digits[--n];
}

// strerror may allocate (locales), so the common start failures are spelled out here.
const char* SafeErrorName(int error) {
  switch (error) {
    case ENOENT:
      return "no such file or directory";
    case EACCES:
      return "permission denied";
    case ENOEXEC:
      return "exec format error";
    case ENOTDIR:
      return "not a directory";
    case ENOMEM:
      return "out of memory";
    case E2BIG:
      return "argument list too long";
    case EAGAIN:
      return "resource temporarily unavailable";
    default:
      return "error";
  }
}

// "muster: <what> <subject>: <error> (errno N)\n" to fd.
void WriteFailure(int fd, const char* what, const char* subject, int error) {
  SafeWriteString(fd, "muster: ");
  SafeWriteString(fd, what);
  SafeWriteString(fd, " ");
  SafeWriteString(fd, subject);
  SafeWriteString(fd, ": ");
  SafeWriteString(fd, SafeErrorName(error));
  char buf[32] = " (errno ";
  size_t len = SafeStrlen(buf);
  AppendInt(buf, &len, error);
  buf[len++] = ')';
  buf[len++] = '\n';
  SafeWrite(fd, buf, len);
}

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

// Everything the shim and the child touch, as plain pointers into memory prepared
// before fork.
struct ForkPlan {
  const char* executable;
  char* const* argv;
  char* const* envp;
  const char* working_dir;
  const char* dir;
  const char* exit_path;
  const char* exit_tmp_path;
  int log_fd;
  int null_fd;
  int report_fd;   // shim -> server: the child's pid, or -errno
  int release_fd;  // server -> shim: closed (or a byte) when the state is durable
  int max_fd;
};

[[noreturn]] void RunChild(const ForkPlan& plan) {
  ::setpgid(0, 0);
  ::dup2(plan.null_fd, STDIN_FILENO);
  ::dup2(plan.log_fd, STDOUT_FILENO);
  ::dup2(plan.log_fd, STDERR_FILENO);
  // Not inherited by the exec'd program either way (O_CLOEXEC); closed for clarity.
  ::close(plan.log_fd);
  ::close(plan.null_fd);
  ::close(plan.report_fd);
  ::close(plan.release_fd);
  if (::chdir(plan.working_dir) != 0) {
    WriteFailure(STDERR_FILENO, "cannot change to working directory", plan.working_dir, errno);
    ::_exit(127);
  }
  // Dispositions are already default (the shim reset them); unblocking delivers a
  // TERM that arrived since fork.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvpe(plan.executable, plan.argv, plan.envp);
  WriteFailure(STDERR_FILENO, "cannot execute", plan.executable, errno);
  ::_exit(127);
}

void WriteExitFile(const ForkPlan& plan, int status) {
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
  const char* code_key = "exit_code ";
  const char* signal_key = "\nsignal ";
  for (const char* p = code_key; *p != '\0'; ++p) buf[len++] = *p;
  AppendInt(buf, &len, exit_code);
  for (const char* p = signal_key; *p != '\0'; ++p) buf[len++] = *p;
  AppendInt(buf, &len, signal_number);
  buf[len++] = '\n';

  int fd = ::open(plan.exit_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  SafeWrite(fd, buf, len);
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
// they do not linger as zombies; descendants that left the group (setsid) and
// survive are handed to the next subreaper when the shim exits.
void ReapRemaining() {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (int round = 0; round < 100; ++round) {
    pid_t reaped;
    while ((reaped = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (reaped < 0 && errno != EINTR) return;  // ECHILD: nothing left
    ::nanosleep(&tick, nullptr);
  }
}

[[noreturn]] void RunShim(const ForkPlan& plan) {
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

  pid_t child = ::fork();
  if (child == 0) RunChild(plan);
  if (child < 0) {
    int error = errno;
    WriteFailure(plan.log_fd, "cannot fork", plan.executable, error);
    int report = -error;
    SafeWrite(plan.report_fd, reinterpret_cast<const char*>(&report), sizeof(report));
    ::_exit(127);
  }
  ::setpgid(child, child);  // also here, so the group exists before the server signals it
  ::close(plan.log_fd);
  ::close(plan.null_fd);
  int report = child;
  SafeWrite(plan.report_fd, reinterpret_cast<const char*>(&report), sizeof(report));
  ::close(plan.report_fd);

  char byte;
  while (::read(plan.release_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(plan.release_fd);

  // waitpid(-1): orphans of the job are reparented to the shim (subreaper) and are
  // reaped here as they die instead of piling up as zombies.
  int status = 0;
  bool have_status = false;
  while (true) {
    int st = 0;
    pid_t reaped = ::waitpid(-1, &st, 0);
    if (reaped == child) {
      status = st;
      have_status = true;
      break;
    }
    if (reaped < 0 && errno != EINTR) break;
  }
  ::kill(-child, SIGKILL);  // the rest of the group: torch workers, background jobs
  // Without a status there is nothing true to record: the server reports it lost.
  if (have_status) WriteExitFile(plan, status);
  ReapRemaining();
  ::_exit(0);
}

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

  int log_fd = AboveStdio(
      ::open(launch.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644));
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
  ForkPlan plan{launch.executable.c_str(),
                argv.data(),
                envp.data(),
                launch.working_dir.c_str(),
                launch.dir.c_str(),
                exit_path.c_str(),
                exit_tmp_path.c_str(),
                log_fd,
                null_fd,
                report[1],
                release[0],
                max_fd};

  // Block every signal across fork so the shim never runs one of the server's
  // handlers; the parent restores its mask right after.
  sigset_t all;
  sigset_t saved;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  pid_t shim = ::fork();
  if (shim == 0) RunShim(plan);
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
      return Internal("cannot fork " + launch.executable + ": " + Errno(-child));
    }
    return Internal("the shim for " + launch.executable + " died before starting it");
  }
  return StartedShim{shim, child, release[1]};
}

void ReleaseShim(StartedShim& shim) {
  if (shim.release_fd >= 0) ::close(shim.release_fd);
  shim.release_fd = -1;
}

}  // namespace muster::server
