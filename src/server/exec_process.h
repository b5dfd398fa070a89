// A command started inside a running pod for `kubectl exec`, as a container runtime's
// exec does it: in the pod's cgroup (its limits count it, its end kills it), its mount
// and UTS namespaces (the pod's volumes, /etc/hosts and hostname), as the account its
// main process runs as, with that process's environment, in the container's working
// directory. The command gets its own session and process group; its standard streams
// are pipes back to the server, or one pseudo-terminal (`kubectl exec -t`).
//
// The child between fork and exec is async-signal-safe only (the server runs
// threads): everything it touches is prepared before the fork.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/process_launch.h"

namespace muster::server {

struct ExecPlan {
  // argv[0] is looked up in the PATH of `env` (inside the pod's mount namespace) unless
  // it holds a '/'.
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "KEY=VALUE", the whole environment
  std::string working_dir;       // "" = "/"; one that cannot be entered falls back to "/"
  // The process whose mount and UTS namespaces the command enters (0: the server's;
  // entered only where they differ from the server's, which needs root), and its start
  // time (ProcessStat): a later process that reused the pid is never entered.
  pid_t namespaces_of = 0;
  uint64_t namespaces_of_start_ticks = 0;
  std::vector<std::string> cgroup_procs;   // cgroup.procs files to join first
  std::optional<Credentials> credentials;  // nullopt: the server's own
  bool no_new_privs = false;
};

struct ExecStreams {
  bool in = false;   // stdin from the client (else /dev/null)
  bool out = true;   // stdout to the client (else /dev/null)
  bool err = true;   // stderr to the client (else /dev/null; with a tty it is the terminal)
  bool tty = false;  // one pseudo-terminal for all three
};

// A started command: the server's ends of its streams (-1 where not asked for; with a
// tty, `out` and `in` are the terminal's master, `err` is -1). Owns them: Close().
struct ExecProcess {
  pid_t pid = 0;  // also its process group and session
  int in = -1;
  int out = -1;
  int err = -1;
  bool tty = false;

  void Close();
};

// Starts `plan` with `streams`. A command that cannot be found or executed still
// starts: it writes why on its stderr (or terminal) and exits 127 (126 when it was
// found but cannot be executed), as a shell does. Internal when the process cannot be
// created at all (pipes, fork).
Result<ExecProcess> StartExecProcess(const ExecPlan& plan, const ExecStreams& streams);

// What an exec into process `pid` (started at `start_ticks`, ProcessStat) inherits
// from it, read from /proc: its environment, credentials and no_new_privs. NotFound
// once it is gone (or the pid is another process's now).
struct ProcessIdentity {
  std::vector<std::string> env;
  Credentials credentials;
  bool no_new_privs = false;
};
Result<ProcessIdentity> ReadProcessIdentity(pid_t pid, uint64_t start_ticks);

}  // namespace muster::server
