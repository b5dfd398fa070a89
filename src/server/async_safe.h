// Helpers the process shim uses between fork and exec (process_launch.h): the server
// is multi-threaded, so a forked child may only call async-signal-safe functions:
// plain system calls on memory prepared before the fork. No allocation, no locale, no
// stdio in here.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace muster::server::async_safe {

size_t Strlen(const char* s);
// Writes all of `data` (retrying EINTR and short writes); false on error.
bool WriteAll(int fd, const char* data, size_t size);
void WriteString(int fd, const char* s);
// Appends the decimal form of `value` at buf[*len]; buf needs room for 21 chars.
void AppendInt(char* buf, size_t* len, long long value);
// "muster: <what> <subject>: <error> (errno N)\n" to fd, without strerror (it may
// allocate for its locale).
void WriteFailure(int fd, const char* what, const char* subject, int error);
// Writes `text` to `path` (O_WRONLY|O_CLOEXEC, no create, no truncation: cgroup and
// proc files); the errno on failure, 0 on success.
int WriteFile(const char* path, const char* text);
// Parses a non-negative decimal at *p, advancing past it; -1 when there is none.
long long ParseInt(const char** p, const char* end);

// SIGKILLs every process listed in the `cgroup.procs` files (one per hierarchy the
// pod's cgroup lives in), or writes "1" to `kill_file` (cgroup v2's cgroup.kill) when
// it is not null. Repeats until the files list nothing, at most `rounds` times (a
// process may fork while the list is read); returns true when they were empty.
bool KillCgroup(const char* const* procs_files, int count, const char* kill_file, int rounds);

}  // namespace muster::server::async_safe
