#include "kube/memory_trim.h"

namespace muster::kube {

bool MemoryTrimmer::Observe(size_t objects, double now_s) {
  if (objects != last_objects_) {
    last_objects_ = objects;
    last_change_s_ = now_s;
  }
  if (objects > peak_) peak_ = objects;
  // Half gone as well as min_drop gone: churn of a few objects in a large cluster is
  // not worth a walk of every arena.
  if (peak_ - objects < options_.min_drop || objects > peak_ / 2) {
    drop_since_s_.reset();
    return false;
  }
  if (!drop_since_s_) drop_since_s_ = now_s;
  if (now_s - last_change_s_ < options_.quiet_s && now_s - *drop_since_s_ < options_.max_wait_s) {
    return false;
  }
  peak_ = objects;
  drop_since_s_.reset();
  return true;
}

}  // namespace muster::kube
