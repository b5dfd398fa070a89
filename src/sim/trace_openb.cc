#include "sim/trace_openb.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <utility>

#include "core/resource_name.h"

namespace muster::sim {

namespace csv {

std::vector<std::string_view> SplitLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

Result<Header> Header::Parse(std::string_view line, const std::vector<std::string>& required,
                             const std::string& file) {
  Header h;
  for (std::string_view name : SplitLine(line)) h.names_.emplace_back(name);
  for (const std::string& name : required) {
    if (h.Index(name) < 0) {
      return InvalidArgument(file + ":1: missing column \"" + name + "\" in header \"" +
                             std::string(line) + "\"");
    }
  }
  return h;
}

int Header::Index(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Result<int64_t> ParseInt(std::string_view text, const std::string& where) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    // Some exports write integers as "8.0"; accept an integral decimal.
    Result<double> d = ParseDouble(text, where);
    if (d.ok() && std::floor(*d) == *d && std::fabs(*d) < 9e18) return static_cast<int64_t>(*d);
    return InvalidArgument(where + ": \"" + std::string(text) + "\" is not an integer");
  }
  return v;
}

Result<double> ParseDouble(std::string_view text, const std::string& where) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(v)) {
    return InvalidArgument(where + ": \"" + std::string(text) + "\" is not a number");
  }
  return v;
}

}  // namespace csv

namespace {

std::string Where(const std::string& file, int64_t line, std::string_view column) {
  return file + ":" + std::to_string(line) + ": column " + std::string(column);
}

// Reads a required column of `row` as an integer.
Result<int64_t> IntField(const std::vector<std::string_view>& row, const csv::Header& h,
                         std::string_view col, const std::string& file, int64_t line) {
  int i = h.Index(col);
  if (i < 0 || static_cast<size_t>(i) >= row.size()) {
    return InvalidArgument(Where(file, line, col) + ": missing value");
  }
  return csv::ParseInt(row[i], Where(file, line, col));
}

// Optional column: nullopt when the column is absent or the cell is empty.
Result<std::optional<double>> OptionalTime(const std::vector<std::string_view>& row,
                                           const csv::Header& h, std::string_view col,
                                           const std::string& file, int64_t line) {
  int i = h.Index(col);
  if (i < 0 || static_cast<size_t>(i) >= row.size() || row[i].empty()) {
    return std::optional<double>();
  }
  Result<double> v = csv::ParseDouble(row[i], Where(file, line, col));
  if (!v.ok()) return v.status();
  return std::optional<double>(*v);
}

std::string_view Cell(const std::vector<std::string_view>& row, int index) {
  if (index < 0 || static_cast<size_t>(index) >= row.size()) return {};
  return row[index];
}

// pandas writes missing strings as "nan" in some exports of this trace.
bool IsMissing(std::string_view s) { return s.empty() || s == "nan" || s == "NaN"; }

class OpenbReader : public TraceReader {
 public:
  OpenbReader(std::vector<model::Node> nodes, std::vector<OpenbPodRecord> pods)
      : pods_(std::move(pods)) {
    cluster_.nodes = std::move(nodes);
  }
  const TraceCluster& cluster() const override { return cluster_; }
  std::optional<model::Workload> Next() override {
    if (next_ >= pods_.size()) return std::nullopt;
    model::Workload w = OpenbPodToWorkload(pods_[next_]);
    w.meta.order = static_cast<int64_t>(next_);
    ++next_;
    return w;
  }
  int64_t size() const override { return static_cast<int64_t>(pods_.size()); }

 private:
  TraceCluster cluster_;
  std::vector<OpenbPodRecord> pods_;
  size_t next_ = 0;
};

}  // namespace

Result<std::vector<model::Node>> ParseOpenbNodes(std::istream& in, const std::string& file) {
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(file + ": empty node list");
  Result<csv::Header> header =
      csv::Header::Parse(line, {"sn", "cpu_milli", "memory_mib", "gpu"}, file);
  if (!header.ok()) return header.status();
  const csv::Header& h = *header;
  const int model_col = h.Index("model");
  std::vector<model::Node> nodes;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    std::vector<std::string_view> row = csv::SplitLine(line);
    model::Node node;
    node.meta.api_version = "v1";
    node.meta.kind = "Node";
    node.meta.name = std::string(Cell(row, h.Index("sn")));
    if (node.meta.name.empty()) {
      return InvalidArgument(Where(file, line_no, "sn") + ": empty node name");
    }
    node.meta.order = static_cast<int64_t>(nodes.size());
    node.meta.source = {file, static_cast<int>(line_no)};
    Result<int64_t> cpu = IntField(row, h, "cpu_milli", file, line_no);
    if (!cpu.ok()) return cpu.status();
    Result<int64_t> mem = IntField(row, h, "memory_mib", file, line_no);
    if (!mem.ok()) return mem.status();
    Result<int64_t> gpu = IntField(row, h, "gpu", file, line_no);
    if (!gpu.ok()) return gpu.status();
    if (*cpu < 0 || *mem < 0 || *gpu < 0) {
      return InvalidArgument(file + ":" + std::to_string(line_no) + ": negative capacity");
    }
    node.allocatable.Set(kCpu, *cpu);
    node.allocatable.Set(kMemory, *mem * 1024 * 1024);
    if (*gpu > 0) node.allocatable.Set(kNvidiaGpu, *gpu);
    std::string_view gpu_model = Cell(row, model_col);
    if (!IsMissing(gpu_model)) node.meta.labels[std::string(kGpuModelLabel)] = gpu_model;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Result<std::vector<OpenbPodRecord>> ParseOpenbPods(std::istream& in, const std::string& file) {
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(file + ": empty pod list");
  // The multigpu variants carry only the resource columns; times are optional.
  Result<csv::Header> header =
      csv::Header::Parse(line, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, file);
  if (!header.ok()) return header.status();
  const csv::Header& h = *header;
  const int spec_col = h.Index("gpu_spec");
  std::vector<OpenbPodRecord> pods;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    std::vector<std::string_view> row = csv::SplitLine(line);
    OpenbPodRecord p;
    p.name = std::string(Cell(row, h.Index("name")));
    if (p.name.empty()) return InvalidArgument(Where(file, line_no, "name") + ": empty pod name");
    Result<int64_t> cpu = IntField(row, h, "cpu_milli", file, line_no);
    if (!cpu.ok()) return cpu.status();
    Result<int64_t> mem = IntField(row, h, "memory_mib", file, line_no);
    if (!mem.ok()) return mem.status();
    Result<int64_t> ngpu = IntField(row, h, "num_gpu", file, line_no);
    if (!ngpu.ok()) return ngpu.status();
    Result<int64_t> milli = IntField(row, h, "gpu_milli", file, line_no);
    if (!milli.ok()) return milli.status();
    if (*cpu < 0 || *mem < 0 || *ngpu < 0 || *ngpu > 1024 || *milli < 0 || *milli > 1000) {
      return InvalidArgument(file + ":" + std::to_string(line_no) +
                             ": resource out of range (num_gpu 0..1024, gpu_milli 0..1000)");
    }
    p.cpu_milli = *cpu;
    p.memory_mib = *mem;
    p.num_gpu = static_cast<int32_t>(*ngpu);
    p.gpu_milli = static_cast<int32_t>(*milli);
    std::string_view spec = Cell(row, spec_col);
    if (!IsMissing(spec)) p.gpu_spec = std::string(spec);

    auto created = OptionalTime(row, h, "creation_time", file, line_no);
    if (!created.ok()) return created.status();
    auto deleted = OptionalTime(row, h, "deletion_time", file, line_no);
    if (!deleted.ok()) return deleted.status();
    auto scheduled = OptionalTime(row, h, "scheduled_time", file, line_no);
    if (!scheduled.ok()) return scheduled.status();
    p.creation_time = created->value_or(0);
    if (deleted->has_value()) {
      // Run time counts from scheduling; pods never scheduled (Pending/Failed rows
      // have no scheduled_time) keep their observed lifetime from creation.
      double start = scheduled->has_value() ? **scheduled : p.creation_time;
      p.duration = std::max(0.0, **deleted - start);
    }
    pods.push_back(std::move(p));
  }
  std::stable_sort(pods.begin(), pods.end(), [](const OpenbPodRecord& a, const OpenbPodRecord& b) {
    return a.creation_time < b.creation_time;
  });
  return pods;
}

model::Workload OpenbPodToWorkload(const OpenbPodRecord& pod) {
  model::Workload w;
  w.meta.api_version = "v1";
  w.meta.kind = "Pod";
  w.meta.name = pod.name;
  w.meta.namespace_ = "default";
  w.key = w.meta.Key();
  w.min_available = 1;
  w.sim.submit_at = pod.creation_time;
  w.sim.duration = pod.duration;

  model::PodSet ps;
  ps.name = "main";
  ps.count = 1;
  ps.min_count = 1;
  model::QuantityMap q;
  ps.requests.Set(kCpu, pod.cpu_milli);
  q["cpu"] = Quantity::FromMilli(pod.cpu_milli);
  ps.requests.Set(kMemory, pod.memory_mib * 1024 * 1024);
  q["memory"] = Quantity::FromInt(pod.memory_mib * 1024 * 1024, Quantity::Format::kBinarySI);
  if (pod.num_gpu > 0) {
    // A share of one device only when the pod asks for one GPU and less than all of
    // it; multi-GPU pods in the trace always ask whole devices (gpu_milli 1000), and
    // a multi-GPU partial request (not in the published files) is rounded up.
    const bool shared = pod.num_gpu == 1 && pod.gpu_milli > 0 && pod.gpu_milli < 1000;
    if (shared) {
      ResourceId id = ResourceNames::Intern(kGpuMilliResourceName);
      ps.requests.Set(id, pod.gpu_milli);
      q[std::string(kGpuMilliResourceName)] = Quantity::FromInt(pod.gpu_milli);
    } else {
      ps.requests.Set(kNvidiaGpu, pod.num_gpu);
      q[std::string(kGpuResourceName)] = Quantity::FromInt(pod.num_gpu);
    }
  }
  if (!pod.gpu_spec.empty()) {
    model::NodeSelectorRequirement req;
    req.key = std::string(kGpuModelLabel);
    req.op = model::SelectorOperator::kIn;
    std::string_view spec = pod.gpu_spec;
    size_t start = 0;
    while (start <= spec.size()) {
      size_t bar = spec.find('|', start);
      std::string_view m =
          spec.substr(start, bar == std::string_view::npos ? spec.npos : bar - start);
      if (!m.empty()) req.values.emplace_back(m);
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    std::sort(req.values.begin(), req.values.end());
    model::NodeSelectorTerm term;
    term.match_expressions.push_back(std::move(req));
    ps.node_affinity.required.push_back(std::move(term));
  }
  model::Container c;
  c.name = "main";
  c.requests = q;
  c.limits = std::move(q);
  ps.tmpl.spec.containers.push_back(std::move(c));
  ps.tmpl.spec.node_affinity = ps.node_affinity;
  ps.tmpl.spec.restart_policy = "Never";
  ps.restart_policy = "Never";
  w.pod_sets.push_back(std::move(ps));
  return w;
}

int64_t WorkloadGpuMilli(const model::Workload& workload) {
  const ResourceId milli_id = ResourceNames::Intern(kGpuMilliResourceName);
  int64_t total = 0;
  for (const model::PodSet& ps : workload.pod_sets) {
    int64_t per_pod = ps.requests.Get(kNvidiaGpu) * 1000 + ps.requests.Get(milli_id);
    total += per_pod * ps.count;
  }
  return total;
}

Result<std::unique_ptr<TraceReader>> OpenOpenbTrace(const std::string& path,
                                                    const OpenbOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = path;
  fs::path pod_file;
  if (fs::is_directory(dir, ec)) {
    pod_file = dir / options.default_pod_list;
  } else if (fs::is_regular_file(dir, ec)) {
    pod_file = dir;
    dir = dir.parent_path();
    if (dir.empty()) dir = ".";
  } else {
    return NotFound("openb trace: \"" + path + "\" is neither a directory nor a file");
  }
  fs::path node_file = dir / options.node_list;
  std::ifstream nin(node_file);
  if (!nin) return NotFound("openb trace: cannot open node list " + node_file.string());
  Result<std::vector<model::Node>> nodes = ParseOpenbNodes(nin, node_file.string());
  if (!nodes.ok()) return nodes.status();
  std::ifstream pin(pod_file);
  if (!pin) return NotFound("openb trace: cannot open pod list " + pod_file.string());
  Result<std::vector<OpenbPodRecord>> pods = ParseOpenbPods(pin, pod_file.string());
  if (!pods.ok()) return pods.status();
  return std::unique_ptr<TraceReader>(
      std::make_unique<OpenbReader>(std::move(*nodes), std::move(*pods)));
}

}  // namespace muster::sim
