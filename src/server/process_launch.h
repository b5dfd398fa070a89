// Starting one local process under a shim, the way containerd-shim/conmon do it, so
// the process's exit status survives a `kill -9` of the server:
//
//   server --fork--> shim (setsid; all signals blocked; log pump) --fork--> child
//   (own process group; its pod's cgroup; private mount and UTS namespaces with the
//   pod's hostname, /etc/hosts and volumes; the pod owner's uid/gids; chdir; execve)
//
// The shim reports the child's pid over a pipe and then waits on the release pipe;
// the child, set up, waits before exec until the shim passes the release on. So the
// server reads the child's start time from /proc and makes its state file durable
// before the command runs at all. A server killed -9 before that closes the release
// pipe unreleased: the shim kills the child, which never ran the command (a restarted
// server finds no state file and starts the pod again, so a run it could not see
// would be a second run). Once released, the shim copies the child's stdout+stderr
// (one pipe) into the log, rotating it at `log_max_bytes` and keeping `log_max_files`
// files (the kubelet's containerLogMaxSize/MaxFiles), reaps the child, kills what is
// left of its process group and cgroup (a container's processes die with its main
// process, `setsid` ones included), drains the log, writes `exit` atomically (tmp +
// rename + fsync) and _exits. The shim never execs: after fork it runs only
// async-signal-safe code on memory prepared before the fork, because the server is
// multi-threaded.
//
// Why the shim *blocks* TERM/INT/HUP instead of ignoring them: an ignored signal
// stays ignored in the forked child and a signal generated for an ignored signal is
// discarded, so a Terminate racing the child's start would be lost. Blocked, it stays
// pending in the child and is delivered when the child unblocks just before exec.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

// Resolves argv[0] like execvp would with `path_env` as PATH: a name with a '/' is
// taken as is (relative to `working_dir`), otherwise the first executable regular
// file in PATH's directories. NotFound / FailedPrecondition with a readable message.
Result<std::string> FindExecutable(const std::string& name, const std::string& path_env,
                                   const std::string& working_dir);

// One step of the child's private mount namespace, in order.
struct MountStep {
  enum class Kind {
    kBind,   // source (opened before any step, so later steps cannot hide it) on target
    kTmpfs,  // an empty tmpfs on target (hides what was there: the data directory)
    // An overlay on target (an existing directory) whose upper layer is `source`
    // (created, below the data directory's tmpfs): mount points made below target
    // then exist for the pod only. `options` is the mount data.
    kOverlay,
  };
  Kind kind = Kind::kBind;
  std::string source;
  std::string target;
  bool read_only = false;
  bool target_is_file = false;  // a bind of a file (/etc/hosts): the mount point is a file
  bool create_target = false;   // create the mount point (and parents) when missing
  std::string options;          // tmpfs: mount data ("mode=0755,size=1m" when empty)
};

// Who the child runs as (setgroups + setgid + setuid before exec).
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
};

struct ShimLaunch {
  std::string executable;         // resolved path (FindExecutable)
  std::vector<std::string> argv;  // argv[0] as the user wrote it
  std::vector<std::string> env;   // "NAME=value", the child's whole environment
  std::string working_dir;
  bool create_working_dir = false;  // mkdir -p it as the child's user when missing
  std::string log_path;             // stdout+stderr; rotated to log_path.1, .2 ...
  int64_t log_max_bytes = 0;        // 0: no cap
  int32_t log_max_files = 1;
  std::string dir;  // the process directory: exit files, fsync target
  // cgroup.procs files the child joins before anything else, and how the shim kills
  // the cgroup once the child exits (cgroup.kill, else by listing the procs files).
  std::vector<std::string> cgroup_procs;
  std::string cgroup_kill;
  // Isolation (root only): private mount namespace with `mounts`; UTS namespace with
  // `hostname` when it is not empty.
  bool private_mounts = false;
  std::vector<MountStep> mounts;
  std::string hostname;
  std::optional<Credentials> credentials;  // nullopt: the server's own
  bool no_new_privs = false;               // setuid binaries cannot raise privileges
};

// A shim stopped at the handshake: the child exists (pid == pgid), set up but not
// exec'd, and the shim will not reap it before ReleaseShim.
struct StartedShim {
  int shim_pid = 0;
  int child_pid = 0;
  int release_fd = -1;  // write end of the release pipe
};

// Forks the shim and waits for its report. On error no process is left behind.
Result<StartedShim> StartShim(const ShimLaunch& launch);

// Lets the child exec the command and the shim wait for it and record its exit: a
// byte on the release pipe, then it is closed.
void ReleaseShim(StartedShim& shim);

// Closes the release pipe without releasing, as a server's death does: the shim
// kills the child before it ran the command and exits without an exit file.
void CancelShim(StartedShim& shim);

// The files the shim writes in ShimLaunch::dir.
inline constexpr char kExitFileName[] = "exit";
inline constexpr char kExitTmpFileName[] = "exit.tmp";
// Made by the shim once the child exec'd the command (or died trying): until then the
// child is a copy of the server (its credentials, environment and namespaces), which
// nothing may take for the pod's (an exec into it, its identity).
inline constexpr char kExecedFileName[] = "execed";

}  // namespace muster::server
