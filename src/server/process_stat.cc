#include "server/process_stat.h"

#include <fstream>
#include <sstream>
#include <string>

namespace muster::server {

std::optional<ProcessStat> ReadProcessStat(int pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return ParseProcessStat(line);
}

std::optional<ProcessStat> ParseProcessStat(std::string_view line) {
  // The command name (field 2) is in parentheses and may itself contain ") ", so the
  // fields after it are found from the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::istringstream fields(std::string(line.substr(close + 1)));
  ProcessStat stat;
  fields >> stat.state;  // field 3
  std::string skipped;
  for (int field = 4; field < 22; ++field) fields >> skipped;
  fields >> stat.start_ticks;  // field 22
  if (!fields) return std::nullopt;
  return stat;
}

bool ProcessAlive(int pid, uint64_t start_ticks) {
  auto stat = ReadProcessStat(pid);
  return stat && stat->start_ticks == start_ticks && stat->state != 'Z' && stat->state != 'X';
}

std::string CurrentBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace muster::server
