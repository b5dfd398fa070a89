// A queue's pending workloads in queue order (QueueKey), split into the active
// ones a cycle takes heads from and the parked (inadmissible) ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace muster::admission {

// A job's sla deadline when it has none.
inline constexpr Time kNoSlaDeadline = std::numeric_limits<Time>::infinity();

// Queue order: priority (desc); then (Volcano queues and no queue) the sla
// plugin's deadline, creation plus sla-waiting-time, earliest first and jobs
// with one before jobs without (Volcano's sla job order, in the priority tier);
// then (Volcano queues only) the job's dominant share, lower first, as Volcano's
// drf job order ranks right after the priority plugin's tier; then creation
// time, then input order, then key.
struct QueueKey {
  int32_t priority = 0;
  int64_t share = 0;  // Volcano drf share in parts per million; 0 for Kueue
  Time created = 0;
  int64_t order = 0;
  // The workload's own key (the admitter's state shares the workload, which outlives
  // the key in any queue): a view, not a copy per queued workload.
  std::string_view key;
  Time sla_deadline = kNoSlaDeadline;  // added last: existing initializers keep working
  // The admitter's state for `key`, not part of the order: a cycle takes every
  // queue's head many times, and a lookup by key string per head was a tenth of it.
  void* state = nullptr;
  friend bool operator<(const QueueKey& a, const QueueKey& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.sla_deadline != b.sla_deadline) return a.sla_deadline < b.sla_deadline;
    if (a.share != b.share) return a.share < b.share;
    if (a.created != b.created) return a.created < b.created;
    if (a.order != b.order) return a.order < b.order;
    // The same view is the same workload: a set's find ends comparing a key with
    // itself, where reading the strings was a cache miss each.
    return a.key.data() != b.key.data() && a.key < b.key;
  }
};

// Pending workloads of one queue: `active` are tried by the next cycle; `parked`
// (Kueue's inadmissible list) wait until capacity changes.
//
// A cycle parks its heads in queue order, and a release unparks them all: the
// parked heads at the front of `active_` are only counted past (`prefix_`, up to
// `cursor_`), not moved between two trees one node at a time, which was a sixth of
// a simulated Kueue benchmark. An active key that sorts among them (a new
// higher-priority arrival, one unparked alone) waits in `front_`, before the
// cursor; UnparkAll puts everything back in `active_`.
class PendingQueue {
 public:
  using Set = std::set<QueueKey>;
  PendingQueue() = default;
  PendingQueue(const PendingQueue& o) { *this = o; }
  PendingQueue& operator=(const PendingQueue& o);

  void Push(const QueueKey& k) {
    if (AmongParkedFront(k)) {
      front_.insert(k);
    } else {
      auto it = active_.insert(k).first;
      // Right after the parked front: the first active key of active_.
      if (prefix_ > 0 && (cursor_ == active_.end() || k < *cursor_)) cursor_ = it;
    }
    ++changes_;
  }
  // An admission erases its queue's head: compared in place before any search. A
  // key is in one of the sets.
  void Erase(const QueueKey& k);
  // Parks `k` if active; the head (what a cycle parks) without moving a node.
  void Park(const QueueKey& k);
  // Parks the head, with no key to compare (the caller knows it is the one).
  void ParkHead() {
    if (!front_.empty()) {
      parked_.insert(front_.extract(front_.begin()));
      return;
    }
    if (prefix_ == 0) cursor_ = active_.begin();
    ++cursor_;
    ++prefix_;
  }
  // The smaller set's nodes move into the larger (a release unparks a queue whose
  // every head is parked: then the sets are just swapped).
  void UnparkAll() {
    prefix_ = 0;
    active_.merge(front_);
    if (parked_.size() > active_.size()) active_.swap(parked_);
    active_.merge(parked_);
  }
  void Unpark(const QueueKey& k);
  // Counts what came, went or was unparked one by one; not a cycle's own parking
  // or UnparkAll. Equal counts: the same workloads wait, parked as they were.
  uint64_t changes() const { return changes_; }
  const QueueKey* Head() const {
    if (!front_.empty()) return &*front_.begin();
    auto it = RestBegin();
    return it == active_.end() ? nullptr : &*it;
  }
  // The active keys in queue order (the heads the next rounds take): front_, then
  // active_ from the cursor.
  class ActiveIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = QueueKey;
    using difference_type = std::ptrdiff_t;
    using pointer = const QueueKey*;
    using reference = const QueueKey&;
    ActiveIterator() = default;
    ActiveIterator(Set::const_iterator it, bool in_front, Set::const_iterator front_end,
                   Set::const_iterator rest)
        : it_(it), in_front_(in_front), front_end_(front_end), rest_(rest) {}
    reference operator*() const { return *it_; }
    pointer operator->() const { return &*it_; }
    ActiveIterator& operator++() {
      ++it_;
      if (in_front_ && it_ == front_end_) {
        in_front_ = false;
        it_ = rest_;
      }
      return *this;
    }
    ActiveIterator operator++(int) {
      ActiveIterator was = *this;
      ++*this;
      return was;
    }
    // Iterators of one container compared only (the flag first).
    friend bool operator==(const ActiveIterator& a, const ActiveIterator& b) {
      return a.in_front_ == b.in_front_ && a.it_ == b.it_;
    }

   private:
    Set::const_iterator it_;
    bool in_front_ = false;
    Set::const_iterator front_end_, rest_;
  };
  struct Range {
    ActiveIterator first, last;
    ActiveIterator begin() const { return first; }
    ActiveIterator end() const { return last; }
  };
  Range active() const {
    const bool front = !front_.empty();
    return {ActiveIterator(front ? front_.begin() : RestBegin(), front, front_.end(), RestBegin()),
            ActiveIterator(active_.end(), false, front_.end(), RestBegin())};
  }
  // The first pending workload, parked or not (the StrictFIFO head).
  const QueueKey* First() const;
  bool Empty() const { return active_.empty() && parked_.empty() && front_.empty(); }
  size_t Size() const { return active_.size() + parked_.size() + front_.size(); }
  bool HasParked() const { return prefix_ > 0 || !parked_.empty(); }
  // The parked (inadmissible) keys, in queue order.
  std::vector<QueueKey> Parked() const;
  // Every pending key, active then parked (each in queue order).
  std::vector<QueueKey> All() const;
  // Re-keys `from` as `to`, keeping it active or parked.
  void Replace(const QueueKey& from, const QueueKey& to);

 private:
  // The first key of active_ past the parked front.
  Set::const_iterator RestBegin() const { return prefix_ > 0 ? cursor_ : active_.begin(); }
  // Whether `it` (of active_) is in the parked front.
  bool InPrefix(Set::const_iterator it) const {
    return prefix_ > 0 && (cursor_ == active_.end() || *it < *cursor_);
  }
  // Whether active `k` belongs in front_: it sorts before some key of the parked
  // front or of front_ (every key of front_ stays before every other active one).
  bool AmongParkedFront(const QueueKey& k) const {
    if (!front_.empty() && k < *front_.rbegin()) return true;
    return prefix_ > 0 && k < *std::prev(Set::const_iterator(cursor_));
  }
  // Back to two plain sets: the parked front into parked_, front_ into active_.
  void Normalize();
  // front_ into active_ once the parked front is gone.
  void SettleFront();

  Set active_;
  Set front_;  // active keys among the parked front (while prefix_ > 0)
  Set parked_;
  int64_t prefix_ = 0;    // the first prefix_ keys of active_ are parked
  Set::iterator cursor_;  // the first active one (end: none), while prefix_ > 0
  uint64_t changes_ = 0;
};

}  // namespace muster::admission
