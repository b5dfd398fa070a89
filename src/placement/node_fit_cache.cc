#include "placement/node_fit_cache.h"

namespace muster::placement {
namespace {

// Shapes remembered at once; an admission cycle's pods come in a handful.
constexpr size_t kMaxShapes = 16;
// Walks remembered at once: one per label list and pod size searched lately.
constexpr size_t kMaxWalks = 8;

}  // namespace

void NodeFitCache::Bind(const Scorer* scorer, int32_t node_count) {
  if (scorer != scorer_) {
    scorer_ = scorer;
    entries_.clear();
    walks_.clear();
  }
  if (entries_.size() != static_cast<size_t>(node_count)) {
    entries_.resize(static_cast<size_t>(node_count));
  }
}

int64_t NodeFitCache::KeyOf(const PodShape& shape, const PodConstraints& constraints,
                            const std::vector<model::NodeSelectorTerm>& required_affinity,
                            bool check_selector) {
  for (const Shape& s : shapes_) {
    if (s.shape == shape && s.check_selector == check_selector &&
        s.tolerations == constraints.tolerations && s.node_selector == constraints.node_selector &&
        s.required_affinity == required_affinity) {
      return s.key;
    }
  }
  if (shapes_.size() == kMaxShapes) shapes_.erase(shapes_.begin());
  shapes_.push_back(Shape{shape, constraints.tolerations, constraints.node_selector,
                          required_affinity, check_selector, next_key_});
  return next_key_++;
}

NodeFitCache::Walk& NodeFitCache::WalkFor(const std::vector<int32_t>* list, int32_t min_bucket,
                                          const FreeCapacityIndex::Amounts& need, uint64_t epoch) {
  auto restart = [epoch](Walk& w) -> Walk& {
    w.epoch = epoch;
    w.may_fit.clear();
    w.walked = 0;
    return w;
  };
  for (Walk& w : walks_) {
    if (w.list != list || w.min_bucket != min_bucket || w.need != need) continue;
    if (w.epoch != epoch) return restart(w);
    if (w.walked > 0) ++walks_kept_;
    return w;
  }
  Walk* w = nullptr;
  if (walks_.size() < kMaxWalks) {
    w = &walks_.emplace_back();
  } else {
    w = &walks_[next_walk_];  // the oldest
    next_walk_ = (next_walk_ + 1) % kMaxWalks;
  }
  w->list = list;
  w->min_bucket = min_bucket;
  w->need = need;
  return restart(*w);
}

}  // namespace muster::placement
