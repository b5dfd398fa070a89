// Which Events serve deletes: kube-apiserver's --event-ttl, then a limit on the count
// that keeps the newest (event_retention.h).
#include "server/event_retention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace muster::server {
namespace {

using nlohmann::json;

const double kNow = 1764037318;  // 2025-11-25T02:21:58Z

json Event(const std::string& name, const char* field, const std::string& when) {
  json e = {{"metadata", {{"name", name}, {"namespace", "team-a"}}}};
  if (std::string(field) == "creationTimestamp") {
    e["metadata"]["creationTimestamp"] = when;
  } else {
    e["metadata"]["creationTimestamp"] = "2025-11-24T00:00:00Z";
    e[field] = when;
  }
  return e;
}

// What the garbage collector's index of `events` would delete at `now`.
std::vector<control::ObjectKey> EventsToDelete(const std::vector<json>& events, double now,
                                               const EventRetention& retention) {
  EventTimes times;
  for (const json& event : events) times.Put(event);
  return times.ToDelete(now, retention);
}

std::vector<std::string> EventNames(const std::vector<control::ObjectKey>& keys) {
  std::vector<std::string> out;
  for (const auto& key : keys) {
    EXPECT_EQ(key.resource, "events");
    out.push_back(key.name);
  }
  return out;
}

// An event goes an hour after it was last recorded, whichever of lastTimestamp,
// eventTime and creation is the latest.
TEST(EventRetentionTest, EventsGoAnHourAfterTheyWereLastRecorded) {
  std::vector<json> events = {
      Event("old", "creationTimestamp", "2025-11-25T01:21:57Z"),     // 1 h 1 s ago
      Event("recent", "creationTimestamp", "2025-11-25T01:22:30Z"),  // 59.5 min ago
      Event("repeated", "lastTimestamp", "2025-11-25T02:00:00Z"),    // created long ago
      Event("micro", "eventTime", "2025-11-25T02:20:00.123456Z"),    // events.k8s.io style
      Event("stale-micro", "eventTime", "2025-11-25T01:00:00.5Z"),
      {{"metadata", {{"name", "no-time"}, {"namespace", "team-a"}}}},  // kept: no time at all
      {{"metadata", {{"name", "garbled"}, {"creationTimestamp", "yesterday"}}}},
  };
  EXPECT_EQ(EventNames(EventsToDelete(events, kNow, {3600, 0})),
            (std::vector<std::string>{"old", "stale-micro"}));
  // The limit does not apply while the rest fit under it.
  EXPECT_EQ(EventNames(EventsToDelete(events, kNow, {3600, 5})),
            (std::vector<std::string>{"old", "stale-micro"}));
}

// Over the limit, the oldest of what the TTL left go: events with no time first,
// then by when they were last recorded (a repeated event counts from its last time).
TEST(EventRetentionTest, OverTheLimitTheOldestGoFirst) {
  std::vector<json> events = {
      Event("c", "creationTimestamp", "2025-11-25T02:00:03Z"),
      Event("expired", "creationTimestamp", "2025-11-25T00:00:00Z"),
      Event("a", "creationTimestamp", "2025-11-25T02:00:01Z"),
      Event("repeated", "lastTimestamp", "2025-11-25T02:10:00Z"),
      Event("b", "creationTimestamp", "2025-11-25T02:00:02Z"),
      {{"metadata", {{"name", "no-time"}, {"namespace", "team-a"}}}},
      Event("d", "eventTime", "2025-11-25T02:00:04.5Z"),
  };
  std::vector<std::string> doomed = EventNames(EventsToDelete(events, kNow, {3600, 3}));
  ASSERT_EQ(doomed.size(), 4u);  // expired, then 3 of the 6 left
  EXPECT_EQ(doomed[0], "expired");
  std::sort(doomed.begin() + 1, doomed.end());
  EXPECT_EQ(doomed, (std::vector<std::string>{"expired", "a", "b", "no-time"}));
  EXPECT_TRUE(EventsToDelete(events, kNow, {3600 * 24, 7}).empty());
  EXPECT_EQ(EventsToDelete(events, kNow, {3600 * 24, 1}).size(), 6u);
}

TEST(EventRetentionTest, LastRecorded) {
  EXPECT_EQ(EventLastRecorded(Event("r", "lastTimestamp", "2025-11-25T02:00:00Z")),
            std::optional<double>(kNow - 1318));
  EXPECT_EQ(EventLastRecorded(json::object()), std::nullopt);
  EXPECT_EQ(ParseRfc3339Utc("2025-11-25T02:21:58.25Z"), std::optional<double>(kNow + 0.25));
  EXPECT_EQ(ParseRfc3339Utc("2025-11-25T02:21:58+01:00"), std::nullopt);
  EXPECT_EQ(ParseRfc3339Utc(json(5)), std::nullopt);
}

// The garbage collector's index follows the store's changes: a repeat (MODIFIED with
// a later lastTimestamp) makes an event young again, a DELETED one is forgotten, and
// other kinds are not events.
TEST(EventRetentionTest, EventTimesFollowTheStoresChanges) {
  EventTimes times;
  auto change = [](control::ChangeType type, const std::string& resource, const json& object) {
    control::Change c;
    c.type = type;
    c.resource = resource;
    c.namespace_ = object["metadata"].value("namespace", "");
    c.name = object["metadata"].value("name", "");
    c.SetObject(object);
    return c;
  };
  times.Apply(change(control::ChangeType::kAdded, "events",
                     Event("a", "creationTimestamp", "2025-11-25T01:00:00Z")));
  times.Apply(change(control::ChangeType::kAdded, "events",
                     Event("b", "creationTimestamp", "2025-11-25T01:00:00Z")));
  times.Apply(change(control::ChangeType::kAdded, "pods",
                     Event("c", "creationTimestamp", "2025-11-25T01:00:00Z")));
  EXPECT_EQ(times.size(), 2u);
  EXPECT_EQ(EventNames(times.ToDelete(kNow, {3600, 0})), (std::vector<std::string>{"a", "b"}));
  times.Apply(change(control::ChangeType::kModified, "events",
                     Event("a", "lastTimestamp", "2025-11-25T02:00:00Z")));
  EXPECT_EQ(EventNames(times.ToDelete(kNow, {3600, 0})), (std::vector<std::string>{"b"}));
  times.Apply(change(control::ChangeType::kDeleted, "events",
                     Event("b", "creationTimestamp", "2025-11-25T01:00:00Z")));
  EXPECT_EQ(times.size(), 1u);
  EXPECT_TRUE(times.ToDelete(kNow, {3600, 0}).empty());
  EXPECT_TRUE(times.ToDelete(kNow, {3600, 1}).empty());
}

}  // namespace
}  // namespace muster::server
