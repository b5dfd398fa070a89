// Which stored Events go: those last recorded more than `ttl_seconds` ago
// (kube-apiserver's --event-ttl, 1 h by default), and, while more than `max_events`
// are left, the oldest of the rest. Upstream bounds events only by time (and by
// etcd's quota); serve's store is one machine's disk and its memory holds the text
// of every object, so a churning server (a job's Admitted, Started and Completed
// events, ~46 a second in bench/serve_churn.sh) needs a bound on the count too.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "control/change.h"
#include "control/object_reader.h"

namespace muster::server {

struct EventRetention {
  double ttl_seconds = 3600;
  // 0: no limit on the count.
  int64_t max_events = 10000;
};

// "2026-11-25T02:21:58Z" or with a fraction ("...58.123456Z"): Unix seconds; nullopt
// for anything else.
std::optional<double> ParseRfc3339Utc(const nlohmann::json& value);

// When `event` was last recorded: the latest of lastTimestamp, eventTime and
// metadata.creationTimestamp; nullopt when it has none of them.
std::optional<double> EventLastRecorded(const nlohmann::json& event);

// When each stored Event was last recorded, kept from the store's changes: what the
// garbage collector decides from, so a trim never lists and parses every event (at the
// limit, 10,000 objects each time: the largest transient allocation of a churning
// server).
class EventTimes {
 public:
  // An event written (its time read from the object) or deleted; other kinds ignored.
  void Apply(const control::Change& change);
  void Put(const nlohmann::json& event);
  void Erase(const std::string& namespace_, const std::string& name);
  size_t size() const { return last_.size(); }

  // The events to delete at `now` (Unix seconds): every one last recorded more than
  // `retention.ttl_seconds` ago, then the oldest (events without a time first, then
  // by namespace and name) until at most `retention.max_events` are left.
  std::vector<control::ObjectKey> ToDelete(double now, const EventRetention& retention) const;

 private:
  // (namespace, name) -> when last recorded; nullopt when the event says no time.
  std::map<std::pair<std::string, std::string>, std::optional<double>> last_;
};

}  // namespace muster::server
