// QuantityBounds: the range of every resource amount muster accepts, so that no
// object can carry a quantity the engine's fixed-point arithmetic (int64 milli-cpu,
// bytes, int32 device indexes) cannot hold. Kubernetes keeps arbitrary precision
// and leaves the range to each consumer; muster refuses out-of-range values where
// they enter (API validation, manifest decoding) with the allowed range in the
// message, and the placement layer clamps device counts to the same bounds so an
// object that got in another way (a real cluster's node) cannot blow up memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/quantity.h"

namespace muster {

// Where an amount appears: a Node's capacity describes devices the placement layer
// tracks one by one, so its GPU count is bounded much tighter than a quota's.
enum class QuantityScope {
  kNode,      // Node capacity/allocatable, NodeResourceTopology zones
  kWorkload,  // container requests/limits, pod overhead, PodGroup minResources
  kQuota,     // ClusterQueue quotas, Volcano Queue capability/deserved/guarantee
};

// The most GPU devices one node may report: placement keeps one record per device.
inline constexpr int64_t kMaxDevicesPerNode = 1024;
// The most of a whole-unit resource (pods, GPUs in a request or quota, extended
// resources) any object may carry: fits int32, so device counts never wrap.
inline constexpr int64_t kMaxWholeUnits = 1'000'000'000;
// cpu: one billion cores (1e12 milli): sums over a million objects fit int64.
inline constexpr int64_t kMaxCpuMilli = 1'000'000'000'000;
// memory, ephemeral-storage, hugepages-*, storage: 8 PiB, 2^53 bytes, exact in a
// double for JSON clients; sums over a thousand objects fit int64.
inline constexpr int64_t kMaxBytes = int64_t{1} << 53;

// Kubernetes' IsIntegerResourceName: extended resources (a domain-prefixed name
// outside kubernetes.io) and the object-count resources must be whole numbers.
bool IsIntegerResource(std::string_view name);
// Resources counted in bytes (memory, ephemeral-storage, storage, hugepages-<size>).
bool IsByteResource(std::string_view name);

// Checks one amount of resource `name`. Returns "" when it is allowed, else the
// reason in Kubernetes' words with the allowed range: "must be an integer",
// "must be less than or equal to 1024 (the most GPUs one node may have)"...
std::string CheckQuantityBound(std::string_view name, const Quantity& q, QuantityScope scope);

}  // namespace muster
