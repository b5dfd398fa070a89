#include "sim/result_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace muster::sim {
namespace {

std::string TimeText(const std::optional<double>& t) {
  return t ? fmt::format("{:g}", *t) : std::string("-");
}

std::string NodesText(const WorkloadResult& w) {
  std::set<std::string> nodes;
  for (const auto& p : w.pods) nodes.insert(p.node);
  if (nodes.empty()) return "-";
  std::string out;
  for (const auto& n : nodes) {
    if (!out.empty()) out += ",";
    out += n;
  }
  return out;
}

}  // namespace

std::string ToTable(const SimulationResult& result) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {"NAME", "KIND", "QUEUE", "PHASE", "SUBMIT", "ADMIT", "START", "FINISH", "NODES", "REASON"});
  for (const auto& w : result.workloads) {
    std::string queue = w.queue.value_or("-");
    if (w.cluster_queue && w.cluster_queue != w.queue) queue += "/" + *w.cluster_queue;
    rows.push_back({w.name, w.kind, queue, w.phase, TimeText(w.submit_time), TimeText(w.admit_time),
                    TimeText(w.start_time), TimeText(w.finish_time), NodesText(w),
                    w.pending_reason.value_or("")});
  }
  // The last column is not padded: reasons are long and free-form.
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  const Summary& s = result.summary;
  out += "\n";
  out += fmt::format("end time:        {:g}s\n", result.end_time);
  out += fmt::format("workloads:       {} ({} succeeded, {} running, {} pending, {} failed)\n",
                     s.workloads, s.succeeded, s.running, s.pending, s.failed);
  out += fmt::format("gpu utilization: {:.1f}%\n", s.gpu_utilization * 100);
  out += fmt::format("makespan:        {:g}s\n", s.makespan);
  out += fmt::format("jct:             mean {:g}s  p50 {:g}s  p99 {:g}s\n", s.jct.mean, s.jct.p50,
                     s.jct.p99);
  out += fmt::format("queueing delay:  mean {:g}s  p50 {:g}s  p99 {:g}s\n", s.queueing_delay.mean,
                     s.queueing_delay.p50, s.queueing_delay.p99);
  out += fmt::format("preemptions:     {}\n", s.preemptions);
  out += fmt::format("gpu-hours lost:  {:g}\n", s.gpu_hours_lost);
  return out;
}

}  // namespace muster::sim
