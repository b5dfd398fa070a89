#include "placement/node_fit_cache.h"

namespace muster::placement {
namespace {

// Shapes remembered at once; an admission cycle's pods come in a handful.
constexpr size_t kMaxShapes = 16;

}  // namespace

void NodeFitCache::Bind(const Scorer* scorer, int32_t node_count) {
  if (scorer != scorer_) {
    scorer_ = scorer;
    entries_.clear();
  }
  if (entries_.size() != static_cast<size_t>(node_count)) {
    entries_.resize(static_cast<size_t>(node_count));
  }
}

int64_t NodeFitCache::KeyOf(const PodShape& shape,
                            const std::vector<model::Toleration>& tolerations) {
  for (const Shape& s : shapes_) {
    if (s.shape == shape && s.tolerations == tolerations) return s.key;
  }
  if (shapes_.size() == kMaxShapes) shapes_.erase(shapes_.begin());
  shapes_.push_back(Shape{shape, tolerations, next_key_});
  return next_key_++;
}

}  // namespace muster::placement
