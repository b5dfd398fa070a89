// Running a helper program of the host from the server (podman's `image exists`,
// `stop`, `rm`): posix_spawn rather than fork, because the server runs threads; the
// child gets no blocked signals and default SIGPIPE (RunServe blocks SIGINT/SIGTERM
// and ignores SIGPIPE, which it would inherit), stdin from /dev/null and `env` as
// its whole environment.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

struct CommandResult {
  int exit_code = 0;   // exit status, or 128 + signal
  std::string output;  // stdout and stderr together (the first MiB)
};

// Runs `argv` (argv[0] an executable path) to its end; kills it past `timeout_ms`
// (Unavailable). Internal when it cannot be started.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                 const std::vector<std::string>& env);

// Starts `argv` with its output discarded and returns at once; reap it with
// ReapCommand.
Result<pid_t> SpawnCommand(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env);

// True when `pid` (from SpawnCommand) has ended and is reaped (or is unknown).
bool ReapCommand(pid_t pid);

}  // namespace muster::server
