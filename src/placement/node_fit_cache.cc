#include "placement/node_fit_cache.h"

#include <algorithm>

namespace muster::placement {
namespace {

bool SameShape(const PodShape& a, const PodShape& b) {
  return a.gpus == b.gpus && a.gpu_milli == b.gpu_milli && a.requests == b.requests &&
         std::equal(a.containers.begin(), a.containers.end(), b.containers.begin(),
                    b.containers.end(), [](const ContainerNeed& x, const ContainerNeed& y) {
                      return x.gpus == y.gpus && x.requests == y.requests;
                    });
}

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
    if (SameShape(s.shape, shape) && s.tolerations == tolerations) return s.key;
  }
  if (shapes_.size() == kMaxShapes) shapes_.erase(shapes_.begin());
  shapes_.push_back(Shape{shape, tolerations, next_key_});
  return next_key_++;
}

}  // namespace muster::placement
