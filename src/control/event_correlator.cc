#include "control/event_correlator.h"

#include <utility>

namespace muster::control {

using nlohmann::json;

std::string EventCorrelator::KeyOf(const json& event) {
  auto text = [](const json& object, const char* field) -> std::string {
    if (!object.is_object()) return "";
    auto it = object.find(field);
    return it != object.end() && it->is_string() ? it->get<std::string>() : "";
  };
  const json involved = event.value("involvedObject", json::object());
  const json source = event.value("source", json::object());
  // client-go's getEventKey: the fields that make two events "the same".
  json key = json::array({text(source, "component"), text(source, "host"), text(involved, "kind"),
                          text(involved, "namespace"), text(involved, "name"),
                          text(involved, "uid"), text(involved, "apiVersion"), text(event, "type"),
                          text(event, "reason"), text(event, "message")});
  return key.dump();
}

bool EventCorrelator::Correlate(json& event) {
  if (!event.is_object() || capacity_ == 0) return true;
  std::string key = KeyOf(event);
  auto found = entries_.find(key);
  if (found == entries_.end()) {
    Entry entry;
    entry.key = std::move(key);
    entry.name = event["metadata"].value("name", "");
    entry.count = event.value("count", int64_t{1});
    entry.first_timestamp = event.value("firstTimestamp", json());
    lru_.push_front(std::move(entry));
    entries_[lru_.front().key] = lru_.begin();
    if (entries_.size() > capacity_) {
      entries_.erase(lru_.back().key);
      lru_.pop_back();
    }
    return true;
  }
  lru_.splice(lru_.begin(), lru_, found->second);
  Entry& entry = *found->second;
  ++entry.count;
  event["metadata"]["name"] = entry.name;
  event["count"] = entry.count;
  if (!entry.first_timestamp.is_null()) event["firstTimestamp"] = entry.first_timestamp;
  return false;
}

}  // namespace muster::control
