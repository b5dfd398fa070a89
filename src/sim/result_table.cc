#include "sim/result_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace muster::sim {
namespace {

// Fixed notation with at most three decimals: "12903000", "1.5", never "1.29e+07".
std::string Num(double v) {
  std::string text = fmt::format("{:.3f}", v);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

std::string TimeText(const std::optional<double>& t) { return t ? Num(*t) : std::string("-"); }

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
  out += fmt::format("end time:        {}s\n", Num(result.end_time));
  out += fmt::format("workloads:       {} ({} succeeded, {} running, {} pending, {} failed)\n",
                     s.workloads, s.succeeded, s.running, s.pending, s.failed);
  out += fmt::format("gpu utilization: {:.1f}%\n", s.gpu_utilization * 100);
  out += fmt::format("makespan:        {}s\n", Num(s.makespan));
  out += fmt::format("jct:             mean {}s  p50 {}s  p99 {}s\n", Num(s.jct.mean),
                     Num(s.jct.p50), Num(s.jct.p99));
  out += fmt::format("queueing delay:  mean {}s  p50 {}s  p99 {}s\n", Num(s.queueing_delay.mean),
                     Num(s.queueing_delay.p50), Num(s.queueing_delay.p99));
  out += fmt::format("preemptions:     {}\n", s.preemptions);
  out += fmt::format("gpu-hours lost:  {}\n", Num(s.gpu_hours_lost));
  out += fmt::format("cpu utilization: {:.1f}%\n", s.cpu_utilization * 100);
  out += fmt::format("p90:             jct {}s  queueing delay {}s\n", Num(s.jct.p90),
                     Num(s.queueing_delay.p90));
  out += fmt::format(
      "gang wait:       mean {}s  p50 {}s  p90 {}s  p99 {}s "
      "({} multi-pod starts)\n",
      Num(s.gang_wait.mean), Num(s.gang_wait.p50), Num(s.gang_wait.p90), Num(s.gang_wait.p99),
      s.multi_pod_gangs);
  if (s.gangs_within_one_rack) {
    out += fmt::format("gangs one rack:  {:.1f}%\n", *s.gangs_within_one_rack * 100);
  }
  if (s.pods_within_one_numa) {
    out += fmt::format("pods one numa:   {:.1f}%\n", *s.pods_within_one_numa * 100);
  }
  out += fmt::format("fragmented gpus: {}\n", s.fragmented_gpus);
  for (const auto& q : result.queues) {
    out += fmt::format(
        "queue {}: {} workloads, quota {} gpus, jct mean {}s p90 {}s, "
        "delay mean {}s p90 {}s\n",
        q.name, q.workloads, q.gpu_quota ? Num(*q.gpu_quota) : std::string("-"), Num(q.jct.mean),
        Num(q.jct.p90), Num(q.queueing_delay.mean), Num(q.queueing_delay.p90));
  }
  return out;
}

}  // namespace muster::sim
