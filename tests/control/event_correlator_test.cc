// Repeated Events become one Event with a count (client-go's EventCorrelator).
#include "control/event_correlator.h"

#include <gtest/gtest.h>

#include <string>

namespace muster::control {
namespace {

using nlohmann::json;

json Event(const std::string& name, const std::string& job, const std::string& reason,
           const std::string& message, const std::string& when) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"involvedObject",
           {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"name", job},
            {"namespace", "team-a"},
            {"uid", job + "-uid"}}},
          {"reason", reason},
          {"message", message},
          {"type", "Warning"},
          {"count", 1},
          {"firstTimestamp", when},
          {"lastTimestamp", when},
          {"source", {{"component", "muster-scheduler"}}}};
}

TEST(EventCorrelatorTest, ARepeatUpdatesTheFirstEventsCount) {
  EventCorrelator correlator;
  json first = Event("train.1", "train", "Restarting", "pod failed", "2026-01-01T00:00:00Z");
  EXPECT_TRUE(correlator.Correlate(first));
  EXPECT_EQ(first["metadata"]["name"], "train.1");

  json second = Event("train.2", "train", "Restarting", "pod failed", "2026-01-01T00:01:00Z");
  EXPECT_FALSE(correlator.Correlate(second));
  EXPECT_EQ(second["metadata"]["name"], "train.1");
  EXPECT_EQ(second["count"], 2);
  EXPECT_EQ(second["firstTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(second["lastTimestamp"], "2026-01-01T00:01:00Z");

  json third = Event("train.3", "train", "Restarting", "pod failed", "2026-01-01T00:02:00Z");
  EXPECT_FALSE(correlator.Correlate(third));
  EXPECT_EQ(third["count"], 3);
}

// Another reason, message, object or uid (a job re-created under the same name) is
// another Event.
TEST(EventCorrelatorTest, DifferentEventsStayApart) {
  EventCorrelator correlator;
  json a = Event("train.1", "train", "Restarting", "pod failed", "2026-01-01T00:00:00Z");
  EXPECT_TRUE(correlator.Correlate(a));
  json reason = Event("train.2", "train", "Evicted", "pod failed", "2026-01-01T00:00:01Z");
  EXPECT_TRUE(correlator.Correlate(reason));
  json message = Event("train.3", "train", "Restarting", "node lost", "2026-01-01T00:00:02Z");
  EXPECT_TRUE(correlator.Correlate(message));
  json other = Event("eval.4", "eval", "Restarting", "pod failed", "2026-01-01T00:00:03Z");
  EXPECT_TRUE(correlator.Correlate(other));
  json recreated = Event("train.5", "train", "Restarting", "pod failed", "2026-01-01T00:00:04Z");
  recreated["involvedObject"]["uid"] = "another-uid";
  EXPECT_TRUE(correlator.Correlate(recreated));
  EXPECT_EQ(recreated["count"], 1);
  EXPECT_EQ(correlator.size(), 5u);
}

// It remembers a bounded number of distinct events, the least recently seen going
// first.
TEST(EventCorrelatorTest, RemembersABoundedNumber) {
  EventCorrelator correlator(2);
  json a = Event("a.1", "a", "Started", "", "2026-01-01T00:00:00Z");
  json b = Event("b.2", "b", "Started", "", "2026-01-01T00:00:00Z");
  json c = Event("c.3", "c", "Started", "", "2026-01-01T00:00:00Z");
  EXPECT_TRUE(correlator.Correlate(a));
  EXPECT_TRUE(correlator.Correlate(b));
  json a_again = Event("a.4", "a", "Started", "", "2026-01-01T00:00:01Z");
  EXPECT_FALSE(correlator.Correlate(a_again));  // a is now the most recent
  EXPECT_TRUE(correlator.Correlate(c));         // b is forgotten
  EXPECT_EQ(correlator.size(), 2u);
  json b_again = Event("b.5", "b", "Started", "", "2026-01-01T00:00:02Z");
  EXPECT_TRUE(correlator.Correlate(b_again));
  EXPECT_EQ(b_again["metadata"]["name"], "b.5");
  json a_third = Event("a.6", "a", "Started", "", "2026-01-01T00:00:03Z");
  EXPECT_TRUE(correlator.Correlate(a_third));  // forgotten when b came back
}

}  // namespace
}  // namespace muster::control
