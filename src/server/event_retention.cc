#include "server/event_retention.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>

namespace muster::server {

using nlohmann::json;

std::optional<double> ParseRfc3339Utc(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string text = value.get<std::string>();
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  double fraction = 0;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < text.size() && text[pos] == '.') {
    size_t end = pos + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    fraction = std::strtod(text.substr(pos, end - pos).c_str(), nullptr);
    pos = end;
  }
  if (pos + 1 != text.size() || text[pos] != 'Z') return std::nullopt;
  return static_cast<double>(timegm(&tm)) + fraction;
}

std::optional<double> EventLastRecorded(const json& event) {
  std::optional<double> last;
  auto consider = [&](const json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end()) return;
    if (auto t = ParseRfc3339Utc(*it); t && (!last || *t > *last)) last = t;
  };
  consider(event, "lastTimestamp");
  consider(event, "eventTime");
  if (auto meta = event.find("metadata"); meta != event.end() && meta->is_object())
    consider(*meta, "creationTimestamp");
  return last;
}

void EventTimes::Put(const json& event) {
  if (!event.is_object()) return;
  auto meta = event.find("metadata");
  if (meta == event.end() || !meta->is_object()) return;
  last_[{meta->value("namespace", ""), meta->value("name", "")}] = EventLastRecorded(event);
}

void EventTimes::Erase(const std::string& namespace_, const std::string& name) {
  last_.erase({namespace_, name});
}

void EventTimes::Apply(const control::Change& change) {
  if (change.resource != "events") return;
  if (change.type == control::ChangeType::kDeleted) {
    Erase(change.namespace_, change.name);
  } else {
    Put(change.Object());
  }
}

std::vector<control::ObjectKey> EventTimes::ToDelete(double now,
                                                     const EventRetention& retention) const {
  struct Kept {
    std::optional<double> last;
    const std::pair<std::string, std::string>* key;
  };
  std::vector<control::ObjectKey> out;
  std::vector<Kept> kept;
  kept.reserve(last_.size());
  for (const auto& [key, last] : last_) {
    if (last && now - *last > retention.ttl_seconds) {
      out.push_back({"events", key.first, key.second});
    } else {
      kept.push_back({last, &key});
    }
  }
  if (retention.max_events <= 0 || static_cast<int64_t>(kept.size()) <= retention.max_events)
    return out;
  const size_t excess = kept.size() - static_cast<size_t>(retention.max_events);
  // Oldest first; an event with no time at all counts as the oldest.
  auto older = [](const Kept& a, const Kept& b) {
    if (a.last != b.last) return !a.last || (b.last && *a.last < *b.last);
    return *a.key < *b.key;
  };
  std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(excess) - 1, kept.end(),
                   older);
  for (size_t i = 0; i < excess; ++i)
    out.push_back({"events", kept[i].key->first, kept[i].key->second});
  return out;
}

}  // namespace muster::server
