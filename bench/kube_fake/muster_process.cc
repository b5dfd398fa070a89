#include "muster_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace muster::kube::testing {
namespace {

// "VmRSS:   123456 kB" -> bytes.
int64_t StatusField(const std::string& status, const std::string& field) {
  const size_t at = status.find(field + ":");
  if (at == std::string::npos) return 0;
  return std::strtoll(status.c_str() + at + field.size() + 1, nullptr, 10) * 1024;
}

}  // namespace

MusterProcess::MusterProcess(std::string binary, std::vector<std::string> extra_args,
                             std::string log_path)
    : binary_(std::move(binary)),
      extra_args_(std::move(extra_args)),
      log_path_(std::move(log_path)) {}

MusterProcess::~MusterProcess() {
  Stop();
  if (!kubeconfig_.empty()) std::filesystem::remove(kubeconfig_);
}

Status MusterProcess::Start(const FakeApiServer& server) {
  kubeconfig_ = (std::filesystem::temp_directory_path() /
                 ("muster-kube-bench-" + std::to_string(::getpid()) + ".kubeconfig"))
                    .string();
  std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\n"
                             << "clusters:\n- name: fake\n  cluster:\n    server: " << server.url()
                             << "\nusers:\n- name: bench\n  user: {}\n"
                             << "contexts:\n- name: fake\n  context: {cluster: fake, user: bench, "
                                "namespace: bench}\ncurrent-context: fake\n";
  // Everything the child needs is built before fork: between fork and exec it may
  // only make async-signal-safe calls (this process has threads).
  std::vector<std::string> args = {binary_, "kube", "--kubeconfig", kubeconfig_};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status(StatusCode::kInternal, "cannot open " + log_path_);
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(log_fd);
    return Status(StatusCode::kInternal, "fork failed");
  }
  if (pid_ == 0) {
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return Status::Ok();
}

void MusterProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  // muster kube exits within a request's time of SIGTERM; SIGKILL after 15 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

std::optional<Usage> MusterProcess::Sample() {
  if (pid_ <= 0) return std::nullopt;
  const std::string proc = "/proc/" + std::to_string(pid_);
  std::ifstream stat_file(proc + "/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start at ") "; utime and stime
  // are fields 14 and 15, i.e. the 12th and 13th after it.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;
  long long utime = 0, stime = 0;
  fields >> utime >> stime;
  std::ifstream status_file(proc + "/status");
  std::string status((std::istreambuf_iterator<char>(status_file)),
                     std::istreambuf_iterator<char>());
  Usage u;
  u.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  u.rss_bytes = StatusField(status, "VmRSS");
  u.hwm_bytes = StatusField(status, "VmHWM");
  return u;
}

}  // namespace muster::kube::testing
