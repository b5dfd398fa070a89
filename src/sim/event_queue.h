// The simulator's future: events ordered by time, then by kind (completions free
// capacity before failures take it and before new work arrives), then by the order
// they were scheduled (input order for submissions). A total order, so runs are
// reproducible.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "core/clock.h"

namespace muster::sim {

enum class EventKind : int {
  kFinish = 0,         // a running gang's duration is over
  kNodeRecover = 1,    // sim.muster.dev/recover-at
  kNodeFail = 2,       // sim.muster.dev/fail-at
  kReclaimNotice = 3,  // sim.muster.dev/reclaim-at: the spot node is told it goes
  kReclaimLoss = 4,    // ... and then it is gone
  kSubmit = 5,         // sim.muster.dev/submit-at
  kTimer = 6,          // the engine's waitForPodsReady timeout or backoff falls due
  kPodsReady = 7,      // sim.muster.dev/pods-ready-after: a started gang's pods are ready
};

struct Event {
  Time time = 0;
  EventKind kind = EventKind::kSubmit;
  uint64_t seq = 0;         // scheduling order
  std::string target;       // workload key or node name
  uint64_t generation = 0;  // kFinish, kPodsReady: the run it belongs to
};

class EventQueue {
 public:
  void Push(Time time, EventKind kind, std::string target, uint64_t generation = 0) {
    heap_.push(Event{time, kind, next_seq_++, std::move(target), generation});
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  size_t size() const { return heap_.size(); }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

// Virtual time, set by the simulator's loop.
class SimClock : public Clock {
 public:
  Time Now() const override { return now_; }
  void Set(Time t) { now_ = t; }

 private:
  Time now_ = 0;
};

}  // namespace muster::sim
