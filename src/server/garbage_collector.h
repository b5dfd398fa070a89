// GarbageCollector: serve's counterpart of kube-controller-manager's garbage
// collector. Deleting an owner deletes what it owns (metadata.ownerReferences):
// a Job's Pods, a JobSet's Jobs, anything a user or controller marked as owned.
// An owner deleted with propagationPolicy Orphan (the API handler then deletes it
// with the "orphan" finalizer) leaves its dependents, without the references to it.
// Dependents whose owners all vanished while the server was down are collected at
// start-up. Deletes carry the dependent's uid as a precondition, so an object
// re-created under the same name is never taken for the old one.
//
// Events expire an hour after they were last recorded (kube-apiserver's --event-ttl
// default), checked once a minute, and at most EventRetention::max_events are kept
// (the oldest go first): the collector keeps when each event was last recorded from
// the store's changes (EventTimes) and trims at once when their number passes the
// limit by a tenth, so a churning server's events, and the memory and disk they take,
// stay flat (event_retention.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/event_retention.h"
#include "server/owner_graph.h"
#include "server/serve.h"
#include "server/store_change_loop.h"

namespace muster::server {

class GarbageCollector : public Controller {
 public:
  explicit GarbageCollector(EventRetention events = {}) : events_(events) {}
  std::string name() const override { return "garbage collector"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

  // Carries out one batch of decisions against the store (also used by tests).
  static void Execute(ObjectStore& store, const OwnerGraph::Work& work);

  // Deletes the events `events.ToDelete` names at `now` (Unix seconds), in batches,
  // and forgets them; returns how many are left (also used by tests).
  static Result<int64_t> TrimEvents(ObjectStore& store, EventTimes& events,
                                    const EventRetention& retention, double now);
  // The count of stored events past which a trim runs before the minute is up.
  static int64_t TrimThreshold(const EventRetention& events);

 private:
  // One pass of the loop's thread: the changes, then the event trim and the minute's
  // chores when they are due.
  void Run(StoreChangeLoop::Changes& changes);
  std::optional<StoreChangeLoop::Clock::time_point> NextWake() const;

  EventRetention events_;
  ObjectStore* store_ = nullptr;
  // The loop's thread only, after Start.
  OwnerGraph graph_;
  EventTimes event_times_;
  int64_t trim_threshold_ = 0;
  StoreChangeLoop::Clock::time_point next_expiry_;
  // Trims for the count run at most once a second: a store that cannot delete (a
  // full disk) must not make the thread spin.
  StoreChangeLoop::Clock::time_point next_trim_;
  StoreChangeLoop loop_;
};

}  // namespace muster::server
