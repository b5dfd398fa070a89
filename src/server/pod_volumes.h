// A pod's volumes on this machine, as the kubelet's volume plugins would provide them,
// and the mounts that put them at their mountPath in the pod's private mount
// namespace (muster serve runs as root; without root there is no mount namespace and
// a pod that mounts a volume fails with that reason):
//   - emptyDir: <pod dir>/volumes/<name>, empty at every start of the pod, owned by the
//     pod's user; medium Memory is a tmpfs (sizeLimit as its size).
//   - configMap / secret: the keys (or `items`) as files in <pod dir>/volumes/<name>,
//     owned by the pod's user with defaultMode/mode (default 0644), mounted read-only;
//     written at start (later changes of the object are not propagated).
//   - downwardAPI: fieldRef items as files (metadata.labels/annotations formatted as
//     upstream's FormatMap), read-only.
//   - persistentVolumeClaim: <data dir>/volumes/<ns>/<claim> (the local provisioner's
//     directory, created on first use, owned by its first user); readOnly and the
//     ReadOnlyMany access mode mount it read-only; ReadWriteOncePod admits one pod.
//   - hostPath: refused unless the pod's owner is root or the path is under a prefix
//     the administrator allowed (`muster serve --host-path-prefix`): on a shared
//     machine a path of the host is another user's business. `type` is checked.
// A mountPath that does not exist on this machine is created (empty, root-owned) as a
// new top-level directory (/data, /checkpoints ...) or under /etc/mpi, which no other
// program reads; below any other existing directory (/etc/foo/bar with /etc/foo
// there) it is created in an overlay of that directory in the pod's mount namespace
// (the pod sees the directory as it is, its mounts excepted, plus the mount point;
// what the pod writes there stays in its own tmpfs), so a manifest's mountPath works
// as in a container without touching the machine's filesystem. Refused (naming the
// volumeMount) where that directory holds the server's data directory or the kernel
// has no overlayfs. `subPath` must stay inside its volume.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/pod.h"
#include "server/process_launch.h"
#include "server/user_map.h"
#include "workloads/container_env.h"

namespace muster::server {

struct ClaimInfo {
  std::string phase;                      // status.phase ("" when unset)
  std::vector<std::string> access_modes;  // spec.accessModes
};

// What the pod's volumes refer to, read from the store by the executor.
class VolumeSources : public workloads::ConfigLookup {
 public:
  // nullopt when the claim does not exist.
  virtual std::optional<ClaimInfo> Claim(const std::string& name) const = 0;
  // Another running pod (not this one) uses the claim: ReadWriteOncePod refuses then.
  virtual bool ClaimInUse(const std::string& name) const = 0;
};

struct VolumePolicy {
  bool mounts = false;  // private mount namespaces are available (root)
  // The mounts go into a container's own filesystem: any absolute mountPath will do.
  bool container = false;
  std::vector<std::string> host_path_prefixes;
};

struct PodVolumeContext {
  std::string data_dir;
  std::string pod_dir;
  std::string namespace_;
  Account account;
  bool owner_is_root = false;
  workloads::PodFacts facts;
};

// Writes the pod's volumes and returns, in mount order, the steps that mount
// `container`'s volumeMounts. FailedPrecondition naming the volume and what is wrong
// (the kubelet's FailedMount / CreateContainerConfigError reasons).
Result<std::vector<MountStep>> PrepareVolumes(const model::PodSpec& spec,
                                              const model::Container& container,
                                              const PodVolumeContext& pod,
                                              const VolumeSources& sources,
                                              const VolumePolicy& policy);

// Whether a missing mountPath may be created on the machine itself (see above).
bool MountPointCreatable(const std::string& path);

// The directory a missing mountPath below an existing one (not "/") is created in,
// for the pod only: its nearest existing ancestor, which gets an overlay in the pod's
// mount namespace. FailedPrecondition naming the volumeMount where it cannot: the
// ancestor holds the server's data directory, its path cannot be an overlay option,
// or the kernel has no overlayfs.
Result<std::string> OverlayAncestor(const std::string& mount_name, const std::string& path,
                                    const std::string& data_dir);

}  // namespace muster::server
