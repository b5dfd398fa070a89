// A handle on one process through /proc that can never reach a later process that
// reused its pid: /proc/<pid> is opened first, then checked to be the process that
// started at the recorded time; every read through the handle resolves relative to
// that open directory, which the kernel fails (ESRCH/ENOENT) once the process has
// ended, whoever holds the pid afterwards. `kubectl exec` takes a pod's identity,
// environment and namespaces through it: read by pid alone, a pod that ended just
// before (its exit not yet seen) could hand over another account's process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace muster::server {

class ProcessHandle {
 public:
  // nullopt when `pid` does not exist, is not the process started at `start_ticks`
  // (ProcessStat), or is a zombie.
  static std::optional<ProcessHandle> Open(int pid, uint64_t start_ticks);

  ProcessHandle(ProcessHandle&& other) noexcept : dir_(other.dir_) { other.dir_ = -1; }
  ProcessHandle& operator=(ProcessHandle&& other) noexcept;
  ProcessHandle(const ProcessHandle&) = delete;
  ProcessHandle& operator=(const ProcessHandle&) = delete;
  ~ProcessHandle();

  // The contents of /proc/<pid>/<name>, at most `max_bytes`; nullopt when the process
  // has ended (or the file cannot be read).
  std::optional<std::string> Read(const char* name, size_t max_bytes) const;
  // An O_CLOEXEC descriptor of /proc/<pid>/<name> opened read-only, or -1 (the process
  // has ended).
  int OpenFile(const char* name) const;

 private:
  explicit ProcessHandle(int dir) : dir_(dir) {}
  int dir_ = -1;
};

}  // namespace muster::server
