#include "server/podman_command.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "model/image_pull_policy.h"

namespace muster::server {
namespace {

std::string MilliCpus(int64_t millis) {
  std::ostringstream out;
  out << millis / 1000;
  if (int64_t frac = millis % 1000; frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    out << "." << digits;
  }
  return out.str();
}

std::vector<std::string> LastLines(const std::string& text, size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - count);
  return lines;
}

}  // namespace

Result<std::string> PodmanPullPolicy(const std::string& image, const std::string& policy) {
  if (policy == "Always") return std::string("always");
  if (policy == "IfNotPresent") return std::string("missing");
  if (policy == "Never") return std::string("never");
  if (!policy.empty()) {
    return InvalidArgument("imagePullPolicy: \"" + policy +
                           "\" is not one of Always, IfNotPresent, Never");
  }
  return std::string(
      std::string_view(model::DefaultImagePullPolicy(image)) == "Always" ? "always" : "missing");
}

Result<std::string> PodmanEnvFile(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (const auto& [name, value] : env) {
    bool bad_name = name.empty() || name.front() == '#' ||
                    std::any_of(name.begin(), name.end(), [](unsigned char c) {
                      return c == '=' || c == '\n' || std::isspace(c) != 0;
                    });
    if (bad_name) {
      return InvalidArgument("env: \"" + name +
                             "\" cannot be passed to a container (a name with '=', '#' first "
                             "or white space)");
    }
    if (value.find('\n') != std::string::npos || value.find('\0') != std::string::npos) {
      return InvalidArgument("env " + name +
                             ": a value with a newline cannot be passed to a podman container "
                             "(mount it as a file from a ConfigMap or Secret volume instead)");
    }
    out += name + "=" + value + "\n";
  }
  return out;
}

std::string PodmanContainerName(const std::string& id, int64_t stamp) {
  return "muster-" + id + "-" + std::to_string(stamp);
}

Status ValidatePodmanRun(const PodmanRun& run) {
  if (run.image.empty()) return InvalidArgument("image: the container has no image");
  if (run.image.front() == '-' ||
      std::any_of(run.image.begin(), run.image.end(),
                  [](unsigned char c) { return std::isspace(c) != 0 || std::iscntrl(c) != 0; })) {
    return InvalidArgument("image: \"" + run.image + "\" is not an image reference");
  }
  for (const MountStep& m : run.mounts) {
    for (const std::string* path : {&m.source, &m.target}) {
      if (path->find_first_of(":,") != std::string::npos) {
        return InvalidArgument("volumeMounts: " + *path +
                               " contains ':' or ',', which podman would read as mount options");
      }
    }
  }
  return Status::Ok();
}

std::vector<std::string> PodmanRunArgv(const PodmanRun& run) {
  std::vector<std::string> a = {run.podman};
  if (!run.oci_runtime.empty()) a.push_back("--runtime=" + run.oci_runtime);
  a.insert(a.end(), {"run", "--rm", "--replace", "--quiet", "--name=" + run.name,
                     "--pull=" + run.pull, "--network=host"});
  for (const auto& [k, v] : run.labels) a.push_back("--label=" + k + "=" + v);
  if (!run.hostname.empty()) a.push_back("--hostname=" + run.hostname);
  a.push_back("--user=" + std::to_string(run.uid) + ":" + std::to_string(run.gid));
  for (gid_t g : run.groups) {
    if (g != run.gid) a.push_back("--group-add=" + std::to_string(g));
  }
  if (run.uid != 0) a.push_back("--security-opt=no-new-privileges");
  if (!run.env_file.empty()) a.push_back("--env-file=" + run.env_file);
  if (!run.hosts_file.empty()) a.push_back("--volume=" + run.hosts_file + ":/etc/hosts:ro");
  for (const MountStep& m : run.mounts) {
    if (m.kind == MountStep::Kind::kTmpfs) {
      std::string options = m.options.empty() ? "" : ":" + m.options;
      if (m.read_only) options += options.empty() ? ":ro" : ",ro";
      a.push_back("--tmpfs=" + m.target + options);
    } else {
      a.push_back("--volume=" + m.source + ":" + m.target + (m.read_only ? ":ro" : ""));
    }
  }
  if (!run.working_dir.empty()) a.push_back("--workdir=" + run.working_dir);
  if (run.cpu_millis) a.push_back("--cpus=" + MilliCpus(*run.cpu_millis));
  if (run.cpu_shares_millis) {
    // The kubelet's milli-CPU -> shares conversion (1 CPU = 1024, at least 2).
    a.push_back("--cpu-shares=" +
                std::to_string(std::max<int64_t>(2, *run.cpu_shares_millis * 1024 / 1000)));
  }
  if (run.memory_bytes) {
    a.push_back("--memory=" + std::to_string(*run.memory_bytes));
    a.push_back("--memory-swap=" + std::to_string(*run.memory_bytes));
  }
  if (run.cdi) {
    for (const auto& g : run.gpus) a.push_back("--device=nvidia.com/gpu=" + g);
  } else if (!run.gpus.empty()) {
    for (const auto& g : run.gpus) a.push_back("--device=/dev/nvidia" + g);
    for (const char* node : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
      a.push_back(std::string("--device=") + node);
    }
  }
  a.push_back("--ulimit=nofile=" + std::to_string(run.nofile) + ":" + std::to_string(run.nofile));
  if (run.nproc > 0) {
    a.push_back("--ulimit=nproc=" + std::to_string(run.nproc) + ":" + std::to_string(run.nproc));
  }
  if (!run.command.empty()) {
    // A JSON array: the whole command replaces the ENTRYPOINT, the args follow it.
    a.push_back("--entrypoint=" + nlohmann::json(run.command).dump());
  }
  a.push_back(run.image);
  a.insert(a.end(), run.args.begin(), run.args.end());
  return a;
}

std::optional<PodmanFailure> ClassifyPodmanExit(int exit_code, const std::string& log_tail) {
  if (exit_code == 126 || exit_code == 127) {
    // The OCI runtime could not exec the command (missing, not executable): podman's
    // own error line, unlike a shell's 126/127 inside the container.
    std::vector<std::string> lines = LastLines(log_tail, 1);
    if (!lines.empty() && lines.back().starts_with("Error: ") &&
        lines.back().find("OCI") != std::string::npos) {
      return PodmanFailure{"StartError", lines.back()};
    }
    return std::nullopt;
  }
  if (exit_code != 125) return std::nullopt;
  std::vector<std::string> lines = LastLines(log_tail, 3);
  std::string message = lines.empty() ? "podman run failed (exit code 125)" : lines.back();
  bool pull = false;
  for (const auto& line : lines) {
    for (const char* marker : {"initializing source", "pull", "manifest unknown", "image not known",
                               "reading manifest"}) {
      if (line.find(marker) != std::string::npos) pull = true;
    }
  }
  return PodmanFailure{pull ? "ErrImagePull" : "CreateContainerError", message};
}

std::vector<std::string> PodmanPullArgv(const std::string& podman, const std::string& image) {
  return {podman, "pull", "--quiet", "--", image};
}

std::string PodmanPullError(int exit_code, const std::string& output) {
  std::vector<std::string> lines = LastLines(output, 1);
  if (!lines.empty()) return lines.back();
  return "podman pull failed (exit code " + std::to_string(exit_code) + ")";
}

std::string NeverPullMessage(const std::string& image) {
  return "Container image \"" + image + "\" is not present with pull policy of Never";
}

}  // namespace muster::server
