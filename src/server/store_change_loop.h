// The thread of a store-driven serve controller (garbage collector, TTL after
// finished, quota): it queues the store's committed changes that the controller
// wants, and hands them over in batches on its own thread, also waking when the
// controller's next deadline comes. The controllers keep only their logic, which
// their tests drive directly; this class is the one place with the locking.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "control/change.h"
#include "control/object_reader.h"
#include "server/watch_hub.h"

namespace muster::server {

class StoreChangeLoop {
 public:
  using Clock = std::chrono::steady_clock;
  using Changes = std::deque<WatchHub::ChangePtr>;

  struct Hooks {
    // On the writer's thread under the store's write lock: must be quick. Unset: every
    // change.
    std::function<bool(const control::Change&)> wants;
    // On the loop's thread: the changes since the last call (possibly none, when the
    // wake-up time came first).
    std::function<void(Changes&)> run;
    // On the loop's thread, after each run: when to run again without a change;
    // nullopt waits for a change only.
    std::function<std::optional<Clock::time_point>()> next_wake;
    // After the first change of a burst, wait this long for the rest (a gang's pods
    // come together): one run for the burst.
    Clock::duration coalesce{};
  };

  // Unix seconds now, for controllers whose deadlines are wall-clock instants read
  // from objects (a Job's TTL, a CronJob's schedule).
  static double WallNow();
  // A next_wake for such a controller: at `deadline` (Unix seconds), and at least
  // every minute (none: a minute from now), so a step of the wall clock is noticed.
  static Clock::time_point WakeForWallDeadline(std::optional<double> deadline);
  // Hands `apply` every object of `resource` stored now, as an ADDED change: what a
  // controller reads at start, after Subscribe.
  static void ForEachStored(const control::ObjectReader& store, const std::string& resource,
                            const std::function<void(const control::Change&)>& apply);

  StoreChangeLoop() = default;
  StoreChangeLoop(const StoreChangeLoop&) = delete;
  StoreChangeLoop& operator=(const StoreChangeLoop&) = delete;
  ~StoreChangeLoop() { Stop(); }

  // Subscribes to `hub`. Call it before listing the store's current objects: a change
  // between the two is then seen twice, which the controllers apply harmlessly, rather
  // than not at all.
  void Subscribe(WatchHub& hub, Hooks hooks);
  // Starts the thread; its first run comes at once (with whatever was queued).
  void Start();
  // Ends the thread (a run in progress finishes first) and unsubscribes. Idempotent.
  void Stop();

 private:
  void Loop();

  Hooks hooks_;
  WatchHub* hub_ = nullptr;
  WatchHub::SubscriptionId subscription_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  Changes changes_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace muster::server
