// Internal to process_launch: everything the shim and the child touch after fork,
// as plain pointers into memory StartShim prepared before it (see async_safe.h for
// why). Not part of the server's API.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace muster::server::shim {

struct Mount {
  int kind;  // MountStep::Kind
  const char* source;
  const char* target;
  bool read_only;
  bool target_is_file;
  bool create_target;
  const char* options;
};

struct Plan {
  const char* executable;
  char* const* argv;
  char* const* envp;
  const char* working_dir;
  bool create_working_dir;
  const char* dir;
  const char* exit_path;
  const char* exit_tmp_path;
  const char* execed_path;  // kExecedFileName, made once the child exec'd
  // Log files, newest first: log_paths[0] is the live file, [k] its k-th rotation.
  const char* const* log_paths;
  int log_files;
  int64_t log_max_bytes;
  const char* const* cgroup_procs;
  int cgroup_count;
  const char* cgroup_kill;  // null when none
  bool private_mounts;
  const Mount* mounts;
  int mount_count;
  int* mount_fds;        // scratch, mount_count entries
  const char* hostname;  // null or empty: no UTS namespace
  bool set_credentials;
  uid_t uid;
  gid_t gid;
  const gid_t* groups;
  int group_count;
  bool no_new_privs;
  int log_fd;  // the live log file, opened by the server
  int null_fd;
  int report_fd;   // shim -> server: the child's pid, or -errno
  int release_fd;  // server -> shim: a byte when the state is durable; EOF: never ran
  int max_fd;
};

// The child: isolation, credentials, exec. Output goes to `out_fd` (the log pipe).
// It execs only once it reads a byte from `go_fd` (the shim's release), and exits
// 127 without exec on EOF.
[[noreturn]] void RunChild(const Plan& plan, int out_fd, int go_fd);

// The shim: forks the child, pumps its output into the log, records its exit.
[[noreturn]] void RunShim(const Plan& plan);

}  // namespace muster::server::shim
