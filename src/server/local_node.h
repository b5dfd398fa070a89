// The machine `muster serve` runs on, as a cluster of one: with no -f manifests the
// server describes this host as a v1 Node (cpu, memory, pods, nvidia.com/gpu) and,
// when its GPUs sit on different NUMA nodes, a NodeResourceTopology, so jobs can be
// scheduled onto it and run by the local executor.
//
// The Node records which physical GPU each placement device index is (annotation
// muster.dev/gpu-ids), because placement numbers a node's devices 0..n-1 zone by
// zone in the NodeResourceTopology's zone order, not by nvidia-smi index.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/gpu_discovery.h"

namespace muster::server {

class ApiHandler;

// Physical GPU id (nvidia-smi index, for CUDA_VISIBLE_DEVICES) per placement device
// index, comma-separated: "2,3,0,1".
inline constexpr const char* kGpuIdsAnnotation = "muster.dev/gpu-ids";

struct NumaNodeInfo {
  int id = 0;
  int64_t cpus = 0;          // 0 when unknown
  int64_t memory_bytes = 0;  // 0 when unknown
  // Distance (SLIT) to each NUMA node of the machine, in NumaNodeInfo order; may be empty.
  std::vector<int64_t> distances;
};

struct LocalMachine {
  std::string hostname;
  int64_t cpus = 0;
  int64_t memory_bytes = 0;
  std::vector<GpuDevice> gpus;     // sorted by index
  std::vector<NumaNodeInfo> numa;  // sorted by id; empty when sysfs shows none
};

// Reads the hostname, the cpu count, /proc/meminfo, the GPUs (DiscoverGpus) and
// /sys/devices/system/node/node*/{cpulist,meminfo,distance}. Never fails: what is
// unreadable stays 0 or empty.
LocalMachine DiscoverLocalMachine();

// The Node (and, when every GPU's NUMA node is known and the machine has two or more,
// the NodeResourceTopology) as JSON objects that the API's create path and
// api::DecodeText accept.
std::vector<nlohmann::json> LocalNodeManifests(const LocalMachine& machine);

// The physical GPU ids of a Node object in placement device order: the
// muster.dev/gpu-ids annotation, else "0".."n-1" for its nvidia.com/gpu allocatable
// (capacity when no allocatable).
std::vector<std::string> PhysicalGpuIds(const nlohmann::json& node);

// Creates `manifests` through the API's create path (the path -f manifests take).
Status CreateLocalNode(ApiHandler& handler, const std::vector<nlohmann::json>& manifests);

// "vm: 16 cpu, 125Gi memory, 1 GPU (NVIDIA H100 80GB HBM3, NUMA 0)".
std::string DescribeLocalMachine(const LocalMachine& machine);

// On a machine with exactly one NUMA node, a GPU the kernel gives none (numa_node -1,
// as virtual machines often do) is on that node: DiscoverLocalMachine's last step.
void PlaceGpusOfOneNumaNode(LocalMachine& machine);

// Pure helpers for the /proc and /sys text DiscoverLocalMachine reads.
// "MemTotal:  131981020 kB" in /proc/meminfo, or "Node 0 MemTotal: ..." in a NUMA
// node's meminfo -> bytes; 0 when absent.
int64_t ParseMemTotalBytes(std::string_view meminfo);
// A kernel cpu list ("0-15,32-47\n") -> the number of cpus (32); 0 when malformed.
int64_t CountCpuList(std::string_view cpulist);
// A hostname as a Node name (DNS-1123 subdomain): lower case, other characters to '-'.
std::string NodeNameFromHostname(std::string_view hostname);

}  // namespace muster::server
