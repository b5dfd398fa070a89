#include "server/gpu_discovery.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/text.h"
#include "server/host_command.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

// nvidia-smi prints "[N/A]" or "[Not Supported]" for values a device does not report.
bool Unknown(std::string_view v) { return v.empty() || v.front() == '[' || v == "N/A"; }

template <typename Int>
std::optional<Int> ParseInt(std::string_view s, int base = 10) {
  s = TrimSpace(s);
  Int v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The executable `name` names: itself when it holds a '/', else the first match on PATH.
std::optional<std::string> FindExecutable(const std::string& name) {
  auto executable = [](const std::string& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    return executable(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  const char* env = std::getenv("PATH");
  std::string_view path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = path.find(':');
    std::string dir(path.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    path.remove_prefix(colon + 1);
  }
}

int ReadNumaNode(const std::string& sys_pci_devices, const std::string& bus_id) {
  if (bus_id.empty()) return -1;
  auto text = ReadFile(fs::path(sys_pci_devices) / bus_id / "numa_node");
  if (!text) return -1;
  auto node = ParseInt<int>(*text);
  return node && *node >= 0 ? *node : -1;
}

std::vector<GpuDevice> GpusFromProc(const std::string& proc_gpus) {
  std::vector<GpuDevice> gpus;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(proc_gpus, ec)) {
    auto text = ReadFile(entry.path() / "information");
    if (!text) continue;
    auto gpu = ParseProcNvidiaInformation(*text);
    if (!gpu) continue;
    if (gpu->pci_bus_id.empty())
      gpu->pci_bus_id = NormalizePciBusId(entry.path().filename().string());
    gpus.push_back(std::move(*gpu));
  }
  // The device minor (/dev/nvidiaN) need not follow bus order, but nvidia-smi's
  // index and CUDA's device numbers under CUDA_DEVICE_ORDER=PCI_BUS_ID do: number
  // the devices in bus order so both discovery paths agree.
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuDevice& a, const GpuDevice& b) { return a.pci_bus_id < b.pci_bus_id; });
  for (size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<int>(i);
  return gpus;
}

}  // namespace

std::string NormalizePciBusId(std::string_view bus_id) {
  bus_id = TrimSpace(bus_id);
  // [domain:]bus:device.function, hex; the domain defaults to 0.
  size_t last_colon = bus_id.rfind(':');
  size_t dot = bus_id.rfind('.');
  if (last_colon == std::string_view::npos || dot == std::string_view::npos || dot < last_colon) {
    return "";
  }
  std::string_view head = bus_id.substr(0, last_colon);
  size_t first_colon = head.rfind(':');
  std::string_view domain_text =
      first_colon == std::string_view::npos ? "0" : head.substr(0, first_colon);
  std::string_view bus_text =
      first_colon == std::string_view::npos ? head : head.substr(first_colon + 1);
  std::string_view device_text = bus_id.substr(last_colon + 1, dot - last_colon - 1);
  std::string_view function_text = bus_id.substr(dot + 1);
  if (domain_text.size() > 8 || bus_text.size() > 2 || device_text.size() > 2 ||
      function_text.size() != 1) {
    return "";
  }
  auto domain = ParseInt<uint32_t>(domain_text, 16);
  auto bus = ParseInt<uint32_t>(bus_text, 16);
  auto device = ParseInt<uint32_t>(device_text, 16);
  auto function = ParseInt<uint32_t>(function_text, 16);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7) return "";
  char out[32];
  std::snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", *domain, *bus, *device, *function);
  return out;
}

std::vector<GpuDevice> ParseNvidiaSmiCsv(std::string_view csv) {
  std::vector<GpuDevice> out;
  while (!csv.empty()) {
    size_t eol = csv.find('\n');
    std::string_view line = csv.substr(0, eol);
    csv.remove_prefix(eol == std::string_view::npos ? csv.size() : eol + 1);
    // index, uuid, name, memory.total, pci.bus_id: the name is what lies between the
    // second and the second-to-last comma, so a comma inside it survives.
    size_t c1 = line.find(',');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
    size_t c4 = line.rfind(',');
    size_t c3 =
        c4 == std::string_view::npos || c4 == 0 ? std::string_view::npos : line.rfind(',', c4 - 1);
    if (c2 == std::string_view::npos || c3 == std::string_view::npos || c3 <= c2) continue;
    auto index = ParseInt<int>(line.substr(0, c1));
    if (!index || *index < 0) continue;
    GpuDevice gpu;
    gpu.index = *index;
    std::string_view uuid = TrimSpace(line.substr(c1 + 1, c2 - c1 - 1));
    std::string_view name = TrimSpace(line.substr(c2 + 1, c3 - c2 - 1));
    std::string_view memory = TrimSpace(line.substr(c3 + 1, c4 - c3 - 1));
    std::string_view bus = TrimSpace(line.substr(c4 + 1));
    if (!Unknown(uuid)) gpu.uuid = uuid;
    if (!Unknown(name)) gpu.name = name;
    if (!Unknown(memory)) gpu.memory_mib = ParseInt<int64_t>(memory).value_or(0);
    if (!Unknown(bus)) gpu.pci_bus_id = NormalizePciBusId(bus);
    out.push_back(std::move(gpu));
  }
  return out;
}

std::optional<GpuDevice> ParseProcNvidiaInformation(std::string_view text) {
  GpuDevice gpu;
  bool has_minor = false;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = TrimSpace(line.substr(0, colon));
    std::string_view value = TrimSpace(line.substr(colon + 1));
    if (key == "Model") {
      gpu.name = value;
    } else if (key == "GPU UUID") {
      if (!Unknown(value)) gpu.uuid = value;
    } else if (key == "Bus Location") {
      gpu.pci_bus_id = NormalizePciBusId(value);
    } else if (key == "Device Minor") {
      if (auto minor = ParseInt<int>(value)) {
        gpu.index = *minor;
        has_minor = true;
      }
    }
  }
  if (!has_minor && gpu.pci_bus_id.empty()) return std::nullopt;
  return gpu;
}

std::vector<GpuDevice> DiscoverGpus(const GpuDiscoveryPaths& paths) {
  std::vector<GpuDevice> gpus;
  if (auto exe = FindExecutable(paths.nvidia_smi)) {
    CommandOptions options;
    options.timeout_ms = paths.timeout_ms;
    options.capture_stderr = false;
    auto out = RunCommand({*exe, "--query-gpu=index,uuid,name,memory.total,pci.bus_id",
                           "--format=csv,noheader,nounits"},
                          options);
    if (out.ok() && out->exit_code == 0) gpus = ParseNvidiaSmiCsv(out->output);
  }
  // No nvidia-smi, or it failed: the kernel driver's own view (no memory size).
  if (gpus.empty()) gpus = GpusFromProc(paths.proc_gpus);
  for (auto& g : gpus) g.numa_node = ReadNumaNode(paths.sys_pci_devices, g.pci_bus_id);
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuDevice& a, const GpuDevice& b) { return a.index < b.index; });
  return gpus;
}

}  // namespace muster::server
