// Finding this machine's NVIDIA GPUs for `muster serve` without a -f cluster:
// `nvidia-smi` when it is installed, else the driver's /proc files, with each
// device's NUMA node from sysfs. The parsers are pure (tested with captured text);
// DiscoverGpus does the I/O and never fails hard: no driver means no GPUs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace muster::server {

struct GpuDevice {
  int index = 0;           // nvidia-smi's index (PCI bus order): what CUDA_VISIBLE_DEVICES names
  std::string uuid;        // "GPU-8face100-..."
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // sysfs form: "0000:1b:00.0"
  int64_t memory_mib = 0;  // 0 when unknown
  int numa_node = -1;      // -1 when unknown or the machine has no NUMA
};

// Output of `nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id
// --format=csv,noheader,nounits`, one device per line. Lines that do not parse
// (messages such as "No devices were found") are skipped; "[N/A]" fields read as
// unknown. Devices come back in the order printed.
std::vector<GpuDevice> ParseNvidiaSmiCsv(std::string_view csv);

// /proc/driver/nvidia/gpus/<bus id>/information ("Model:", "GPU UUID:",
// "Bus Location:", "Device Minor:" lines). index is the device minor (/dev/nvidiaN);
// nullopt when the text names neither a bus location nor a device minor.
std::optional<GpuDevice> ParseProcNvidiaInformation(std::string_view text);

// "00000000:1B:00.0" (nvidia-smi, 8-digit domain) or "0000:1b:00.0" (sysfs) ->
// "0000:1b:00.0"; "" when the text is not a PCI address.
std::string NormalizePciBusId(std::string_view bus_id);

// Where DiscoverGpus looks; tests point these at a temporary tree and a fake
// nvidia-smi script.
struct GpuDiscoveryPaths {
  std::string nvidia_smi = "nvidia-smi";  // a bare name is searched on PATH
  std::string proc_gpus = "/proc/driver/nvidia/gpus";
  std::string sys_pci_devices = "/sys/bus/pci/devices";
  int timeout_ms = 5000;  // nvidia-smi can hang on a wedged driver
};

// The machine's GPUs sorted by index; empty when there are none or nothing is
// readable.
std::vector<GpuDevice> DiscoverGpus(const GpuDiscoveryPaths& paths = {});

}  // namespace muster::server
