#include "server/local_kubelet.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <ostream>

#include "core/duration.h"
#include "core/quantity.h"
#include "server/podman_runtime.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

// The data directory as one short stable tag (cgroup names).
std::string Tag(const std::string& data_dir) {
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(data_dir, ec).string();
  uint32_t h = 2166136261u;
  for (unsigned char c : canonical) h = (h ^ c) * 16777619u;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", h);
  return buf;
}

}  // namespace

Result<SupervisorOptions> MakeSupervisorOptions(const KubeletOptions& options,
                                                const std::string& data_dir) {
  SupervisorOptions out;
  auto size = Quantity::Parse(options.container_log_max_size);
  if (!size.ok() || size->Value() < (16 << 10) || size->Value() > (int64_t{1} << 40)) {
    return InvalidArgument("--container-log-max-size: \"" + options.container_log_max_size +
                           "\" must be a quantity from 16Ki to 1Ti (kubelet's default: 10Mi)");
  }
  if (options.container_log_max_files < 2 || options.container_log_max_files > 100) {
    return InvalidArgument(
        "--container-log-max-files: " + std::to_string(options.container_log_max_files) +
        " must be from 2 to 100 (kubelet's default: 5)");
  }
  out.log_max_bytes = size->Value();
  out.log_max_files = options.container_log_max_files;
  if (::geteuid() == 0) out.cgroups = CgroupDriver::Detect(Tag(data_dir));
  return out;
}

Result<ImagePullBackOffSettings> ParseImagePullBackOff(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("--image-pull-backoff: \"" + text + "\" " + why);
  };
  const size_t comma = text.find(',');
  if (comma == std::string::npos) return bad("is not INITIAL,MAX");
  auto initial = ParseDurationSeconds(text.substr(0, comma));
  auto max = ParseDurationSeconds(text.substr(comma + 1));
  if (!initial.ok() || !max.ok()) return bad("is not two durations (e.g. 10s,300s)");
  if (*initial <= 0 || *max < *initial) return bad("needs 0 < INITIAL <= MAX");
  return ImagePullBackOffSettings{*initial, *max};
}

Result<LocalKubelet> MakeLocalKubelet(ObjectStore& store, const std::string& data_dir,
                                      const KubeletOptions& options, std::ostream& log) {
  auto supervisor = MakeSupervisorOptions(options, data_dir);
  if (!supervisor.ok()) return supervisor.status();
  LocalPodConfig config;
  config.data_dir = fs::absolute(data_dir).lexically_normal().string();
  if (config.data_dir.size() > 1 && config.data_dir.back() == '/') config.data_dir.pop_back();
  if (!options.user_map_file.empty()) {
    auto users = UserMap::Load(options.user_map_file);
    if (!users.ok()) return users.status();
    config.users = std::move(users).value();
  }
  auto server = UserMap::Current();
  if (!server.ok()) return server.status();
  config.server = std::move(server).value();
  config.isolate = ::geteuid() == 0;
  for (const auto& prefix : options.host_path_prefixes) {
    if (!prefix.starts_with("/")) {
      return InvalidArgument("--host-path-prefix: \"" + prefix + "\" is not an absolute path");
    }
  }
  config.volumes.host_path_prefixes = options.host_path_prefixes;
  auto mode = ParseContainerRuntime(options.container_runtime);
  if (!mode.ok()) return mode.status();
  auto podman = PodmanRuntime::Make(*mode, config.isolate, log);
  if (!podman.ok()) return podman.status();
  config.podman = std::move(podman).value();
  auto backoff = ParseImagePullBackOff(options.image_pull_backoff);
  if (!backoff.ok()) return backoff.status();
  config.image_pull_backoff = *backoff;
  // Private: the store and every pod's files are the server's business.
  ::chmod(config.data_dir.c_str(), 0700);
  // A pod's work dir keeps its path in the pod's view: its owner must be able to
  // search every directory above the data directory (a data directory in /root or
  // under mktemp -d fails every pod of another owner with "cannot change to working
  // directory").
  if (config.isolate) {
    for (fs::path dir = fs::path(config.data_dir).parent_path(); !dir.empty();
         dir = dir.parent_path()) {
      struct stat st {};
      if (::stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
        log << "muster serve: warning: " << dir.string()
            << " is not searchable by other users: pods of owners other than its owner "
               "cannot reach their work directories in "
            << config.data_dir << " (chmod o+x it, or choose another --data)\n";
        break;
      }
      if (dir == dir.root_path()) break;
    }
  }

  log << "muster serve: pods run "
      << (config.isolate ? "as their owners (muster.dev/owner), each with its own hostname, "
                           "/etc/hosts, mounts and private view of the data directory"
                         : "as " + config.server.name +
                               " (not root: no per-owner accounts, no private /etc/hosts or "
                               "volumes; pods reach each other by address)")
      << "; " << supervisor->cgroups.Describe() << "; logs capped at "
      << options.container_log_max_size << " x " << options.container_log_max_files
      << " files per container\n";

  LocalKubelet kubelet;
  kubelet.processes =
      std::make_unique<ProcessSupervisor>(config.data_dir + "/pods", std::move(supervisor).value());
  PodExec::Config exec;
  exec.processes = kubelet.processes.get();
  exec.data_dir = config.data_dir;
  exec.root = config.isolate;
  if (config.podman) {
    exec.podman = config.podman->settings().podman;
    exec.podman_env = config.podman->Env();
  }
  kubelet.exec = std::make_unique<PodExec>(std::move(exec));
  kubelet.executor = std::make_unique<LocalExecutor>(store, *kubelet.processes, std::move(config));
  return kubelet;
}

}  // namespace muster::server
