#include "sim/report_html.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/report_charts.h"

namespace muster::sim {
namespace {

std::string Num(double v) {
  std::string text = fmt::format("{:.3f}", v);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

std::string Pct(double v) { return fmt::format("{:.1f}%", v * 100); }

std::string StatsCells(const Stats& s) {
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td>", Num(s.mean), Num(s.p50),
                     Num(s.p90), Num(s.p99));
}

std::string Row(const std::string& name, const std::string& value) {
  return "<tr><th>" + HtmlEscape(name) + "</th><td>" + HtmlEscape(value) + "</td></tr>\n";
}

std::string SummaryTable(const SimulationResult& r) {
  const Summary& s = r.summary;
  std::string t = "<table class=\"kv\">\n";
  t += Row("end time", Num(r.end_time) + " s");
  t += Row("workloads", fmt::format("{} ({} succeeded, {} running, {} pending, {} failed)",
                                    s.workloads, s.succeeded, s.running, s.pending, s.failed));
  t += Row("GPU utilization", Pct(s.gpu_utilization));
  t += Row("cpu utilization", Pct(s.cpu_utilization));
  t += Row("makespan", Num(s.makespan) + " s");
  auto stats = [](const Stats& x) {
    return fmt::format("mean {} s, p50 {} s, p90 {} s, p99 {} s", Num(x.mean), Num(x.p50),
                       Num(x.p90), Num(x.p99));
  };
  t += Row("JCT", stats(s.jct));
  t += Row("queueing delay", stats(s.queueing_delay));
  t += Row("gang wait (gangs of 2+ pods)", stats(s.gang_wait));
  t += Row("preemptions", std::to_string(s.preemptions));
  t += Row("GPU-hours lost", Num(s.gpu_hours_lost));
  t += Row("multi-pod gang starts", std::to_string(s.multi_pod_gangs));
  t += Row("gangs within one rack",
           s.gangs_within_one_rack ? Pct(*s.gangs_within_one_rack) : "n/a (no rack labels)");
  t += Row("GPU pods within one NUMA zone",
           s.pods_within_one_numa ? Pct(*s.pods_within_one_numa) : "n/a (no NUMA placement)");
  t += Row("fragmented GPUs at end", std::to_string(s.fragmented_gpus));
  return t + "</table>\n";
}

std::string QueueTable(const SimulationResult& r) {
  std::string t =
      "<table class=\"grid\">\n<tr><th rowspan=\"2\">queue</th><th rowspan=\"2\">workloads</th>"
      "<th rowspan=\"2\">GPU quota</th><th colspan=\"4\">JCT (s)</th>"
      "<th colspan=\"4\">queueing delay (s)</th></tr>\n<tr>"
      "<th>mean</th><th>p50</th><th>p90</th><th>p99</th>"
      "<th>mean</th><th>p50</th><th>p90</th><th>p99</th></tr>\n";
  for (const auto& q : r.queues) {
    t += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td>{}{}</tr>\n", HtmlEscape(q.name),
                     q.workloads, q.gpu_quota ? Num(*q.gpu_quota) : "-", StatsCells(q.jct),
                     StatsCells(q.queueing_delay));
  }
  return t + "</table>\n";
}

// From each workload's reported admitTime: the latest admission when it was requeued,
// so this can sit right of the summary's first-admission delays.
std::vector<SeriesPoint> DelayCdf(const SimulationResult& r) {
  std::vector<double> delays;
  for (const auto& w : r.workloads) {
    if (!w.submit_time || !w.admit_time) continue;
    delays.push_back(std::max(0.0, *w.admit_time - *w.submit_time));
  }
  std::sort(delays.begin(), delays.end());
  std::vector<SeriesPoint> cdf;
  auto n = static_cast<double>(delays.size());
  for (size_t i = 0; i < delays.size(); ++i) {
    // One point per distinct delay: the fraction at or below it.
    if (i + 1 < delays.size() && delays[i + 1] == delays[i]) continue;
    cdf.push_back({delays[i], static_cast<double>(i + 1) / n});
  }
  if (!cdf.empty() && cdf.front().time > 0) cdf.insert(cdf.begin(), SeriesPoint{0, 0});
  return cdf;
}

}  // namespace

std::string RenderReportHtml(const SimulationResult& r) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>muster simulation report</title>\n<style>\n"
      "body{font-family:sans-serif;margin:24px;color:#222;max-width:1000px}\n"
      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
      "table.kv th,table.grid td:first-child{text-align:left}\n"
      "th{background:#f3f3f3}svg.chart{display:block;margin:8px 0}\n"
      ".note{color:#666;font-size:12px}.chart{margin:8px 0}\n</style>\n" +
      ChartStyle() +
      "</head>\n<body>\n"
      "<h1>muster simulation report</h1>\n<h2>Summary</h2>\n";
  page += SummaryTable(r);

  std::vector<ChartSpec> charts;
  ChartSpec util;
  util.id = "chart-utilization";
  util.title = "Cluster utilization (allocated / total)";
  util.x_label = "virtual time";
  util.y_label = "fraction allocated";
  util.y_max = 1;
  util.y_percent = true;
  util.x_max = r.end_time;
  util.series.push_back({"GPU", PaletteColor(0), Downsample(r.gpu_utilization, kMaxPointsPerLine)});
  util.series.push_back({"cpu", PaletteColor(1), Downsample(r.cpu_utilization, kMaxPointsPerLine)});
  page += "<h2>Utilization over time</h2>\n" + ChartContainer(util.id);
  charts.push_back(std::move(util));

  ChartSpec queues;
  queues.id = "chart-queues";
  queues.title = "GPUs in use per queue (dashed: nominal quota)";
  queues.x_label = "virtual time";
  queues.y_label = "GPUs";
  queues.x_max = r.end_time;
  for (size_t i = 0; i < r.queues.size(); ++i) {
    const QueueResult& q = r.queues[i];
    std::string color = PaletteColor(i);
    queues.series.push_back({q.name, color, Downsample(q.gpu_usage, kMaxPointsPerLine)});
    if (q.gpu_quota) {
      queues.series.push_back(
          {q.name + " quota", color, {{0, *q.gpu_quota}, {r.end_time, *q.gpu_quota}}, false, true});
    }
  }
  page += "<h2>Per-queue usage against quota</h2>\n";
  if (r.queues.empty()) {
    page += "<p class=\"note\">No queues.</p>\n";
  } else {
    page += ChartContainer(queues.id);
    charts.push_back(std::move(queues));
  }

  ChartSpec cdf;
  cdf.id = "chart-delay-cdf";
  cdf.title = "Queueing delay CDF (submit to admission)";
  cdf.x_label = "queueing delay";
  cdf.y_label = "fraction of workloads";
  cdf.y_max = 1;
  cdf.y_percent = true;
  cdf.series.push_back({"all queues", PaletteColor(0), Downsample(DelayCdf(r), kMaxPointsPerLine)});
  page += "<h2>Queueing delay CDF</h2>\n" + ChartContainer(cdf.id);
  charts.push_back(std::move(cdf));

  page += "<h2>Per-queue JCT and queueing delay</h2>\n" + QueueTable(r);
  page += ChartScripts(charts);
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace muster::sim
