#include "server/store_change_loop.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace muster::server {
namespace {

using Clock = StoreChangeLoop::Clock;

// What the loop's thread handed over, for the test's thread to wait on. The waits
// are on a condition, bounded so a broken loop fails the test instead of hanging it.
struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> names;  // the changes' names, in order
  int runs = 0;

  void Record(const StoreChangeLoop::Changes& changes) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& c : changes) names.push_back(c->name);
    ++runs;
    cv.notify_all();
  }
  bool WaitFor(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), done);
  }
};

control::Change Named(int64_t rv, const std::string& resource, const std::string& name) {
  control::Change c;
  c.resource_version = rv;
  c.resource = resource;
  c.name = name;
  return c;
}

TEST(StoreChangeLoopTest, HandsOverTheWantedChangesInCommitOrder) {
  WatchHub hub;
  Seen seen;
  StoreChangeLoop loop;
  StoreChangeLoop::Hooks hooks;
  hooks.wants = [](const control::Change& c) { return c.resource == "jobs.batch"; };
  hooks.run = [&](StoreChangeLoop::Changes& changes) { seen.Record(changes); };
  loop.Subscribe(hub, std::move(hooks));
  // Queued before the thread starts: its first run has them.
  hub.Publish(Named(1, "jobs.batch", "a"));
  hub.Publish(Named(2, "pods", "ignored"));
  loop.Start();
  hub.Publish(Named(3, "jobs.batch", "b"));
  hub.Publish(Named(4, "jobs.batch", "c"));
  ASSERT_TRUE(seen.WaitFor([&] { return seen.names.size() == 3; }));
  EXPECT_EQ(seen.names, (std::vector<std::string>{"a", "b", "c"}));
  loop.Stop();
  loop.Stop();  // idempotent
  hub.Publish(Named(5, "jobs.batch", "after-stop"));
  std::lock_guard<std::mutex> lock(seen.mu);
  EXPECT_EQ(seen.names.size(), 3U);
}

TEST(StoreChangeLoopTest, RunsAgainWhenTheWakeUpTimeComesWithoutAChange) {
  WatchHub hub;
  Seen seen;
  StoreChangeLoop loop;
  StoreChangeLoop::Hooks hooks;
  hooks.run = [&](StoreChangeLoop::Changes& changes) { seen.Record(changes); };
  // Due at once for the first three runs, then only on a change.
  int asked = 0;
  hooks.next_wake = [&]() -> std::optional<Clock::time_point> {
    if (++asked < 3) return Clock::now();
    return std::nullopt;
  };
  loop.Subscribe(hub, std::move(hooks));
  loop.Start();
  ASSERT_TRUE(seen.WaitFor([&] { return seen.runs == 3; }));
  EXPECT_TRUE(seen.names.empty());
  hub.Publish(Named(1, "pods", "p"));
  ASSERT_TRUE(seen.WaitFor([&] { return seen.runs == 4; }));
  EXPECT_EQ(seen.names, (std::vector<std::string>{"p"}));
}

TEST(StoreChangeLoopTest, StopEndsAWaitForALaterWakeUpAndACoalescingPause) {
  WatchHub hub;
  Seen seen;
  StoreChangeLoop loop;
  StoreChangeLoop::Hooks hooks;
  hooks.run = [&](StoreChangeLoop::Changes& changes) { seen.Record(changes); };
  hooks.next_wake = [] {
    return std::optional<Clock::time_point>(Clock::now() + std::chrono::hours(1));
  };
  hooks.coalesce = std::chrono::hours(1);
  loop.Subscribe(hub, std::move(hooks));
  loop.Start();
  ASSERT_TRUE(seen.WaitFor([&] { return seen.runs == 1; }));
  // The loop is now in its hour-long coalescing pause; Stop must not wait it out.
  hub.Publish(Named(1, "pods", "p"));
  loop.Stop();
  std::lock_guard<std::mutex> lock(seen.mu);
  EXPECT_EQ(seen.runs, 1);
}

}  // namespace
}  // namespace muster::server
