// Interned resource names: "cpu", "memory", "nvidia.com/gpu"... map to small dense
// ids so a ResourceList is a short vector. Ids are process-wide and never reach an
// output order: sort by name where order is visible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace muster {

using ResourceId = uint16_t;

// Well-known ids, fixed so hot paths can use them without a lookup.
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kPods = 2;
inline constexpr ResourceId kNvidiaGpu = 3;
inline constexpr ResourceId kEphemeralStorage = 4;

inline constexpr std::string_view kGpuResourceName = "nvidia.com/gpu";
// Fraction of one GPU in thousandths (Alibaba openb `gpu_milli`); shares a device.
inline constexpr std::string_view kGpuMilliResourceName = "muster.dev/gpu-milli";

class ResourceNames {
 public:
  // Returns the id of `name`, interning it on first use. Thread-safe.
  static ResourceId Intern(std::string_view name);
  // Returns the name of an interned id.
  static const std::string& Name(ResourceId id);
  static size_t Count();
  // cpu is counted in milli-units; every other resource in whole units.
  static bool IsMilli(ResourceId id) { return id == kCpu; }
};

}  // namespace muster
