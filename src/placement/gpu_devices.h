// Choosing specific GPU devices on a node: whole devices (kept together in one
// NVLink domain or NUMA zone when possible) and shared fractions of one device.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "placement/node_info.h"

namespace muster::placement {

// Free whole devices in `zone` (-1 = every device).
int32_t CountFreeDevices(const NodeInfo& info, const NodeUsage& usage, int32_t zone);

// Picks `count` free devices among those in `zones` (empty = any zone) into `out`
// (replacing what it held; its storage is reused, as this runs for every node a
// search visits). Devices are kept in one NVLink domain (else one NUMA zone) when
// one fits, choosing the group with the fewest free devices that still fits (lowest
// key on ties) so larger groups stay whole. Ascending indices; false when too few
// are free.
bool PickWholeDevices(const NodeInfo& info, const NodeUsage& usage, std::span<const int32_t> zones,
                      int32_t count, std::vector<int32_t>& out);

// Picks the device for a shared fraction: the most used device that still has
// `milli` free (best fit keeps whole devices free), lowest index on ties.
std::optional<int32_t> PickSharedDevice(const NodeInfo& info, const NodeUsage& usage,
                                        std::span<const int32_t> zones, int32_t milli);

}  // namespace muster::placement
