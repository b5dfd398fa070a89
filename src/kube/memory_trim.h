// MemoryTrimmer: when to hand freed heap back to the system. glibc keeps what the
// objects of deleted Jobs and pods used in its free lists (one arena per thread that
// allocated: reflectors, writers, the controller), so RSS stays at its peak after a
// cluster empties; malloc_trim(0) returns it. Trimming walks every arena, so it runs
// only after the mirrored object count fell by a large step (at least `min_drop`, and
// to half its peak or less), once the count has stopped falling for `quiet_s` or the
// drop is `max_wait_s` old (a long stream of deletions is trimmed as it goes).
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

// Turns glibc's fastbins off (mallopt(M_MXFAST, 0)); false where there are none.
// libcurl allocates and frees a 16 KB download buffer per request, and a request that
// large makes glibc consolidate every fastbin chunk freed since the last one: 5 % of
// muster kube's CPU per bound pod. Without fastbins, small frees go to the per-thread
// cache and then straight to the bins, with nothing left to consolidate. Call it
// before the threads start.
bool TuneHeap();

// malloc_trim(0) where the C library has it; false elsewhere.
bool TrimHeap();

}  // namespace muster::kube
