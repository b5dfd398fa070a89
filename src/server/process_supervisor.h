// ProcessSupervisor: runs each bound pod of `muster serve` as a local process and
// reports how it ended, across server restarts. The controller decides what to start
// and stop; this layer only starts, signals, reaps and recovers processes.
//
// Layout: one directory per process id under `root`:
//   <root>/<id>/state.json  shim pid, process pid (= pgid), their /proc start times and
//                           the boot id; written durably before Start returns
//   <root>/<id>/log         stdout + stderr of the current run (O_APPEND, one file)
//   <root>/<id>/log.1       the previous run's log (`kubectl logs --previous`)
//   <root>/<id>/exit        "exit_code N\nsignal S\n", written by the shim (tmp + rename)
//   <root>/<id>/work/       default working directory (kept across restarts of the id)
//
// Each process runs under a shim (process_launch.h) in its own process group, so
// Terminate reaches the whole tree (torch spawns workers) and the exit file survives a
// kill -9 of the server. When the main process exits, the shim SIGKILLs what is left
// of its group, as a container runtime does. Destroying the supervisor never kills
// processes: a restarted server adopts them with Recover(). For a clean shutdown call
// TerminateAll() then WaitAll().
//
// Environment: Kubernetes does not pass the host's environment to containers, but a
// local process needs a usable one. The child gets PATH, HOME, USER, LANG, LC_ALL, TZ,
// TMPDIR, LD_LIBRARY_PATH and PYTHONPATH from the server's environment where set (PATH
// defaults to /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin), then
// ProcessSpec::env on top. Nothing else is inherited (CUDA_VISIBLE_DEVICES included).
// argv[0] is looked up in the resulting PATH before anything is started.
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

namespace muster::server {

struct ProcessSpec {
  std::string id;                          // unique, [A-Za-z0-9._-]+; also the directory name
  std::vector<std::string> argv;           // container command + args; argv[0] looked up on PATH
  std::map<std::string, std::string> env;  // the pod's env, on top of the base env
  std::string working_dir;                 // "" = <root>/<id>/work; created if missing
};

struct ProcessExit {
  std::string id;
  int exit_code = 0;  // exit status, or 128+signal when killed by a signal (kubelet)
  int signal = 0;     // terminating signal, 0 if it exited
  bool lost = false;  // vanished without a recorded status: exit_code 137, signal 0
};

struct RecoveredProcess {
  std::string id;
  bool running = false;             // adopted: Running(), Terminate, Poll work on it
  std::optional<ProcessExit> exit;  // set when !running
};

class ProcessSupervisor {
 public:
  // `root`: directory holding one subdirectory per process id (created if missing).
  explicit ProcessSupervisor(std::string root);
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

  std::string LogPath(const std::string& id) const;          // <root>/<id>/log
  std::string PreviousLogPath(const std::string& id) const;  // <root>/<id>/log.1

  // After a server restart: every <root>/<id> with a state file from an earlier
  // server, in id order. Still-running ones are adopted (Running() true, Poll()
  // reports their exit later, Terminate works); finished ones carry their recorded
  // exit, or lost = true. Exits a previous server already reported are reported again
  // (at least once across restarts): match them against the pod's stored status.
  // Call once, before Start.
  std::vector<RecoveredProcess> Recover();

  // Deletes a finished process's directory (pod deleted). FailedPrecondition while
  // Running(id).
  Status Remove(const std::string& id);

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
  };

  std::string Dir(const std::string& id) const;
  bool ShimAlive(Tracked& process);
  std::optional<ProcessExit> CheckFinished(const std::string& id, Tracked& process);
  void EnforceDeadline(Tracked& process, std::chrono::steady_clock::time_point now);
  std::optional<ProcessExit> ReadExitFile(const std::string& id) const;
  void TerminateLocked(const std::string& id, double grace_seconds);

  std::string root_;
  mutable std::mutex mu_;
  std::map<std::string, Tracked> running_;
};

}  // namespace muster::server
