// Running a helper program of the host from the server (podman's `image exists`,
// `stop`, `rm`; nvidia-smi for GPU discovery): posix_spawn rather than fork, because the server
// runs threads; the child gets no blocked signals and default SIGPIPE (RunServe blocks
// SIGINT/SIGTERM and ignores SIGPIPE, which it would inherit), stdin from /dev/null and `env` as
// its whole environment.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

struct CommandResult {
  int exit_code = 0;   // exit status, or 128 + signal
  std::string output;  // stdout and stderr together (the first MiB)
};

struct CommandOptions {
  int timeout_ms = 5000;
  // The child's whole environment; unset: the server's own.
  std::optional<std::vector<std::string>> env;
  // Stderr into CommandResult::output beside stdout; false: to /dev/null (a listing
  // parsed from stdout must not get a warning in its middle).
  bool capture_stderr = true;
};

// Runs `argv` (argv[0] an executable path) to its end; kills it past the timeout
// (Unavailable). Internal when it cannot be started.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const CommandOptions& options);
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, int timeout_ms,
                                 const std::vector<std::string>& env);

// Starts `argv` with its output discarded and returns at once; reap it with
// ReapCommand.
Result<pid_t> SpawnCommand(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env);

// True when `pid` (from SpawnCommand) has ended and is reaped (or is unknown).
bool ReapCommand(pid_t pid);

// Starts `argv` with stdout and stderr into a pipe whose read end (`output_fd`,
// non-blocking, close-on-exec; the caller closes it) is returned at once: for a
// command that may run long (`podman pull`) on a thread that must not wait.
struct SpawnedCommand {
  pid_t pid = -1;
  int output_fd = -1;
};
Result<SpawnedCommand> SpawnCommandCapturing(const std::vector<std::string>& argv,
                                             const std::vector<std::string>& env);

// Appends what `fd` (non-blocking) holds now to `out`, up to `limit` bytes in all.
void ReadAvailable(int fd, std::string& out, size_t limit = 1 << 16);

// `pid`'s exit status (exit code, or 128 + signal) once it has ended, reaped; nullopt
// while it runs. -1 for a pid that is no child of ours.
std::optional<int> ReapCommandStatus(pid_t pid);

}  // namespace muster::server
