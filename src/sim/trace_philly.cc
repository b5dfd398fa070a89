#include "sim/trace_philly.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <utility>

#include "core/resource_name.h"

namespace muster::sim {

namespace {

constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "2017-10-09 07:01:55" (or with 'T') -> seconds since the epoch, UTC.
std::optional<int64_t> ParseTimestamp(std::string_view s) {
  auto digits = [&](size_t pos, size_t n) -> int64_t {
    if (pos + n > s.size()) return -1;
    int64_t v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const bool shape = s.size() == 19 && s[4] == '-' && s[7] == '-' &&
                     (s[10] == ' ' || s[10] == 'T') && s[13] == ':' && s[16] == ':';
  const int64_t y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2);
  const int64_t h = digits(11, 2), mi = digits(14, 2), se = digits(17, 2);
  if (!shape || y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
      mi > 59 || se < 0 || se > 60) {
    return std::nullopt;
  }
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
}

// Parses the whole of `s` as a number without building an error message: the
// per-row fast path (messages are built only for rows that fail).
template <typename T>
bool FastParse(std::string_view s, T& v) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

class PhillyReader : public TraceReader {
 public:
  PhillyReader(TraceCluster cluster, PhillyJobs jobs, PhillyOptions options)
      : cluster_(std::move(cluster)), jobs_(std::move(jobs)), options_(std::move(options)) {}
  const TraceCluster& cluster() const override { return cluster_; }
  std::optional<model::Workload> Next() override {
    if (next_ >= jobs_.jobs.size()) return std::nullopt;
    const PhillyJobRecord& job = jobs_.jobs[next_];
    model::Workload w = PhillyJobToWorkload(job, jobs_.vc_names[job.vc], options_);
    w.meta.order = static_cast<int64_t>(next_);
    ++next_;
    return w;
  }
  int64_t size() const override { return static_cast<int64_t>(jobs_.jobs.size()); }

 private:
  TraceCluster cluster_;
  PhillyJobs jobs_;
  PhillyOptions options_;
  size_t next_ = 0;
};

}  // namespace

Result<std::vector<PhillyVc>> ParsePhillyVcs(std::istream& in, const std::string& file) {
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(file + ": empty VC list");
  Result<csv::Header> header = csv::Header::Parse(line, {"vc", "node num"}, file);
  if (!header.ok()) return header.status();
  const int vc_col = header->Index("vc");
  const int nodes_col = header->Index("node num");
  std::vector<PhillyVc> vcs;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    std::vector<std::string_view> row = csv::SplitLine(line);
    const std::string where = file + ":" + std::to_string(line_no);
    if (row.size() <= static_cast<size_t>(std::max(vc_col, nodes_col)) || row[vc_col].empty()) {
      return InvalidArgument(where + ": want \"vc,node num\"");
    }
    Result<int64_t> n = csv::ParseInt(row[nodes_col], where + ": column node num");
    if (!n.ok()) return n.status();
    if (*n < 0 || *n > 1'000'000) return InvalidArgument(where + ": node num out of range");
    for (const PhillyVc& v : vcs) {
      if (v.name == row[vc_col]) return InvalidArgument(where + ": VC " + v.name + " listed twice");
    }
    vcs.push_back({std::string(row[vc_col]), static_cast<int32_t>(*n)});
  }
  return vcs;
}

Result<PhillyJobs> ParsePhillyJobs(std::istream& in, const std::string& file) {
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(file + ": empty job list");
  Result<csv::Header> header =
      csv::Header::Parse(line, {"timestamp", "duration", "num_gpus", "cluster"}, file);
  if (!header.ok()) return header.status();
  const int ts_col = header->Index("timestamp");
  const int dur_col = header->Index("duration");
  const int gpu_col = header->Index("num_gpus");
  const int vc_col = header->Index("cluster");
  const size_t need = static_cast<size_t>(std::max({ts_col, dur_col, gpu_col, vc_col})) + 1;

  PhillyJobs out;
  std::map<std::string, int32_t, std::less<>> vc_index;
  // Absolute submit seconds first; rebased on the earliest once all rows are read.
  std::vector<int64_t> absolute;
  int64_t line_no = 1;
  int64_t data_row = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    ++data_row;
    std::vector<std::string_view> row = csv::SplitLine(line);
    auto where = [&] { return file + ":" + std::to_string(line_no); };
    if (row.size() < need) return InvalidArgument(where() + ": too few columns");
    std::optional<int64_t> ts = ParseTimestamp(row[ts_col]);
    if (!ts) {
      return InvalidArgument(where() + ": column timestamp: \"" + std::string(row[ts_col]) +
                             "\" is not a timestamp (want YYYY-MM-DD HH:MM:SS)");
    }
    double dur = 0;
    if (!FastParse(row[dur_col], dur) || !std::isfinite(dur)) {
      Result<double> d = csv::ParseDouble(row[dur_col], where() + ": column duration");
      if (!d.ok()) return d.status();
      dur = *d;
    }
    int64_t gpus = 0;
    if (!FastParse(row[gpu_col], gpus)) {
      Result<int64_t> g = csv::ParseInt(row[gpu_col], where() + ": column num_gpus");
      if (!g.ok()) return g.status();
      gpus = *g;
    }
    if (dur < 0) return InvalidArgument(where() + ": negative duration");
    if (gpus < 0 || gpus > 100'000) return InvalidArgument(where() + ": num_gpus out of range");
    std::string_view vc = row[vc_col];
    if (vc.empty()) vc = "unassigned";
    auto it = vc_index.find(vc);
    if (it == vc_index.end()) {
      it = vc_index.emplace(std::string(vc), static_cast<int32_t>(out.vc_names.size())).first;
      out.vc_names.emplace_back(vc);
    }
    PhillyJobRecord job;
    job.duration = dur;
    job.row = data_row;
    job.gpus = static_cast<int32_t>(gpus);
    job.vc = it->second;
    out.jobs.push_back(job);
    absolute.push_back(*ts);
  }
  if (!absolute.empty()) {
    const int64_t first = *std::min_element(absolute.begin(), absolute.end());
    for (size_t i = 0; i < out.jobs.size(); ++i) {
      out.jobs[i].submit = static_cast<double>(absolute[i] - first);
    }
  }
  // The file is not in time order (about half the rows are out of order).
  std::stable_sort(
      out.jobs.begin(), out.jobs.end(),
      [](const PhillyJobRecord& a, const PhillyJobRecord& b) { return a.submit < b.submit; });
  return out;
}

TraceCluster BuildPhillyCluster(const std::vector<PhillyVc>& vcs,
                                const std::vector<std::string>& extra_vcs,
                                const PhillyOptions& options) {
  TraceCluster cluster;
  model::ManifestSet& q = cluster.queues;
  model::ResourceFlavor flavor;
  flavor.meta.api_version = "kueue.x-k8s.io/v1beta1";
  flavor.meta.kind = "ResourceFlavor";
  flavor.meta.name = options.flavor;
  q.resource_flavors.push_back(flavor);

  int64_t total_gpus = 0;
  auto add_queue = [&](const std::string& vc, int64_t quota) {
    model::ClusterQueue cq;
    cq.meta.api_version = "kueue.x-k8s.io/v1beta1";
    cq.meta.kind = "ClusterQueue";
    cq.meta.name = "vc-" + vc;
    cq.meta.order = static_cast<int64_t>(q.cluster_queues.size());
    cq.cohort = options.cohort;
    cq.namespace_selector = model::LabelSelector{};  // {} = every namespace
    model::ResourceGroup group;
    group.covered_resources = {std::string(kGpuResourceName)};
    model::FlavorQuotas fq;
    fq.name = options.flavor;
    // No borrowing limit: an idle VC's quota is anyone's (Philly's design intent).
    fq.resources.push_back({std::string(kGpuResourceName), Quantity::FromInt(quota), {}, {}});
    group.flavors.push_back(std::move(fq));
    cq.resource_groups.push_back(std::move(group));
    q.cluster_queues.push_back(std::move(cq));

    model::LocalQueue lq;
    lq.meta.api_version = "kueue.x-k8s.io/v1beta1";
    lq.meta.kind = "LocalQueue";
    lq.meta.name = vc;
    lq.meta.namespace_ = options.namespace_;
    lq.meta.order = static_cast<int64_t>(q.local_queues.size());
    lq.cluster_queue = "vc-" + vc;
    q.local_queues.push_back(std::move(lq));
  };
  for (const PhillyVc& vc : vcs) {
    const int64_t quota = static_cast<int64_t>(vc.nodes) * options.gpus_per_node;
    total_gpus += quota;
    add_queue(vc.name, quota);
  }
  for (const std::string& vc : extra_vcs) add_queue(vc, 0);

  const int64_t per_node = std::max<int32_t>(1, options.gpus_per_node);
  const int64_t node_count = std::max<int64_t>(1, (total_gpus + per_node - 1) / per_node);
  for (int64_t i = 0; i < node_count; ++i) {
    model::Node node;
    node.meta.api_version = "v1";
    node.meta.kind = "Node";
    char name[32];
    std::snprintf(name, sizeof(name), "philly-node-%04lld", static_cast<long long>(i));
    node.meta.name = name;
    node.meta.order = i;
    node.allocatable.Set(kNvidiaGpu, per_node);
    // The trace has no CPU or memory; jobs request GPUs only, so nodes need no more
    // than a plausible 8-GPU server's figures for display.
    node.allocatable.Set(kCpu, 64'000);
    node.allocatable.Set(kMemory, int64_t{512} << 30);
    cluster.nodes.push_back(std::move(node));
  }
  return cluster;
}

model::Workload PhillyJobToWorkload(const PhillyJobRecord& job, const std::string& vc_name,
                                    const PhillyOptions& options) {
  model::Workload w;
  char name[32];
  std::snprintf(name, sizeof(name), "job-%06lld", static_cast<long long>(job.row));
  w.meta.api_version = "batch/v1";
  w.meta.kind = "Job";
  w.meta.name = name;
  w.meta.namespace_ = options.namespace_;
  w.meta.labels[kQueueNameLabel] = vc_name;
  w.key = w.meta.Key();
  w.local_queue = vc_name;
  w.sim.submit_at = job.submit;
  w.sim.duration = job.duration;

  const int32_t max = std::max<int32_t>(1, options.max_gpus_per_pod);
  auto add_set = [&](const char* set_name, int32_t count, int32_t gpus) {
    model::PodSet ps;
    ps.name = set_name;
    ps.count = count;
    ps.min_count = count;
    ps.restart_policy = "Never";
    if (gpus > 0) ps.requests.Set(kNvidiaGpu, gpus);
    model::Container c;
    c.name = "main";
    if (gpus > 0) c.requests[std::string(kGpuResourceName)] = Quantity::FromInt(gpus);
    c.limits = c.requests;
    ps.tmpl.spec.containers.push_back(std::move(c));
    ps.tmpl.spec.restart_policy = "Never";
    ps.tmpl.labels[kQueueNameLabel] = vc_name;
    w.pod_sets.push_back(std::move(ps));
  };
  if (job.gpus <= max) {
    add_set("main", 1, job.gpus);
  } else {
    add_set("main", job.gpus / max, max);
    if (job.gpus % max != 0) add_set("tail", 1, job.gpus % max);
  }
  w.min_available = w.TotalCount();
  return w;
}

Result<std::unique_ptr<TraceReader>> OpenPhillyTrace(const std::string& path,
                                                     const PhillyOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path jobs_file = path;
  if (fs::is_directory(jobs_file, ec)) jobs_file /= "philly_jobs.csv";
  std::ifstream jin(jobs_file);
  if (!jin) return NotFound("philly trace: cannot open " + jobs_file.string());
  fs::path vc_file = options.vc_file.empty() ? jobs_file.parent_path() / "philly_vc.csv"
                                             : fs::path(options.vc_file);
  std::ifstream vin(vc_file);
  if (!vin) return NotFound("philly trace: cannot open VC list " + vc_file.string());
  Result<std::vector<PhillyVc>> vcs = ParsePhillyVcs(vin, vc_file.string());
  if (!vcs.ok()) return vcs.status();
  Result<PhillyJobs> jobs = ParsePhillyJobs(jin, jobs_file.string());
  if (!jobs.ok()) return jobs.status();

  std::vector<std::string> extra;
  for (const std::string& name : jobs->vc_names) {
    bool known =
        std::any_of(vcs->begin(), vcs->end(), [&](const PhillyVc& v) { return v.name == name; });
    if (!known) extra.push_back(name);
  }
  std::sort(extra.begin(), extra.end());
  TraceCluster cluster = BuildPhillyCluster(*vcs, extra, options);
  return std::unique_ptr<TraceReader>(
      std::make_unique<PhillyReader>(std::move(cluster), std::move(*jobs), options));
}

Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos || colon + 1 == spec.size()) {
    return InvalidArgument("--trace " + spec + ": want FORMAT:PATH (openb:DIR|CSV, philly:FILE)");
  }
  const std::string format = spec.substr(0, colon);
  const std::string path = spec.substr(colon + 1);
  if (format == "openb") return OpenOpenbTrace(path);
  if (format == "philly") return OpenPhillyTrace(path);
  return InvalidArgument("--trace " + spec + ": unknown format \"" + format +
                         "\" (known: openb, philly)");
}

}  // namespace muster::sim
