#include "server/pod_paths.h"

#include <vector>

#include "server/path_segments.h"

namespace muster::server {
namespace {

std::string WithSlash(std::string dir) {
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir;
}

}  // namespace

std::optional<PodName> MatchPodSubresourcePath(const std::string& path,
                                               const std::string& subresource) {
  std::vector<std::string> seg = PathSegments(path);
  if (seg.size() != 7 || seg[0] != "api" || seg[1] != "v1" || seg[2] != "namespaces" ||
      seg[4] != "pods" || seg[6] != subresource) {
    return std::nullopt;
  }
  return PodName{seg[3], seg[5]};
}

std::string PodProcessId(const std::string& ns, const std::string& name) { return ns + "_" + name; }

std::optional<std::pair<std::string, std::string>> ParsePodProcessId(const std::string& id) {
  size_t sep = id.find('_');
  if (sep == std::string::npos || sep == 0 || sep + 1 >= id.size() ||
      id.find('_', sep + 1) != std::string::npos) {
    return std::nullopt;
  }
  return std::make_pair(id.substr(0, sep), id.substr(sep + 1));
}

std::string PodDir(const std::string& data_dir, const std::string& ns, const std::string& name) {
  return WithSlash(data_dir) + "pods/" + PodProcessId(ns, name);
}

std::string PodLogPath(const std::string& data_dir, const std::string& ns, const std::string& name,
                       bool previous) {
  return PodDir(data_dir, ns, name) + (previous ? "/log.previous" : "/log");
}

std::string PodVolumeDir(const std::string& pod_dir, const std::string& volume) {
  return WithSlash(pod_dir) + "volumes/" + volume;
}

std::string ClaimDir(const std::string& data_dir, const std::string& ns, const std::string& claim) {
  return WithSlash(data_dir) + "volumes/" + ns + "/" + claim;
}

}  // namespace muster::server
