// Where a pod's local process lives under `muster serve --data DIR`: the executor
// runs pod <ns>/<name> in PodDir and sends its stdout+stderr to PodLogPath; the log
// endpoint reads the same files; and the paths of the pod subresources the API serves
// from them (log, exec). Pure string functions, no I/O.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace muster::server {

// "<ns>_<name>": unambiguous because namespaces and pod names are DNS-1123 and
// cannot contain '_'.
std::string PodProcessId(const std::string& ns, const std::string& name);
// The inverse: {ns, name}; nullopt for an id that is not "<ns>_<name>".
std::optional<std::pair<std::string, std::string>> ParsePodProcessId(const std::string& id);

// A pod named by a request path.
struct PodName {
  std::string namespace_;
  std::string name;
};
// The pod "/api/v1/namespaces/{ns}/pods/{name}/{subresource}" names; nullopt for any
// other path.
std::optional<PodName> MatchPodSubresourcePath(const std::string& path,
                                               const std::string& subresource);

// "<data_dir>/pods/<ns>_<name>".
std::string PodDir(const std::string& data_dir, const std::string& ns, const std::string& name);

// "<PodDir>/log" for the current attempt (rotated to log.1, log.2 ...),
// "<PodDir>/log.previous" (log.previous.1 ...) for the previous one.
std::string PodLogPath(const std::string& data_dir, const std::string& ns, const std::string& name,
                       bool previous);

// "<PodDir>/volumes/<volume>": emptyDir, configMap, secret and downwardAPI volumes.
std::string PodVolumeDir(const std::string& pod_dir, const std::string& volume);

// "<data_dir>/volumes/<ns>/<claim>": a PersistentVolumeClaim's directory (the local
// provisioner's volume; it outlives the pods that use it).
std::string ClaimDir(const std::string& data_dir, const std::string& ns, const std::string& claim);

}  // namespace muster::server
