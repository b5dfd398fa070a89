#include "server/pod_paths.h"

namespace muster::server {

std::string PodProcessId(const std::string& ns, const std::string& name) { return ns + "_" + name; }

std::string PodDir(const std::string& data_dir, const std::string& ns, const std::string& name) {
  std::string dir = data_dir;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + "pods/" + PodProcessId(ns, name);
}

std::string PodLogPath(const std::string& data_dir, const std::string& ns, const std::string& name,
                       bool previous) {
  return PodDir(data_dir, ns, name) + (previous ? "/log.1" : "/log");
}

}  // namespace muster::server
