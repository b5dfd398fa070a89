#include "server/podman_runtime.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "server/host_command.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

constexpr char kPath[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr int kProbeTimeoutMs = 60'000;
constexpr int kCheckTimeoutMs = 20'000;
constexpr char kContainerNameFile[] = "container.name";
// conmon, podman's container monitor, creates this file in its working directory
// when the kernel OOM-kills the container (CRI-O runs it in the container's bundle
// and reads it there). podman runs in the pod's directory, conmon with it.
constexpr char kConmonOomFile[] = "oom";

std::string FindOnPath(const std::string& name) {
  for (const char* dir :
       {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    std::string path = std::string(dir) + "/" + name;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

int64_t HardLimit(int resource, int64_t cap) {
  struct rlimit rl {};
  if (::getrlimit(resource, &rl) != 0 || rl.rlim_max == RLIM_INFINITY) return cap;
  return std::min<int64_t>(cap, static_cast<int64_t>(rl.rlim_max));
}

int64_t ReadNumber(const std::string& path, int64_t fallback) {
  std::ifstream in(path);
  int64_t value = 0;
  return in >> value && value > 0 ? value : fallback;
}

bool HasNvidiaCdiSpec() {
  std::error_code ec;
  for (const char* dir : {"/etc/cdi", "/var/run/cdi"}) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().filename().string().find("nvidia") != std::string::npos) return true;
    }
  }
  return false;
}

Status WritePrivateFile(const std::string& path, const std::string& content) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Internal("cannot write " + path + ": " + std::strerror(errno));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  return ok ? Status::Ok() : Internal("cannot write " + path);
}

std::string LogTail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

Result<ContainerRuntimeMode> ParseContainerRuntime(const std::string& text) {
  if (text == "none") return ContainerRuntimeMode::kNone;
  if (text == "podman") return ContainerRuntimeMode::kPodman;
  if (text == "auto") return ContainerRuntimeMode::kAuto;
  return InvalidArgument("--container-runtime: \"" + text + "\" is not one of none, podman, auto");
}

Result<std::unique_ptr<PodmanRuntime>> PodmanRuntime::Make(ContainerRuntimeMode mode, bool root,
                                                           std::ostream& log) {
  if (mode == ContainerRuntimeMode::kNone) return std::unique_ptr<PodmanRuntime>();
  auto unusable = [&](const std::string& why) -> Result<std::unique_ptr<PodmanRuntime>> {
    if (mode == ContainerRuntimeMode::kPodman) {
      return FailedPrecondition("--container-runtime=podman: " + why);
    }
    log << "muster serve: pods run as local processes (--container-runtime=auto: " << why << ")\n";
    return std::unique_ptr<PodmanRuntime>();
  };
  if (!root) return unusable("podman containers need muster serve to run as root");
  PodmanSettings settings;
  settings.podman = FindOnPath("podman");
  if (settings.podman.empty()) return unusable("podman is not installed");
  if (FindOnPath(settings.oci_runtime).empty()) settings.oci_runtime.clear();
  settings.nofile = HardLimit(RLIMIT_NOFILE, 1 << 20);
  // runc refuses an nproc limit above pid_max on some kernels (seen: 32768).
  settings.nproc = HardLimit(RLIMIT_NPROC, ReadNumber("/proc/sys/kernel/pid_max", 32768));
  settings.cdi = HasNvidiaCdiSpec();
  auto runtime = std::make_unique<PodmanRuntime>(settings);
  std::vector<std::string> info = {settings.podman};
  if (!settings.oci_runtime.empty()) info.push_back("--runtime=" + settings.oci_runtime);
  info.insert(info.end(), {"info", "--format={{.Host.OCIRuntime.Name}}"});
  auto probe = RunCommand(info, kProbeTimeoutMs, runtime->Env());
  if (!probe.ok()) return unusable(probe.status().message());
  if (probe->exit_code != 0) {
    std::string out = probe->output.substr(0, 300);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return unusable("`podman info` failed: " + out);
  }
  log << "muster serve: pods run in podman containers from their images (" << settings.podman
      << ", OCI runtime "
      << (settings.oci_runtime.empty() ? "podman's default" : settings.oci_runtime) << ", GPUs by "
      << (settings.cdi ? "CDI" : "device nodes") << ")\n";
  return runtime;
}

std::vector<std::string> PodmanRuntime::Env() const {
  // Nothing of the pod's: variables such as CONTAINERS_CONF would steer a root podman.
  return {kPath, "HOME=/root"};
}

Result<ProcessSpec> PodmanRuntime::Plan(const PodmanPodInput& pod) {
  const model::Container& c = *pod.container;
  auto pull = PodmanPullPolicy(c.image, c.image_pull_policy);
  if (!pull.ok()) return pull.status();
  auto env = PodmanEnvFile(pod.env);
  if (!env.ok()) return env.status();
  const std::string env_file = pod.pod_dir + "/container.env";
  if (Status s = WritePrivateFile(env_file, *env); !s.ok()) return s;

  PodmanRun run;
  run.podman = settings_.podman;
  run.oci_runtime = settings_.oci_runtime;
  int64_t stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  run.name = PodmanContainerName(pod.id, stamp);
  run.labels = {{kPodmanPodLabel, pod.namespace_ + "/" + pod.name}, {kPodmanProcessLabel, pod.id}};
  run.image = c.image;
  // The executor pulled it first (EnsureImage): `podman run` pulls only what went
  // missing since, and never under Never.
  run.pull = *pull == "never" ? "never" : "missing";
  run.env_file = env_file;
  run.uid = pod.account.uid;
  run.gid = pod.account.gid;
  run.groups = pod.account.groups;
  run.hostname = pod.name;
  run.hosts_file = pod.hosts_file;
  run.mounts = pod.mounts;
  if (!c.working_dir.empty()) {
    run.working_dir = c.working_dir.starts_with("/") ? c.working_dir : "/" + c.working_dir;
  }
  run.cpu_millis = pod.limits.cpu_millis;
  run.cpu_shares_millis = pod.limits.cpu_shares_millis;
  run.memory_bytes = pod.limits.memory_bytes;
  run.gpus = pod.gpus;
  run.cdi = settings_.cdi;
  for (const auto& g : run.gpus) {
    bool numeric = !g.empty() && std::all_of(g.begin(), g.end(), ::isdigit);
    if (!run.cdi && !numeric) {
      return FailedPrecondition("GPU " + g +
                                " has no /dev/nvidiaN node to pass to podman (and no CDI spec "
                                "in /etc/cdi)");
    }
  }
  run.nofile = settings_.nofile;
  run.nproc = settings_.nproc;
  run.command = pod.command;
  run.args = pod.args;

  if (Status s = ValidatePodmanRun(run); !s.ok()) return s;

  ProcessSpec spec;
  spec.id = pod.id;
  spec.argv = PodmanRunArgv(run);
  spec.working_dir = pod.pod_dir;  // conmon's too: where it reports an OOM kill
  ::unlink((pod.pod_dir + "/" + kConmonOomFile).c_str());  // an earlier start's
  for (const std::string& kv : Env()) {
    size_t eq = kv.find('=');
    spec.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // Kept beside the process's files too: a restarted server that adopts the process
  // must still know which container to remove after it.
  if (Status s = WritePrivateFile(pod.pod_dir + "/" + kContainerNameFile, run.name); !s.ok()) {
    return s;
  }
  names_[pod.id] = run.name;
  return spec;
}

std::optional<PodmanFailure> PodmanRuntime::ExitReason(const std::string& id, int exit_code,
                                                       const std::string& log_path) {
  if (exit_code == 137) {
    const std::string oom_file = log_path.substr(0, log_path.rfind('/') + 1) + kConmonOomFile;
    if (::unlink(oom_file.c_str()) == 0) return PodmanFailure{"OOMKilled", ""};
    auto name = names_.find(id);
    if (name == names_.end()) return std::nullopt;  // adopted: its container is gone
    auto result = RunCommand({settings_.podman, "inspect", "--type=container",
                              "--format={{.State.OOMKilled}}", "--", name->second},
                             kCheckTimeoutMs, Env());
    if (result.ok() && result->exit_code == 0 && result->output.starts_with("true")) {
      return PodmanFailure{"OOMKilled", ""};  // the kubelet gives no message
    }
    return std::nullopt;
  }
  if (exit_code < 125 || exit_code > 127) return std::nullopt;
  return ClassifyPodmanExit(exit_code, LogTail(log_path));
}

void PodmanRuntime::Stop(const std::string& id, double grace_seconds) {
  const int64_t grace = std::max<int64_t>(0, std::llround(grace_seconds));
  queued_.push_back({settings_.podman, "stop", "--ignore", "--time=" + std::to_string(grace),
                     "--filter=label=" + std::string(kPodmanProcessLabel) + "=" + id});
}

void PodmanRuntime::Exited(const std::string& id, const std::string& process_dir) {
  std::string name;
  if (auto it = names_.find(id); it != names_.end()) {
    name = it->second;
    names_.erase(it);
  } else {
    std::ifstream in(process_dir + "/" + kContainerNameFile);
    std::getline(in, name);
  }
  if (name.empty()) return;
  queued_.push_back({settings_.podman, "rm", "--force", "--ignore", "--time=0", name});
}

void PodmanRuntime::Run(const ProcessSupervisor& processes) {
  if (!collected_) {
    collected_ = true;
    auto listed = RunCommand(
        {settings_.podman, "ps", "--all", "--no-trunc",
         "--filter=label=" + std::string(kPodmanProcessLabel),
         "--format={{.Names}} {{index .Labels \"" + std::string(kPodmanProcessLabel) + "\"}}"},
        kCheckTimeoutMs, Env());
    if (listed.ok() && listed->exit_code == 0) {
      std::istringstream in(listed->output);
      std::string name, id;
      while (in >> name >> id) {
        if (!processes.Running(id)) {
          queued_.push_back({settings_.podman, "rm", "--force", "--ignore", "--time=0", name});
        }
      }
    }
  }
  std::erase_if(spawned_, [](pid_t pid) { return ReapCommand(pid); });
  for (const auto& argv : queued_) {
    if (auto pid = SpawnCommand(argv, Env()); pid.ok()) spawned_.push_back(*pid);
  }
  queued_.clear();
}

}  // namespace muster::server
