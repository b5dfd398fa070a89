// Decision log: what the engine decided, when and why, in the order it happened.
// The simulator prints it for debugging; the server exposes it for `describe`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/clock.h"

namespace muster::engine {

struct LogEntry {
  Time time = 0;
  std::string workload;  // key, or a node name for node events
  std::string action;    // Submit, Admit, Start, Pending, Preempt, Evict, Finish, Fail, NodeLost...
  std::string reason;    // machine-readable
  std::string message;   // one line
};

class DecisionLog {
 public:
  void Add(LogEntry entry) { entries_.push_back(std::move(entry)); }
  void Reserve(size_t entries) { entries_.reserve(entries); }
  const std::vector<LogEntry>& entries() const { return entries_; }
  // The entries so far, moved out; the log is empty after.
  std::vector<LogEntry> Take() {
    std::vector<LogEntry> out;
    out.swap(entries_);
    return out;
  }
  // "t=100 Admit team-a/a-job: ..." lines, for debugging output.
  std::string ToString() const;

 private:
  std::vector<LogEntry> entries_;
};

}  // namespace muster::engine
