// Starting one local process under a shim, the way containerd-shim does it, so the
// process's exit status survives a `kill -9` of the server:
//
//   server --fork--> shim (setsid; all signals blocked) --fork--> child (own process
//   group, pgid = pid; stdout+stderr -> log; chdir; execvpe)
//
// The shim reports the child's pid over a pipe and then waits on the release pipe
// before it reaps the child, so the server can read the child's start time from /proc
// (a zombie at worst) and make its state file durable first. Then the shim waits for
// the child, SIGKILLs what is left of the child's process group (a container's
// processes die with its main process), writes `exit` atomically (tmp + rename +
// fsync), reaps the killed members (it is their subreaper; at most ~1 s) and _exits. The shim never
// execs: after fork it runs only async-signal-safe code on strings prepared before the fork,
// because the server is multi-threaded.
//
// Why the shim *blocks* TERM/INT/HUP instead of ignoring them: an ignored signal
// stays ignored in the forked child and a signal generated for an ignored signal is
// discarded, so a Terminate racing the child's start would be lost. Blocked, it stays
// pending in the child and is delivered when the child unblocks just before exec.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

// Resolves argv[0] like execvp would with `path_env` as PATH: a name with a '/' is
// taken as is (relative to `working_dir`), otherwise the first executable regular
// file in PATH's directories. NotFound / FailedPrecondition with a readable message.
Result<std::string> FindExecutable(const std::string& name, const std::string& path_env,
                                   const std::string& working_dir);

struct ShimLaunch {
  std::string executable;         // resolved path (FindExecutable)
  std::vector<std::string> argv;  // argv[0] as the user wrote it
  std::vector<std::string> env;   // "NAME=value", the child's whole environment
  std::string working_dir;        // exists
  std::string log_path;           // stdout+stderr, opened O_APPEND (created/truncated)
  std::string dir;                // the process directory: exit files, fsync target
};

// A shim stopped at the handshake: the child exists (pid == pgid) and the shim will
// not reap it before ReleaseShim.
struct StartedShim {
  int shim_pid = 0;
  int child_pid = 0;
  int release_fd = -1;  // write end of the release pipe
};

// Forks the shim and waits for its report. On error no process is left behind.
Result<StartedShim> StartShim(const ShimLaunch& launch);

// Lets the shim wait for the child and record its exit. Closing the release pipe is
// the signal, so a server that dies before calling this releases the shim as well.
void ReleaseShim(StartedShim& shim);

// The files the shim writes in ShimLaunch::dir.
inline constexpr char kExitFileName[] = "exit";
inline constexpr char kExitTmpFileName[] = "exit.tmp";

}  // namespace muster::server
