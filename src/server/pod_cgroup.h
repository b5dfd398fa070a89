// One cgroup per pod, so its CPU and memory limits hold for every process it starts
// and deleting it kills them all, `setsid` children included (a process group does
// not reach those). Works on cgroup v2 (one unified hierarchy) and on v1 or hybrid
// machines (memory, cpu and pids hierarchies, plus the unified one when mounted,
// for cgroup.kill). Like a delegated container manager, muster nests the pods under
// its own cgroup: <server's cgroup>/muster-<tag>/<pod>, so a server that is itself
// limited (a systemd unit, a container) keeps its pods inside its limits, and two
// servers on one machine (tag: their data directory) never share a cgroup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

struct CgroupLimits {
  std::optional<int64_t> memory_bytes;       // limits.memory
  std::optional<int64_t> cpu_millis;         // limits.cpu: CFS quota
  std::optional<int64_t> cpu_shares_millis;  // requests.cpu: cpu.shares / cpu.weight
  std::optional<int64_t> pids;               // pids.max
};

// Where one pod's cgroup lives; kept in the process's state file so a restarted
// server can still kill and remove it.
struct CgroupPaths {
  std::vector<std::string> dirs;  // one per hierarchy; processes join each dirs[i]/cgroup.procs
  std::string kill_file;          // cgroup v2 cgroup.kill when the kernel has it, else ""
  std::string memory_dir;         // for the OOM-kill count ("" without a memory controller)
  bool v2_memory = false;         // memory_dir is a v2 cgroup (memory.events)

  bool empty() const { return dirs.empty(); }
  std::vector<std::string> ProcsFiles() const;
};

class CgroupDriver {
 public:
  // Reads /proc/self/mountinfo and /proc/self/cgroup. `tag` names this server's
  // parent cgroup ("muster-<tag>"). A machine without usable cgroups (not mounted,
  // not writable: muster serve not run as root) yields a driver that is !available().
  static CgroupDriver Detect(const std::string& tag);
  // For tests: hierarchies under `root` (a fake /sys/fs/cgroup), the server at "/".
  static CgroupDriver ForRoot(const std::string& root, bool v2, const std::string& tag);

  bool available() const { return !hierarchies_.empty(); }
  // One line for the server log: "cgroup v1 (memory, cpu, cpuacct, pids) + v2 (kill)".
  std::string Describe() const;
  // Which limits this machine can enforce.
  bool limits_memory() const;
  bool limits_cpu() const;

  // Creates the pod's cgroup in every hierarchy and writes its limits. Internal
  // (naming the file) when a directory or limit cannot be written; nothing is left
  // behind then.
  Result<CgroupPaths> Create(const std::string& id, const CgroupLimits& limits) const;

  // SIGKILLs every process in the cgroup until it is empty (bounded: ~1 s).
  static bool Kill(const CgroupPaths& paths);
  static bool Populated(const CgroupPaths& paths);
  // Kills what is left, then removes the directories (and the parent once empty).
  static Status Remove(const CgroupPaths& paths);
  // How many processes the kernel's OOM killer killed in the cgroup.
  static int64_t OomKills(const CgroupPaths& paths);

 private:
  struct Hierarchy {
    std::string parent;                    // <mount><server's path>/muster-<tag>
    std::vector<std::string> controllers;  // those muster uses here
    bool v2 = false;
  };
  std::vector<Hierarchy> hierarchies_;
  bool v2_controllers_ = false;  // memory/cpu enabled for the pods' parent (v2)
};

}  // namespace muster::server
