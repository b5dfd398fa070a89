#include "server/pod_cgroup.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "server/async_safe.h"

namespace muster::server {
namespace {

constexpr int64_t kCfsPeriodUs = 100000;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool Writable(const std::string& dir) { return ::access(dir.c_str(), W_OK) == 0; }

Status WriteValue(const std::string& dir, const std::string& file, const std::string& value) {
  std::string path = dir + "/" + file;
  int error = async_safe::WriteFile(path.c_str(), value.c_str());
  if (error != 0) {
    return Internal("cannot write \"" + value + "\" to " + path + ": " + std::strerror(error));
  }
  return Status::Ok();
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// "a b\nc d" -> value of key "c".
int64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  int64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

}  // namespace

std::vector<std::string> CgroupPaths::ProcsFiles() const {
  std::vector<std::string> files;
  for (const auto& d : dirs) files.push_back(d + "/cgroup.procs");
  return files;
}

CgroupDriver CgroupDriver::Detect(const std::string& tag) {
  CgroupDriver driver;
  // controller (or "" for the unified hierarchy) -> path of this process.
  std::map<std::string, std::string> own;
  std::ifstream cgroup("/proc/self/cgroup");
  for (std::string line; std::getline(cgroup, line);) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      own[""] = path;
    } else {
      for (const auto& c : Split(controllers, ',')) own[c] = path;
    }
  }
  struct Mount {
    std::string root, point;
    std::vector<std::string> options;
  };
  std::vector<Mount> v1;
  std::optional<Mount> unified;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::vector<std::string> f = Split(line, ' ');
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    const std::string& fstype = *(dash + 1);
    Mount m{f[3], f[4], Split(*(dash + 3), ',')};
    if (fstype == "cgroup2") {
      if (!unified) unified = m;
    } else if (fstype == "cgroup") {
      v1.push_back(m);
    }
  }
  // The path of this process inside a mount whose root is `root` (a container sees
  // its own cgroup as its mount's root).
  auto inside = [](const std::string& root, const std::string& path) {
    if (root == "/" || root.empty()) return path;
    if (path.starts_with(root))
      return path.substr(root.size()).empty() ? "/" : path.substr(root.size());
    return path;
  };
  auto parent_of = [&](const Mount& m, const std::string& path) {
    std::string p = m.point + inside(m.root, path);
    if (p.back() != '/') p += '/';
    return p + "muster-" + tag;
  };

  std::set<std::string> v1_controllers;
  for (const Mount& m : v1) {
    // cpuacct: the CPU time `kubectl top` reports (pod_metrics.h); often mounted with cpu.
    for (const char* wanted : {"memory", "cpu", "cpuacct", "pids"}) {
      if (std::find(m.options.begin(), m.options.end(), wanted) == m.options.end()) continue;
      if (v1_controllers.count(wanted) != 0 || own.count(wanted) == 0) continue;
      std::string parent = parent_of(m, own[wanted]);
      // The hierarchy holds one or more controllers (cpu,cpuacct): one dir for all.
      auto existing = std::find_if(driver.hierarchies_.begin(), driver.hierarchies_.end(),
                                   [&](const Hierarchy& h) { return h.parent == parent; });
      if (existing != driver.hierarchies_.end()) {
        existing->controllers.push_back(wanted);
      } else if (Writable(parent.substr(0, parent.rfind('/')))) {
        driver.hierarchies_.push_back({parent, {wanted}, false});
      }
      v1_controllers.insert(wanted);
    }
  }
  if (unified && own.count("") != 0) {
    std::string parent = parent_of(*unified, own[""]);
    std::string own_dir = parent.substr(0, parent.rfind('/'));
    if (Writable(own_dir)) {
      Hierarchy h{parent, {}, true};
      // Pure v2 (controllers live here): enable memory, cpu and pids for the pods.
      std::string available = ReadSmallFile(own_dir + "/cgroup.controllers");
      if (v1_controllers.empty()) {
        for (const char* c : {"memory", "cpu", "pids"}) {
          if (available.find(c) == std::string::npos) continue;
          // Fails when the server's cgroup holds processes (the "no internal
          // processes" rule) and it is not the root: limits are then not enforced.
          if (WriteValue(own_dir, "cgroup.subtree_control", std::string("+") + c).ok()) {
            h.controllers.push_back(c);
          }
        }
        driver.v2_controllers_ = !h.controllers.empty();
      }
      driver.hierarchies_.push_back(h);
    }
  }
  return driver;
}

CgroupDriver CgroupDriver::ForRoot(const std::string& root, bool v2, const std::string& tag) {
  CgroupDriver driver;
  if (v2) {
    driver.hierarchies_.push_back({root + "/muster-" + tag, {"memory", "cpu", "pids"}, true});
    driver.v2_controllers_ = true;
  } else {
    for (const char* c : {"memory", "cpu", "pids"}) {
      driver.hierarchies_.push_back({root + "/" + c + "/muster-" + tag, {c}, false});
    }
  }
  return driver;
}

std::string CgroupDriver::Describe() const {
  if (!available()) return "no cgroups (not mounted or not writable): pods are not limited";
  std::string v1, v2;
  for (const auto& h : hierarchies_) {
    std::string& out = h.v2 ? v2 : v1;
    for (const auto& c : h.controllers) out += (out.empty() ? "" : ", ") + c;
    if (h.v2 && h.controllers.empty()) out = "process tracking and cgroup.kill";
  }
  std::string d;
  if (!v1.empty()) d = "cgroup v1 (" + v1 + ")";
  if (!v2.empty()) d += std::string(d.empty() ? "" : " + ") + "cgroup v2 (" + v2 + ")";
  return d;
}

bool CgroupDriver::limits_memory() const {
  return std::any_of(hierarchies_.begin(), hierarchies_.end(), [](const Hierarchy& h) {
    return std::find(h.controllers.begin(), h.controllers.end(), "memory") != h.controllers.end();
  });
}

bool CgroupDriver::limits_cpu() const {
  return std::any_of(hierarchies_.begin(), hierarchies_.end(), [](const Hierarchy& h) {
    return std::find(h.controllers.begin(), h.controllers.end(), "cpu") != h.controllers.end();
  });
}

Result<CgroupPaths> CgroupDriver::Create(const std::string& id, const CgroupLimits& limits) const {
  CgroupPaths paths;
  auto fail = [&](Status s) -> Result<CgroupPaths> {
    Remove(paths).ok();
    return s;
  };
  for (const Hierarchy& h : hierarchies_) {
    if (::mkdir(h.parent.c_str(), 0755) != 0 && errno != EEXIST) {
      return fail(Internal("cannot create cgroup " + h.parent + ": " + std::strerror(errno)));
    }
    if (h.v2 && !h.controllers.empty()) {
      for (const auto& c : h.controllers) {
        if (Status s = WriteValue(h.parent, "cgroup.subtree_control", "+" + c); !s.ok()) {
          return fail(s);
        }
      }
    }
    std::string dir = h.parent + "/" + id;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return fail(Internal("cannot create cgroup " + dir + ": " + std::strerror(errno)));
    }
    paths.dirs.push_back(dir);
    auto has = [&](const char* c) {
      return std::find(h.controllers.begin(), h.controllers.end(), c) != h.controllers.end();
    };
    if (h.v2 && ::access((dir + "/cgroup.kill").c_str(), W_OK) == 0) {
      paths.kill_file = dir + "/cgroup.kill";
    }
    Status s = Status::Ok();
    if (has("memory")) {
      paths.memory_dir = dir;
      paths.v2_memory = h.v2;
      if (limits.memory_bytes) {
        std::string bytes = std::to_string(*limits.memory_bytes);
        s = WriteValue(dir, h.v2 ? "memory.max" : "memory.limit_in_bytes", bytes);
        // Like the kubelet without swap: the limit is the limit.
        if (s.ok() && h.v2 && ::access((dir + "/memory.swap.max").c_str(), W_OK) == 0) {
          s = WriteValue(dir, "memory.swap.max", "0");
        }
      }
    }
    if (s.ok() && has("cpu")) {
      if (limits.cpu_millis) {
        int64_t quota = std::max<int64_t>(1000, *limits.cpu_millis * kCfsPeriodUs / 1000);
        if (h.v2) {
          s = WriteValue(dir, "cpu.max",
                         std::to_string(quota) + " " + std::to_string(kCfsPeriodUs));
        } else {
          s = WriteValue(dir, "cpu.cfs_period_us", std::to_string(kCfsPeriodUs));
          if (s.ok()) s = WriteValue(dir, "cpu.cfs_quota_us", std::to_string(quota));
        }
      }
      if (s.ok() && limits.cpu_shares_millis) {
        // The kubelet's MilliCPUToShares, and its shares -> weight conversion on v2.
        int64_t shares = std::max<int64_t>(2, *limits.cpu_shares_millis * 1024 / 1000);
        shares = std::min<int64_t>(shares, 262144);
        if (h.v2) {
          s = WriteValue(dir, "cpu.weight", std::to_string(1 + ((shares - 2) * 9999) / 262142));
        } else {
          s = WriteValue(dir, "cpu.shares", std::to_string(shares));
        }
      }
    }
    if (s.ok() && has("pids") && limits.pids) {
      s = WriteValue(dir, "pids.max", std::to_string(*limits.pids));
    }
    if (!s.ok()) return fail(s);
  }
  return paths;
}

bool CgroupDriver::Kill(const CgroupPaths& paths) {
  if (paths.empty()) return true;
  std::vector<std::string> files = paths.ProcsFiles();
  std::vector<const char*> raw;
  raw.reserve(files.size());
  for (const auto& f : files) raw.push_back(f.c_str());
  return async_safe::KillCgroup(raw.data(), static_cast<int>(raw.size()),
                                paths.kill_file.empty() ? nullptr : paths.kill_file.c_str(), 100);
}

bool CgroupDriver::Populated(const CgroupPaths& paths) {
  for (const auto& f : paths.ProcsFiles()) {
    std::string text = ReadSmallFile(f);
    if (text.find_first_of("0123456789") != std::string::npos) return true;
  }
  return false;
}

Status CgroupDriver::Remove(const CgroupPaths& paths) {
  if (paths.empty()) return Status::Ok();
  Kill(paths);
  Status result = Status::Ok();
  for (const auto& dir : paths.dirs) {
    if (::rmdir(dir.c_str()) != 0 && errno != ENOENT && result.ok()) {
      result = Internal("cannot remove cgroup " + dir + ": " + std::strerror(errno));
    }
    // The server's parent goes once its last pod is gone (EBUSY while others live).
    ::rmdir(dir.substr(0, dir.rfind('/')).c_str());
  }
  return result;
}

int64_t CgroupDriver::OomKills(const CgroupPaths& paths) {
  if (paths.memory_dir.empty()) return 0;
  if (paths.v2_memory)
    return KeyedValue(ReadSmallFile(paths.memory_dir + "/memory.events"), "oom_kill");
  return KeyedValue(ReadSmallFile(paths.memory_dir + "/memory.oom_control"), "oom_kill");
}

}  // namespace muster::server
