// MemoryTrimmer: when to hand freed heap back to the system. The allocator keeps
// what the objects of deleted Jobs and pods used (glibc in the free lists of one arena
// per thread that allocated; jemalloc until its decay time has passed), so RSS stays
// near its peak after a cluster empties; control::ReleaseFreeHeap returns it at once.
// Releasing walks every arena, so it runs only after the mirrored object count fell
// by a large step (at least `min_drop`, and to half its peak or less), once the count
// has stopped falling for `quiet_s` or the drop is `max_wait_s` old (a long stream of
// deletions is released as it goes).
#pragma once

#include <cstddef>
#include <optional>

namespace muster::kube {

struct MemoryTrimOptions {
  size_t min_drop = 1000;
  double quiet_s = 1;
  double max_wait_s = 10;
};

class MemoryTrimmer {
 public:
  explicit MemoryTrimmer(MemoryTrimOptions options = {}) : options_(options) {}

  // The cache holds `objects` now (`now_s`: seconds on any steady clock). True when
  // the caller should trim now; the drop then counts as done.
  bool Observe(size_t objects, double now_s);

 private:
  MemoryTrimOptions options_;
  size_t peak_ = 0;
  size_t last_objects_ = 0;
  double last_change_s_ = 0;
  std::optional<double> drop_since_s_;  // when the current drop became large enough
};

}  // namespace muster::kube
