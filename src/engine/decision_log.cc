#include "engine/decision_log.h"

#include <fmt/format.h>

namespace muster::engine {

std::string DecisionLog::ToString() const {
  std::string out;
  for (const auto& e : entries_) {
    out += fmt::format("t={} {} {}", e.time, e.action, e.workload);
    if (!e.reason.empty()) out += " [" + e.reason + "]";
    if (!e.message.empty()) out += ": " + e.message;
    out += "\n";
  }
  return out;
}

}  // namespace muster::engine
