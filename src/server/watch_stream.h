// WatchStream: one HTTP watch (`?watch=1`). Turns the hub's changes into the
// newline-delimited JSON events kubectl reads ({"type":"ADDED","object":{...}}),
// filtered to one resource, namespace and selectors, optionally as Table rows.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/resource_types.h"
#include "server/label_selector.h"
#include "server/table_printer.h"
#include "server/watch_hub.h"

namespace muster::server {

struct WatchFilter {
  const control::ResourceType* type = nullptr;
  std::string version;     // the version of the request path: objects are served in it
  std::string namespace_;  // "" for every namespace
  LabelSelector labels;
  FieldSelector fields;
  bool as_table = false;
  IncludeObject include = IncludeObject::kMetadata;
  bool bookmarks = false;  // allowWatchBookmarks
};

// Serves the object in the requested version: the store keeps one copy per object
// whatever version wrote it (the versions muster serves share one schema).
nlohmann::json PresentObject(nlohmann::json object, const control::ResourceType& type,
                             const std::string& version);

class WatchStream {
 public:
  // Streams changes after `from_rv`, preceded by `initial` (synthetic ADDED events
  // for the current objects when the client gave no resourceVersion).
  WatchStream(const WatchHub& hub, WatchFilter filter, int64_t from_rv,
              std::vector<nlohmann::json> initial, std::chrono::seconds timeout);

  // The next chunk of events (one JSON document per line); "" when nothing happened
  // within `wait`; nullopt when the watch is over (timeout, shutdown, or an ERROR
  // event already sent because the watcher fell behind the retained history).
  std::optional<std::string> Next(std::chrono::milliseconds wait);
  // Changes after the ones read so far exist: a "" from Next then means only that
  // one batch of the history held nothing this watch wants, not that it is idle.
  bool Behind() const { return !done_ && cursor_ < hub_.current_rv(); }

 private:
  bool Matches(const control::Change& change) const;
  std::string Event(const char* type, const nlohmann::json& object);

  const WatchHub& hub_;
  WatchFilter filter_;
  int64_t cursor_;
  std::vector<nlohmann::json> initial_;
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::steady_clock::time_point last_sent_;
  bool headers_sent_ = false;
  bool done_ = false;
};

}  // namespace muster::server
