#include "server/local_node.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "control/resource_types.h"
#include "core/quantity.h"
#include "core/text.h"
#include "server/api_handler.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// kubelet's default --max-pods.
constexpr int64_t kMaxPods = 110;
constexpr const char* kGpuResource = "nvidia.com/gpu";

std::optional<int64_t> ParseInt(std::string_view s) {
  s = TrimSpace(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string ReadFileOrEmpty(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.
std::string LabelValue(std::string_view text) {
  std::string out;
  for (char c : text) out += IsAlnum(c) || c == '.' || c == '_' || c == '-' ? c : '-';
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !IsAlnum(out.back())) out.pop_back();
  size_t first = 0;
  while (first < out.size() && !IsAlnum(out[first])) ++first;
  return out.substr(first);
}

// NVIDIA GPU feature discovery's nvidia.com/gpu.product: the device name with spaces
// as dashes ("NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3").
std::string GpuProductLabel(const std::string& name) {
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), ' ', '-');
  return LabelValue(dashed);
}

std::string BytesQuantity(int64_t bytes) {
  return Quantity::FromInt(bytes, Quantity::Format::kBinarySI).ToString();
}

struct Zone {
  int id = 0;
  int64_t cpus = 0;
  int64_t memory_bytes = 0;
  std::vector<int64_t> distances;  // to every zone, in zone order; empty when unknown
  std::vector<int> gpus;           // physical indices, ascending
};

// The NUMA zones worth a NodeResourceTopology: only when every GPU's NUMA node is
// known (else which zone holds which device is a guess) and there are two zones or
// more (one zone aligns everything trivially). Empty otherwise.
std::vector<Zone> PlanZones(const LocalMachine& m) {
  if (m.gpus.empty()) return {};
  std::map<int, Zone> by_id;
  for (const auto& n : m.numa) {
    Zone& z = by_id[n.id];
    z.id = n.id;
    z.cpus = n.cpus;
    z.memory_bytes = n.memory_bytes;
    if (n.distances.size() == m.numa.size()) z.distances = n.distances;
  }
  for (const auto& g : m.gpus) {
    if (g.numa_node < 0) return {};
    Zone& z = by_id[g.numa_node];
    z.id = g.numa_node;
    z.gpus.push_back(g.index);
  }
  if (by_id.size() < 2) return {};
  std::vector<Zone> zones;
  for (auto& [id, z] : by_id) {
    std::sort(z.gpus.begin(), z.gpus.end());
    // Distances index the machine's NUMA nodes; a zone only a GPU names breaks that.
    if (by_id.size() != m.numa.size()) z.distances.clear();
    zones.push_back(std::move(z));
  }
  return zones;
}

std::string ZoneName(int id) { return "node-" + std::to_string(id); }

json ZoneResource(const std::string& name, const std::string& amount) {
  return {{"name", name}, {"capacity", amount}, {"allocatable", amount}, {"available", amount}};
}

json TopologyManifest(const std::string& node_name, const std::vector<Zone>& zones) {
  json zone_list = json::array();
  for (const auto& z : zones) {
    json resources = json::array();
    if (z.cpus > 0) resources.push_back(ZoneResource("cpu", std::to_string(z.cpus)));
    if (z.memory_bytes > 0)
      resources.push_back(ZoneResource("memory", BytesQuantity(z.memory_bytes)));
    resources.push_back(ZoneResource(kGpuResource, std::to_string(z.gpus.size())));
    json zone = {{"name", ZoneName(z.id)}, {"type", "Node"}};
    if (!z.distances.empty()) {
      json costs = json::array();
      for (size_t i = 0; i < zones.size(); ++i) {
        costs.push_back({{"name", ZoneName(zones[i].id)}, {"value", z.distances[i]}});
      }
      zone["costs"] = std::move(costs);
    }
    zone["resources"] = std::move(resources);
    zone_list.push_back(std::move(zone));
  }
  // best-effort: no kubelet runs here and the local executor pins no cpus or memory,
  // so a hard policy (restricted, single-numa-node) would refuse pods that run fine;
  // best-effort still keeps a pod's GPUs in one zone when it can. container scope is
  // the kubelet's default.
  return {{"apiVersion", "topology.node.k8s.io/v1alpha2"},
          {"kind", "NodeResourceTopology"},
          {"metadata", {{"name", node_name}}},
          {"attributes",
           {{{"name", "topologyManagerPolicy"}, {"value", "best-effort"}},
            {{"name", "topologyManagerScope"}, {"value", "container"}}}},
          {"zones", std::move(zone_list)}};
}

const char* NodeArch() {
#if defined(__x86_64__)
  return "amd64";
#elif defined(__aarch64__)
  return "arm64";
#else
  return "";
#endif
}

}  // namespace

int64_t ParseMemTotalBytes(std::string_view meminfo) {
  size_t at = meminfo.find("MemTotal:");
  if (at == std::string_view::npos) return 0;
  std::string_view rest = meminfo.substr(at + 9);
  rest = rest.substr(0, rest.find('\n'));
  rest = TrimSpace(rest);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  auto value = ParseInt(rest.substr(0, digits));
  if (!value) return 0;
  // The kernel writes "kB" and means KiB.
  return TrimSpace(rest.substr(digits)) == "kB" ? *value * 1024 : *value;
}

int64_t CountCpuList(std::string_view cpulist) {
  cpulist = TrimSpace(cpulist);
  int64_t count = 0;
  while (!cpulist.empty()) {
    size_t comma = cpulist.find(',');
    std::string_view range = cpulist.substr(0, comma);
    cpulist.remove_prefix(comma == std::string_view::npos ? cpulist.size() : comma + 1);
    size_t dash = range.find('-');
    auto first = ParseInt(range.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseInt(range.substr(dash + 1));
    if (!first || !last || *last < *first) return 0;
    count += *last - *first + 1;
  }
  return count;
}

std::string NodeNameFromHostname(std::string_view hostname) {
  std::string out;
  for (char c : hostname) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out += IsAlnum(c) || c == '.' || c == '-' ? c : '-';
  }
  if (out.size() > 253) out.resize(253);
  while (!out.empty() && !IsAlnum(out.back())) out.pop_back();
  size_t first = 0;
  while (first < out.size() && !IsAlnum(out[first])) ++first;
  out = out.substr(first);
  return out.empty() ? "localhost" : out;
}

LocalMachine DiscoverLocalMachine() {
  LocalMachine m;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) m.hostname = host;
  m.cpus = std::thread::hardware_concurrency();
  if (m.cpus <= 0) m.cpus = std::max<int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  m.memory_bytes = ParseMemTotalBytes(ReadFileOrEmpty("/proc/meminfo"));
  m.gpus = DiscoverGpus();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0) continue;
    auto id = ParseInt(std::string_view(name).substr(4));
    if (!id) continue;
    NumaNodeInfo n;
    n.id = static_cast<int>(*id);
    n.cpus = CountCpuList(ReadFileOrEmpty(entry.path() / "cpulist"));
    n.memory_bytes = ParseMemTotalBytes(ReadFileOrEmpty(entry.path() / "meminfo"));
    std::istringstream distances(ReadFileOrEmpty(entry.path() / "distance"));
    for (int64_t d = 0; distances >> d;) n.distances.push_back(d);
    m.numa.push_back(std::move(n));
  }
  std::sort(m.numa.begin(), m.numa.end(),
            [](const NumaNodeInfo& a, const NumaNodeInfo& b) { return a.id < b.id; });
  PlaceGpusOfOneNumaNode(m);
  return m;
}

void PlaceGpusOfOneNumaNode(LocalMachine& m) {
  if (m.numa.size() != 1) return;
  for (auto& g : m.gpus) {
    if (g.numa_node < 0) g.numa_node = m.numa[0].id;
  }
}

std::vector<json> LocalNodeManifests(const LocalMachine& m) {
  const std::string name = NodeNameFromHostname(m.hostname);
  const std::vector<Zone> zones = PlanZones(m);
  // Placement gives device numbers zone by zone in the topology's zone order (see
  // placement/cluster_state.cc), so list the physical GPUs the same way.
  std::vector<std::string> gpu_ids;
  if (zones.empty()) {
    for (const auto& g : m.gpus) gpu_ids.push_back(std::to_string(g.index));
  } else {
    for (const auto& z : zones) {
      for (int g : z.gpus) gpu_ids.push_back(std::to_string(g));
    }
  }
  json labels = {{"kubernetes.io/hostname", LabelValue(name)}, {"kubernetes.io/os", "linux"}};
  if (*NodeArch() != '\0') labels["kubernetes.io/arch"] = NodeArch();
  json resources = {{"cpu", std::to_string(std::max<int64_t>(m.cpus, 0))},
                    {"memory", BytesQuantity(std::max<int64_t>(m.memory_bytes, 0))},
                    {"pods", std::to_string(kMaxPods)}};
  json metadata = {{"name", name}};
  if (!m.gpus.empty()) {
    // Labels as NVIDIA's GPU feature discovery sets them (first device's model).
    labels["nvidia.com/gpu.product"] = GpuProductLabel(m.gpus.front().name);
    labels["nvidia.com/gpu.count"] = std::to_string(m.gpus.size());
    if (m.gpus.front().memory_mib > 0) {
      labels["nvidia.com/gpu.memory"] = std::to_string(m.gpus.front().memory_mib);
    }
    resources[kGpuResource] = std::to_string(m.gpus.size());
    metadata["annotations"] = {{kGpuIdsAnnotation, JoinStrings(gpu_ids, ",")}};
  }
  metadata["labels"] = std::move(labels);
  std::vector<json> out;
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", std::move(metadata)},
                 {"spec", json::object()},
                 {"status", {{"capacity", resources}, {"allocatable", resources}}}});
  if (!zones.empty()) out.push_back(TopologyManifest(name, zones));
  return out;
}

std::vector<std::string> PhysicalGpuIds(const json& node) {
  std::vector<std::string> ids;
  const json* annotations = nullptr;
  if (node.is_object() && node.contains("metadata") && node["metadata"].is_object() &&
      node["metadata"].contains("annotations") && node["metadata"]["annotations"].is_object()) {
    annotations = &node["metadata"]["annotations"];
  }
  if (annotations != nullptr && annotations->contains(kGpuIdsAnnotation) &&
      (*annotations)[kGpuIdsAnnotation].is_string()) {
    std::string_view text = (*annotations)[kGpuIdsAnnotation].get_ref<const std::string&>();
    while (!text.empty()) {
      size_t comma = text.find(',');
      std::string_view id = TrimSpace(text.substr(0, comma));
      if (!id.empty()) ids.emplace_back(id);
      text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    }
    if (!ids.empty()) return ids;
  }
  int64_t count = 0;
  if (node.is_object() && node.contains("status") && node["status"].is_object()) {
    const json& status = node["status"];
    for (const char* list : {"allocatable", "capacity"}) {
      if (!status.contains(list) || !status[list].is_object() ||
          !status[list].contains(kGpuResource)) {
        continue;
      }
      const json& v = status[list][kGpuResource];
      if (v.is_number_integer()) {
        count = v.get<int64_t>();
      } else if (v.is_string()) {
        auto q = Quantity::Parse(v.get_ref<const std::string&>());
        count = q.ok() ? q->Value() : 0;
      }
      break;
    }
  }
  // Bounded so a bogus quantity cannot allocate without limit.
  count = std::clamp<int64_t>(count, 0, 1024);
  for (int64_t i = 0; i < count; ++i) ids.push_back(std::to_string(i));
  return ids;
}

Status CreateLocalNode(ApiHandler& handler, const std::vector<json>& manifests) {
  for (const auto& m : manifests) {
    const std::string api_version = m.value("apiVersion", "");
    const std::string kind = m.value("kind", "");
    const control::ResourceType* type = control::FindByKind(api_version, kind);
    if (type == nullptr || type->namespaced) {
      return Internal("local node: unexpected kind " + api_version + " " + kind);
    }
    const std::string path = (type->group.empty() ? "/api/" : "/apis/" + type->group + "/") +
                             api_version.substr(api_version.find('/') + 1) + "/" + type->plural;
    ApiRequest post{
        "POST", path, {}, "application/json", "application/json", m.dump(), auth::ServerUser()};
    auto created = handler.Handle(post);
    auto* r = std::get_if<ApiResponse>(&created);
    if (r == nullptr || r->code != 201) {
      return InvalidArgument("local node: cannot create " + kind + ": " +
                             (r != nullptr ? r->body : std::string("unexpected watch")));
    }
  }
  return Status::Ok();
}

std::string DescribeLocalMachine(const LocalMachine& m) {
  std::string memory;
  constexpr int64_t kGi = int64_t{1} << 30;
  if (m.memory_bytes >= kGi) {
    memory = std::to_string(m.memory_bytes / kGi) + "Gi";
  } else {
    memory = std::to_string(m.memory_bytes >> 20) + "Mi";
  }
  std::string out = NodeNameFromHostname(m.hostname) + ": " + std::to_string(m.cpus) + " cpu, " +
                    memory + " memory, ";
  if (m.gpus.empty()) return out + "no GPU";
  // Models in index order with their counts; NUMA nodes the GPUs sit on.
  std::vector<std::pair<std::string, int>> models;
  std::set<int> numa;
  for (const auto& g : m.gpus) {
    const std::string model = g.name.empty() ? "unknown model" : g.name;
    if (models.empty() || models.back().first != model) {
      models.emplace_back(model, 0);
    }
    ++models.back().second;
    if (g.numa_node >= 0) numa.insert(g.numa_node);
  }
  std::vector<std::string> parts;
  parts.reserve(models.size());
  for (const auto& [model, n] : models) {
    parts.push_back(models.size() == 1 && n == 1 ? model : std::to_string(n) + "x " + model);
  }
  std::vector<std::string> numa_ids;
  numa_ids.reserve(numa.size());
  for (int n : numa) numa_ids.push_back(std::to_string(n));
  out += std::to_string(m.gpus.size()) + (m.gpus.size() == 1 ? " GPU (" : " GPUs (") +
         JoinStrings(parts, ", ") + ", NUMA " +
         (numa.empty() ? "unknown" : JoinStrings(numa_ids, ",")) + ")";
  return out;
}

}  // namespace muster::server
