// Repeated Events on one object become one Event with a count, as client-go's
// EventCorrelator does (its EventLogger): an Event with the same source, involved
// object, type, reason and message as one recorded before is written as that Event
// again, with `count` one higher, its `firstTimestamp` and name kept and
// `lastTimestamp` the new one. A job restarting in a loop then has one "Restarting"
// Event with a growing count instead of one per restart. Like client-go, it remembers
// the last 4096 distinct events (least recently seen forgotten first); an Event the
// server has deleted meanwhile (its TTL or limit) is created again by the sink.
#pragma once

#include <cstddef>
#include <list>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

namespace muster::control {

class EventCorrelator {
 public:
  explicit EventCorrelator(size_t capacity = 4096) : capacity_(capacity) {}

  // Rewrites `event` (a core/v1 Event about to be written) into the Event to write.
  // Returns true when it is new (create it), false when it repeats an earlier one
  // (`event` now carries that one's name, count and firstTimestamp: update it).
  bool Correlate(nlohmann::json& event);

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string key;
    std::string name;
    int64_t count = 0;
    nlohmann::json first_timestamp;
  };
  static std::string KeyOf(const nlohmann::json& event);

  size_t capacity_;
  std::list<Entry> lru_;  // most recently seen first
  std::unordered_map<std::string, std::list<Entry>::iterator> entries_;
};

}  // namespace muster::control
