// ProcessSupervisor: runs each bound pod of `muster serve` as a local process and
// reports how it ended, across server restarts. The controller decides what to start
// and stop; this layer only starts, signals, reaps and recovers processes.
//
// Layout: one directory per process id under `root` (0711: enter, never list):
//   <root>/<id>/state.json  shim pid, process pid (= pgid), their /proc start times, the
//                           boot id and the cgroup; written durably before Start returns
//   <root>/<id>/log         stdout + stderr of the current run, rotated by the shim to
//                           log.1 ... log.<max_files-1> at `log_max_bytes` (0600)
//   <root>/<id>/log.previous[.N]  the previous run's files (`kubectl logs --previous`)
//   <root>/<id>/exit        "exit_code N\nsignal S\n", written by the shim (tmp + rename)
//   <root>/<id>/work/       default working directory (kept across restarts of the id;
//                           0700, owned by the process's user)
//
// Each process runs under a shim (process_launch.h) in its own process group, and in
// its own cgroup when the machine has them (pod_cgroup.h), so Terminate reaches the
// whole tree (torch spawns workers; daemons that setsid stay in the cgroup) and the
// exit file survives a kill -9 of the server. When the main process exits, the shim
// SIGKILLs what is left of its group and cgroup, as a container runtime does.
// Destroying the supervisor never kills processes: a restarted server adopts them
// with Recover(). For a clean shutdown call TerminateAll() then WaitAll().
//
// Environment: nothing of the server's is inherited (Kubernetes does not pass the
// host's environment to containers): the child gets exactly ProcessSpec::env, plus
// PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin when it sets none.
// argv[0] is looked up in that PATH before anything is started.
//
// Exit codes follow the kubelet: the exit status, or 128 + signal when a signal
// killed it; 127 when the command could not be executed after all (the reason is in
// the log). A process whose shim and process are gone without an exit file (shim
// killed, machine rebooted) is reported with lost = true, exit_code 137, signal 0.
//
// Thread-safety: every method takes one internal mutex, so calls from any thread
// are safe; Start holds it for the fork and the durable state write (milliseconds).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/pod_cgroup.h"
#include "server/process_launch.h"

namespace muster::server {

struct ProcessSpec {
  std::string id;                          // unique, [A-Za-z0-9._-]+; also the directory name
  std::vector<std::string> argv;           // container command + args; argv[0] looked up on PATH
  std::map<std::string, std::string> env;  // the whole environment (see above)
  // "" = <root>/<id>/work (created, owned by the process's user). Any other directory
  // is entered as the process's user; a missing one is created by that user (so only
  // where it may write), as a container runtime creates a workingDir in its image.
  std::string working_dir;
  std::optional<Credentials>
      credentials;  // run as this uid/gids (root only); nullopt: as the server
  bool no_new_privs = false;
  // Private mount namespace (root only): the mounts, in order (process_launch.h).
  bool private_mounts = false;
  std::vector<MountStep> mounts;
  std::string hostname;  // its own UTS namespace with this hostname; "" = the machine's
  CgroupLimits limits;   // enforced when the supervisor has cgroups
};

struct ProcessExit {
  std::string id;
  int exit_code = 0;        // exit status, or 128+signal when killed by a signal (kubelet)
  int signal = 0;           // terminating signal, 0 if it exited
  bool lost = false;        // vanished without a recorded status: exit_code 137, signal 0
  bool oom_killed = false;  // the kernel's OOM killer killed a process of its cgroup
};

struct SupervisorOptions {
  // The kubelet's containerLogMaxSize / containerLogMaxFiles defaults.
  int64_t log_max_bytes = 10 << 20;
  int32_t log_max_files = 5;
  // Per-process cgroups; !available() (the default): processes are not limited and
  // only their process group is killed.
  CgroupDriver cgroups;
};

struct RecoveredProcess {
  std::string id;
  bool running = false;             // adopted: Running(), Terminate, Poll work on it
  std::optional<ProcessExit> exit;  // set when !running
};

class ProcessSupervisor {
 public:
  // `root`: directory holding one subdirectory per process id (created if missing).
  explicit ProcessSupervisor(std::string root, SupervisorOptions options = {});
  // Leaves every process running (see above).
  ~ProcessSupervisor();
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Starts the process now; returns once its state file is durable. Fails, leaving no
  // process behind, with InvalidArgument (bad id, empty argv), NotFound (argv[0] not
  // found or not executable), AlreadyExists (the id is running or its exit has not been
  // reported by Poll yet) or Internal (fork/pipe/file errors). The previous run's log
  // is kept as log.1.
  Status Start(const ProcessSpec& spec);

  // SIGTERM to the process group now; SIGKILL to the group once `grace_seconds` have
  // passed and it is still alive (enforced by Poll). grace <= 0 kills at once. A
  // second call can shorten the deadline, never extend it. No-op for unknown or
  // finished ids.
  void Terminate(const std::string& id, double grace_seconds);
  void TerminateAll(double grace_seconds);

  // Non-blocking: reports what finished since the last call (in id order) and
  // enforces kill deadlines. Each exit is reported exactly once per supervisor.
  std::vector<ProcessExit> Poll();

  // Polls every ~10 ms until nothing runs or `timeout_seconds` passed; returns the
  // exits seen meanwhile (RunningIds() tells what is still running).
  std::vector<ProcessExit> WaitAll(double timeout_seconds);

  // True from Start (or adoption by Recover) until Poll reports the exit.
  bool Running(const std::string& id) const;
  std::vector<std::string> RunningIds() const;  // sorted
  // The process's pid (= its process group id) while Running(), else 0.
  int Pid(const std::string& id) const;
  // While Running() and once the command was exec'd: its pid and the cgroup.procs
  // files of its cgroup (empty without cgroups), which a command exec'd into it joins;
  // nullopt otherwise.
  struct Target {
    int pid = 0;
    uint64_t start_ticks = 0;  // ProcessStat's: tells it from a later process with its pid
    std::vector<std::string> cgroup_procs;
  };
  std::optional<Target> ExecTarget(const std::string& id) const;

  std::string LogPath(const std::string& id) const;          // <root>/<id>/log
  std::string PreviousLogPath(const std::string& id) const;  // <root>/<id>/log.previous

  // After a server restart: every <root>/<id> with a state file from an earlier
  // server, in id order. Still-running ones are adopted (Running() true, Poll()
  // reports their exit later, Terminate works); finished ones carry their recorded
  // exit, or lost = true. Exits a previous server already reported are reported again
  // (at least once across restarts): match them against the pod's stored status.
  // Call once, before Start.
  std::vector<RecoveredProcess> Recover();

  // Deletes a finished process's directory and cgroup (pod deleted).
  // FailedPrecondition while Running(id).
  Status Remove(const std::string& id);
  // Ids with a directory under root (finished or running), sorted.
  std::vector<std::string> KnownIds() const;

 private:
  struct Tracked {
    int shim_pid = 0;
    uint64_t shim_start_ticks = 0;
    int pid = 0;  // also the process group id
    uint64_t start_ticks = 0;
    bool shim_is_child = false;  // started by this supervisor: waitpid works on it
    bool shim_reaped = false;
    std::optional<std::chrono::steady_clock::time_point> kill_deadline;
    bool kill_sent = false;
    CgroupPaths cgroup;
  };

  std::string Dir(const std::string& id) const;
  bool ShimAlive(Tracked& process);
  std::optional<ProcessExit> CheckFinished(const std::string& id, Tracked& process);
  void EnforceDeadline(Tracked& process, std::chrono::steady_clock::time_point now);
  std::optional<ProcessExit> ReadExitFile(const std::string& id) const;
  void TerminateLocked(const std::string& id, double grace_seconds);

  std::optional<ProcessExit> Finish(const std::string& id, Tracked& process);
  void RotateLogs(const std::string& id) const;

  std::string root_;
  SupervisorOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Tracked> running_;
};

}  // namespace muster::server
