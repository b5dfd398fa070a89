#include "server/pod_volumes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "server/pod_paths.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

Status Fail(const std::string& volume, const std::string& message) {
  return FailedPrecondition("volume \"" + volume + "\": " + message);
}

Status Give(const std::string& path, const Account& account, mode_t mode) {
  if (::chown(path.c_str(), account.uid, account.gid) != 0 || ::chmod(path.c_str(), mode) != 0) {
    return Internal("cannot give " + path + " to " + account.name + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// An empty directory owned by the pod's user (its old content removed).
Status FreshDir(const std::string& dir, const Account& account, mode_t mode) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  return Give(dir, account, mode);
}

Status WriteOwnedFile(const std::string& path, const std::string& content, const Account& account,
                      mode_t mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Internal("cannot write " + path + ": " + std::strerror(errno));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  if (!ok) return Internal("cannot write " + path);
  return Give(path, account, mode);
}

// Items of a configMap/secret volume: every key, or only `items` (key -> path).
Status WriteKeys(const model::Volume& v, const model::StringMap& data, const std::string& dir,
                 const Account& account) {
  const mode_t mode = static_cast<mode_t>(v.default_mode.value_or(0644));
  if (v.items.empty()) {
    for (const auto& [key, value] : data) {
      if (key.find('/') != std::string::npos || key == "." || key == "..") continue;
      if (Status s = WriteOwnedFile(dir + "/" + key, value, account, mode); !s.ok()) return s;
    }
    return Status::Ok();
  }
  for (const auto& item : v.items) {
    auto it = data.find(item.key);
    if (it == data.end()) {
      if (v.optional) continue;
      return Fail(v.name, "key \"" + item.key + "\" is not in " +
                              (v.kind == model::VolumeKind::kSecret ? "Secret" : "ConfigMap") +
                              " \"" + v.source + "\"");
    }
    mode_t item_mode = item.mode ? static_cast<mode_t>(*item.mode) : mode;
    if (Status s = WriteOwnedFile(dir + "/" + item.path, it->second, account, item_mode); !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

bool UnderPrefix(const std::string& path, const std::string& prefix) {
  std::string p = fs::path(prefix).lexically_normal().string();
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  return path == p || path.starts_with(p == "/" ? p : p + "/");
}

Status CheckHostPathType(const model::Volume& v, const Account& account) {
  struct stat st {};
  bool exists = ::stat(v.source.c_str(), &st) == 0;
  const std::string& type = v.host_path_type;
  auto want = [&](bool ok, const char* what) {
    return ok ? Status::Ok() : Fail(v.name, "hostPath " + v.source + " is not " + what);
  };
  if (type == "DirectoryOrCreate" && !exists) {
    std::error_code ec;
    fs::create_directories(v.source, ec);
    if (ec) return Fail(v.name, "cannot create hostPath " + v.source + ": " + ec.message());
    return Give(v.source, account, 0755);
  }
  if (type == "FileOrCreate" && !exists) {
    return WriteOwnedFile(v.source, "", account, 0644);
  }
  if (!exists) return Fail(v.name, "hostPath " + v.source + " does not exist");
  if (type == "Directory" || type == "DirectoryOrCreate")
    return want(S_ISDIR(st.st_mode), "a directory");
  if (type == "File" || type == "FileOrCreate") return want(S_ISREG(st.st_mode), "a file");
  if (type == "Socket") return want(S_ISSOCK(st.st_mode), "a socket");
  if (type == "CharDevice") return want(S_ISCHR(st.st_mode), "a character device");
  if (type == "BlockDevice") return want(S_ISBLK(st.st_mode), "a block device");
  return Status::Ok();
}

// The volume's directory (or file, for a hostPath file) and whether it mounts read-only.
struct Source {
  std::string path;
  bool read_only = false;
  bool tmpfs = false;
  std::string tmpfs_options;
};

Result<Source> Provide(const model::Volume& v, const PodVolumeContext& pod,
                       const VolumeSources& sources, const VolumePolicy& policy) {
  const std::string dir = PodVolumeDir(pod.pod_dir, v.name);
  const Account& account = pod.account;
  switch (v.kind) {
    case model::VolumeKind::kEmptyDir: {
      if (v.medium == "Memory") {
        std::string options = "uid=" + std::to_string(account.uid) +
                              ",gid=" + std::to_string(account.gid) + ",mode=0700";
        if (v.size_limit) options += ",size=" + std::to_string(v.size_limit->Value());
        return Source{"", false, true, options};
      }
      if (Status s = FreshDir(dir, account, 0700); !s.ok()) return s;
      return Source{dir, false, false, ""};
    }
    case model::VolumeKind::kConfigMap:
    case model::VolumeKind::kSecret: {
      const bool secret = v.kind == model::VolumeKind::kSecret;
      const model::StringMap* data =
          secret ? sources.Secret(v.source) : sources.ConfigMap(v.source);
      if (data == nullptr && !v.optional) {
        return Fail(v.name, std::string(secret ? "secret" : "configmap") + " \"" + v.source +
                                "\" not found");
      }
      if (Status s = FreshDir(dir, account, 0755); !s.ok()) return s;
      if (data != nullptr) {
        if (Status s = WriteKeys(v, *data, dir, account); !s.ok()) return s;
      }
      return Source{dir, true, false, ""};
    }
    case model::VolumeKind::kDownwardApi: {
      if (Status s = FreshDir(dir, account, 0755); !s.ok()) return s;
      const mode_t mode = static_cast<mode_t>(v.default_mode.value_or(0644));
      for (const auto& [path, field] : v.downward_items) {
        auto value = workloads::DownwardFieldValue(pod.facts, field, /*for_volume=*/true);
        if (!value.ok()) return Fail(v.name, value.status().message());
        if (Status s = WriteOwnedFile(dir + "/" + path, *value, account, mode); !s.ok()) return s;
      }
      return Source{dir, true, false, ""};
    }
    case model::VolumeKind::kPersistentVolumeClaim: {
      auto claim = sources.Claim(v.source);
      if (!claim) return Fail(v.name, "persistentvolumeclaim \"" + v.source + "\" not found");
      if (claim->phase == "Lost")
        return Fail(v.name, "persistentvolumeclaim \"" + v.source + "\" is Lost");
      const auto& modes = claim->access_modes;
      auto has = [&](const char* m) {
        return std::find(modes.begin(), modes.end(), m) != modes.end();
      };
      if (has("ReadWriteOncePod") && sources.ClaimInUse(v.source)) {
        return Fail(v.name, "persistentvolumeclaim \"" + v.source +
                                "\" is ReadWriteOncePod and another pod uses it");
      }
      bool read_only = v.read_only || (has("ReadOnlyMany") && !has("ReadWriteOnce") &&
                                       !has("ReadWriteMany") && !has("ReadWriteOncePod"));
      const std::string claim_dir = ClaimDir(pod.data_dir, pod.namespace_, v.source);
      std::error_code ec;
      if (!fs::exists(claim_dir, ec)) {
        fs::create_directories(claim_dir, ec);
        if (ec) return Internal("cannot create " + claim_dir + ": " + ec.message());
        if (Status s = Give(claim_dir, account, 0770); !s.ok()) return s;
      }
      return Source{claim_dir, read_only, false, ""};
    }
    case model::VolumeKind::kHostPath: {
      const std::string path = fs::path(v.source).lexically_normal().string();
      bool allowed = pod.owner_is_root ||
                     std::any_of(policy.host_path_prefixes.begin(), policy.host_path_prefixes.end(),
                                 [&](const std::string& p) { return UnderPrefix(path, p); });
      if (!allowed) {
        return Fail(v.name, "hostPath " + path +
                                " is not allowed on this shared machine (only for pods of root, "
                                "or under a prefix given to muster serve --host-path-prefix)");
      }
      if (Status s = CheckHostPathType(v, account); !s.ok()) return s;
      return Source{path, false, false, ""};
    }
    case model::VolumeKind::kUnsupported:
      break;
  }
  return Fail(v.name,
              "its volume source is not one muster provides (emptyDir, hostPath, "
              "configMap, secret, persistentVolumeClaim, downwardAPI)");
}

}  // namespace

bool MountPointCreatable(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (!p.is_absolute() || p == p.root_path()) return false;
  if (UnderPrefix(p.string(), "/etc/mpi")) return true;
  // The nearest existing ancestor must be "/": a new top-level tree nobody else reads.
  std::error_code ec;
  fs::path ancestor = p.parent_path();
  while (ancestor != ancestor.root_path() && !fs::exists(ancestor, ec)) {
    ancestor = ancestor.parent_path();
  }
  return ancestor == ancestor.root_path();
}

Result<std::string> OverlayAncestor(const std::string& mount_name, const std::string& path,
                                    const std::string& data_dir) {
  auto refuse = [&](const std::string& why) {
    return FailedPrecondition("volumeMount \"" + mount_name + "\": mountPath " + path +
                              " does not exist on this machine and " + why +
                              ": create it, or run pods with --container-runtime=podman");
  };
  std::error_code ec;
  fs::path ancestor = fs::path(path).lexically_normal().parent_path();
  while (ancestor != ancestor.root_path() && !fs::exists(ancestor, ec)) {
    ancestor = ancestor.parent_path();
  }
  const std::string dir = ancestor.string();
  if (!fs::is_directory(ancestor, ec)) return refuse(dir + " is not a directory");
  // The overlay shows what is below its directory, mounts excepted: over the data
  // directory it would undo the tmpfs that hides the store and the other pods.
  if (UnderPrefix(data_dir, dir) || UnderPrefix(dir, data_dir)) {
    return refuse("its directory " + dir + " holds the server's data directory");
  }
  if (dir.find_first_of(",:\\") != std::string::npos) {
    return refuse("its directory " + dir + " cannot be an overlay's (',' ':' or '\\' in it)");
  }
  static const bool kOverlayfs = [] {
    std::ifstream in("/proc/filesystems");
    for (std::string line; std::getline(in, line);) {
      if (line.ends_with("\toverlay")) return true;
    }
    return false;
  }();
  if (!kOverlayfs) return refuse("the kernel has no overlayfs to create it below " + dir);
  return dir;
}

Result<std::vector<MountStep>> PrepareVolumes(const model::PodSpec& spec,
                                              const model::Container& container,
                                              const PodVolumeContext& pod,
                                              const VolumeSources& sources,
                                              const VolumePolicy& policy) {
  std::vector<MountStep> steps;
  if (container.volume_mounts.empty()) return steps;
  if (!policy.mounts) {
    return FailedPrecondition(
        "volumeMounts need a private mount namespace: muster serve runs as root for that "
        "(mounting \"" +
        container.volume_mounts.front().name + "\" at " +
        container.volume_mounts.front().mount_path + ")");
  }
  std::map<std::string, Source> provided;
  std::set<std::string> overlays;  // existing directories missing mount points go below
  for (const model::VolumeMount& m : container.volume_mounts) {
    auto vol = std::find_if(spec.volumes.begin(), spec.volumes.end(),
                            [&](const model::Volume& v) { return v.name == m.name; });
    if (vol == spec.volumes.end()) {
      return FailedPrecondition("volumeMount \"" + m.name + "\": the pod has no such volume");
    }
    if (provided.count(m.name) == 0) {
      auto source = Provide(*vol, pod, sources, policy);
      if (!source.ok()) return source.status();
      provided[m.name] = *source;
    }
    const Source& source = provided[m.name];
    const std::string target = fs::path(m.mount_path).lexically_normal().string();
    if (!fs::path(target).is_absolute()) {
      return FailedPrecondition("volumeMount \"" + m.name + "\": mountPath " + m.mount_path +
                                " is not absolute");
    }
    MountStep step;
    step.target = target;
    step.read_only = source.read_only || m.read_only;
    if (source.tmpfs) {
      if (!m.sub_path.empty()) {
        return FailedPrecondition("volumeMount \"" + m.name +
                                  "\": subPath of a memory-backed emptyDir is not supported");
      }
      step.kind = MountStep::Kind::kTmpfs;
      step.options = source.tmpfs_options;
    } else {
      step.source = source.path;
      if (!m.sub_path.empty()) {
        // The kubelet creates a missing subPath directory; a symlink may not lead out.
        fs::path sub = fs::path(source.path) / m.sub_path;
        std::error_code ec;
        if (!fs::exists(sub, ec) && !source.read_only) {
          fs::create_directories(sub, ec);
          if (!ec) Give(sub.string(), pod.account, 0755).ok();
        }
        fs::path real = fs::weakly_canonical(sub, ec);
        fs::path base = fs::weakly_canonical(source.path, ec);
        if (ec || !UnderPrefix(real.string(), base.string()) || !fs::exists(real, ec)) {
          return FailedPrecondition("volumeMount \"" + m.name + "\": subPath " + m.sub_path +
                                    " does not exist inside its volume");
        }
        step.source = real.string();
      }
      struct stat st {};
      step.target_is_file = ::stat(step.source.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
    }
    std::error_code ec;
    if (!policy.container && !fs::exists(target, ec)) {
      if (!MountPointCreatable(target)) {
        // Below an existing directory (/etc/foo/bar with /etc/foo there): created in
        // an overlay of that directory, for this pod only, as a container's would be.
        auto ancestor = OverlayAncestor(m.name, target, pod.data_dir);
        if (!ancestor.ok()) return ancestor.status();
        overlays.insert(*ancestor);
      }
      step.create_target = true;
    }
    steps.push_back(std::move(step));
  }
  // One overlay per outermost directory (one below another is inside its overlay),
  // first, its upper layer below the data directory (a tmpfs in the pod's namespace).
  std::vector<MountStep> overlay_steps;
  for (const std::string& dir : overlays) {
    if (!overlay_steps.empty() && UnderPrefix(dir, overlay_steps.back().target)) continue;
    MountStep step;
    step.kind = MountStep::Kind::kOverlay;
    step.target = dir;
    step.source = pod.data_dir + "/.overlays/" + std::to_string(overlay_steps.size());
    step.options =
        "lowerdir=" + dir + ",upperdir=" + step.source + "/u,workdir=" + step.source + "/w";
    overlay_steps.push_back(std::move(step));
  }
  steps.insert(steps.begin(), overlay_steps.begin(), overlay_steps.end());
  return steps;
}

}  // namespace muster::server
