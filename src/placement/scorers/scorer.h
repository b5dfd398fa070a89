// Scorer: one node-scoring policy. The planner asks it to rank the feasible nodes
// for one pod; higher is better, ties go to the node that sorts first by name.
// Scores are integers in [0, kMaxScore] so results never depend on floating point.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/resource_list.h"
#include "model/node.h"
#include "model/pod.h"

namespace muster::placement {

inline constexpr int64_t kMaxScore = 1000;

// One node as a scorer sees it, before the pod is placed. nvidia.com/gpu counts
// devices; a partly shared device counts as used.
struct ScoreInput {
  const ResourceList& allocatable;
  const ResourceList& used;
  const ResourceList& request;                 // the pod's, GPUs as devices
  std::span<const int32_t> device_used_milli;  // per device, before the pod
  std::span<const int32_t> chosen_devices;     // devices the pod would get
  int32_t gpu_milli = 0;                       // shared fraction on chosen_devices[0]
  const std::vector<model::Taint>& taints;
  const std::vector<model::Toleration>& tolerations;
  const model::StringMap* node_labels = nullptr;  // the node's labels, when known
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual std::string_view Name() const = 0;
  virtual int64_t Score(const ScoreInput& in) const = 0;
  // Whether fuller nodes tend to score higher: the planner then visits nodes from
  // the fewest free GPUs up, so the first feasible nodes it finds are good ones.
  virtual bool PrefersFullNodes() const = 0;
  // Whether the planner should score every device that can take a shared (gpu
  // milli) pod on a node and give the pod the best one, rather than the device
  // the fit check picked (FGD chooses the device this way).
  virtual bool ScoresEachSharedDevice() const { return false; }
  // Whether Score reads its input alone (no state of its own that may change): a
  // node's score is then kept while neither the node nor the pod changed
  // (NodeFitCache).
  virtual bool ScoresFromInputAlone() const { return true; }
};

// Percentage-like helpers in fixed point.
inline int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// a * b / c (c > 0, a, b >= 0), exactly: in 64 bits when the product fits (always,
// for real quantities: bytes of memory times kMaxScore), else in 128. A 128-bit
// division is a library call, and this runs for every node a pod's search scores.
inline int64_t MulDiv(int64_t a, int64_t b, int64_t c) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product / c;
  return static_cast<int64_t>(static_cast<__int128>(a) * b / c);
}

}  // namespace muster::placement
