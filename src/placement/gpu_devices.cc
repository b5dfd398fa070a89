#include "placement/gpu_devices.h"

#include <algorithm>
#include <map>

namespace muster::placement {
namespace {

bool InZones(const GpuDevice& d, const std::vector<int32_t>& zones) {
  if (zones.empty()) return true;
  return std::find(zones.begin(), zones.end(), d.numa_zone) != zones.end();
}

}  // namespace

int32_t CountFreeDevices(const NodeInfo& info, const NodeUsage& usage, int32_t zone) {
  int32_t n = 0;
  for (const auto& d : info.gpus) {
    if ((zone < 0 || d.numa_zone == zone) && usage.gpu_milli_used[d.index] == 0) ++n;
  }
  return n;
}

std::optional<std::vector<int32_t>> PickWholeDevices(const NodeInfo& info, const NodeUsage& usage,
                                                     const std::vector<int32_t>& zones,
                                                     int32_t count) {
  std::vector<int32_t> out;
  if (count <= 0) return out;
  std::vector<const GpuDevice*> free;
  bool has_nvlink = false;
  for (const auto& d : info.gpus) {
    if (usage.gpu_milli_used[d.index] != 0 || !InZones(d, zones)) continue;
    free.push_back(&d);
    has_nvlink |= d.nvlink_domain >= 0;
  }
  if (static_cast<int32_t>(free.size()) < count) return std::nullopt;
  // Group by NVLink domain when known, else by NUMA zone (std::map: ordered keys).
  std::map<int32_t, std::vector<int32_t>> groups;
  for (const GpuDevice* d : free) {
    groups[has_nvlink ? d->nvlink_domain : d->numa_zone].push_back(d->index);
  }
  const std::vector<int32_t>* best = nullptr;
  for (const auto& [key, devs] : groups) {
    if (static_cast<int32_t>(devs.size()) < count) continue;
    if (best == nullptr || devs.size() < best->size()) best = &devs;
  }
  if (best != nullptr) {
    out.assign(best->begin(), best->begin() + count);
    return out;
  }
  // No single group fits: take the lowest indices (fewest groups touched in practice).
  for (int32_t i = 0; i < count; ++i) out.push_back(free[i]->index);
  return out;
}

std::optional<int32_t> PickSharedDevice(const NodeInfo& info, const NodeUsage& usage,
                                        const std::vector<int32_t>& zones, int32_t milli) {
  std::optional<int32_t> best;
  int32_t best_used = -1;
  for (const auto& d : info.gpus) {
    if (!InZones(d, zones)) continue;
    int32_t used = usage.gpu_milli_used[d.index];
    if (kMilliPerGpu - used < milli) continue;
    if (used > best_used) {
      best = d.index;
      best_used = used;
    }
  }
  return best;
}

}  // namespace muster::placement
