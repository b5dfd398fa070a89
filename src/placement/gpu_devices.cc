#include "placement/gpu_devices.h"

#include <algorithm>
#include <array>

namespace muster::placement {
namespace {

bool InZones(const GpuDevice& d, std::span<const int32_t> zones) {
  if (zones.empty()) return true;
  return std::find(zones.begin(), zones.end(), d.numa_zone) != zones.end();
}

// Free devices of one group (an NVLink domain or a NUMA zone).
// No member initializers: the stack array below is filled only as far as used.
struct Group {
  int32_t key;
  int32_t size;
};

// Groups are counted on the stack for nodes of up to this many devices (a group
// per device at most); larger nodes count them in a vector.
constexpr size_t kInlineGroups = 64;

}  // namespace

int32_t CountFreeDevices(const NodeInfo& info, const NodeUsage& usage, int32_t zone) {
  int32_t n = 0;
  for (const auto& d : info.gpus) {
    if ((zone < 0 || d.numa_zone == zone) && usage.gpu_milli_used[d.index] == 0) ++n;
  }
  return n;
}

bool PickWholeDevices(const NodeInfo& info, const NodeUsage& usage, std::span<const int32_t> zones,
                      int32_t count, std::vector<int32_t>& out) {
  out.clear();
  if (count <= 0) return true;
  auto usable = [&](const GpuDevice& d) {
    return usage.gpu_milli_used[d.index] == 0 && InZones(d, zones);
  };
  int32_t free = 0;
  bool has_nvlink = false;
  for (const auto& d : info.gpus) {
    if (!usable(d)) continue;
    ++free;
    has_nvlink |= d.nvlink_domain >= 0;
  }
  if (free < count) return false;
  if (!has_nvlink && zones.size() == 1) {
    // Grouped by NUMA zone and all in one: the lowest free indices.
    for (const auto& d : info.gpus) {
      if (!usable(d)) continue;
      out.push_back(d.index);
      if (static_cast<int32_t>(out.size()) == count) break;
    }
    return true;
  }
  // Group by NVLink domain when known, else by NUMA zone, counting each group's
  // free devices (no per-group lists: the chosen group's devices are found again).
  auto key_of = [has_nvlink](const GpuDevice& d) {
    return has_nvlink ? d.nvlink_domain : d.numa_zone;
  };
  std::array<Group, kInlineGroups> inline_groups;
  std::vector<Group> heap_groups;
  Group* groups = inline_groups.data();
  if (info.gpus.size() > kInlineGroups) {
    heap_groups.resize(info.gpus.size());
    groups = heap_groups.data();
  }
  size_t group_count = 0;
  for (const auto& d : info.gpus) {
    if (!usable(d)) continue;
    const int32_t key = key_of(d);
    size_t g = 0;
    while (g < group_count && groups[g].key != key) ++g;
    if (g == group_count) groups[group_count++] = Group{key, 0};
    ++groups[g].size;
  }
  const Group* best = nullptr;
  for (size_t g = 0; g < group_count; ++g) {
    const Group& c = groups[g];
    if (c.size < count) continue;
    if (best == nullptr || c.size < best->size || (c.size == best->size && c.key < best->key)) {
      best = &c;
    }
  }
  // No single group fits: take the lowest indices (fewest groups touched in practice).
  for (const auto& d : info.gpus) {
    if (static_cast<int32_t>(out.size()) == count) break;
    if (usable(d) && (best == nullptr || key_of(d) == best->key)) out.push_back(d.index);
  }
  return true;
}

std::optional<int32_t> PickSharedDevice(const NodeInfo& info, const NodeUsage& usage,
                                        std::span<const int32_t> zones, int32_t milli) {
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
