// What /proc says about a process: enough to tell "the process we started" from a
// later process that reused its pid (the start time, field 22 of /proc/<pid>/stat,
// in clock ticks since boot) and from a zombie. Linux only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace muster::server {

struct ProcessStat {
  char state = '?';          // field 3: R, S, D, Z, T, ...
  uint64_t start_ticks = 0;  // field 22: start time in clock ticks after boot
};

// nullopt when the process does not exist (or /proc is unreadable).
std::optional<ProcessStat> ReadProcessStat(int pid);
// The fields of one /proc/<pid>/stat line; nullopt when it is not one.
std::optional<ProcessStat> ParseProcessStat(std::string_view line);

// True when `pid` exists, started at `start_ticks` and is not a zombie.
bool ProcessAlive(int pid, uint64_t start_ticks);

// /proc/sys/kernel/random/boot_id: start times only mean something within one boot.
// "" when unreadable.
std::string CurrentBootId();

}  // namespace muster::server
