#include "sim/report_charts.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ui/assets.h"

namespace muster::sim {

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string PaletteColor(size_t i) {
  static const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
}

std::vector<SeriesPoint> Downsample(const std::vector<SeriesPoint>& points, size_t max_points) {
  if (max_points < 4 || points.size() <= max_points) return points;
  size_t buckets = max_points / 2 - 1;  // two points each, plus the first and last
  size_t inner = points.size() - 2;
  size_t per = (inner + buckets - 1) / buckets;
  std::vector<SeriesPoint> out;
  out.reserve(max_points);
  out.push_back(points.front());
  for (size_t start = 1; start <= inner; start += per) {
    size_t end = std::min(start + per, inner + 1);
    size_t lo = start;
    size_t hi = start;
    for (size_t i = start; i < end; ++i) {
      if (points[i].value < points[lo].value) lo = i;
      if (points[i].value > points[hi].value) hi = i;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  }
  out.push_back(points.back());
  return out;
}

namespace {

std::string_view Asset(std::string_view name) {
  const ui::EmbeddedAsset* a = ui::FindAsset(name);
  return a == nullptr ? std::string_view() : a->data;
}

// Inside <script>, "</" would end the element early: "<\/" reads the same in JSON.
std::string ScriptSafe(std::string text) {
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) {
    text.insert(at + 1, "\\");
  }
  return text;
}

}  // namespace

std::string ChartsJson(const std::vector<ChartSpec>& charts) {
  using nlohmann::json;
  json out = json::array();
  for (const auto& c : charts) {
    json series = json::array();
    for (const auto& s : c.series) {
      json points = json::array();
      for (const auto& p : s.points) points.push_back({p.time, p.value});
      series.push_back({{"name", s.name},
                        {"color", s.color},
                        {"points", std::move(points)},
                        {"step", s.step},
                        {"dashed", s.dashed}});
    }
    json spec = {{"title", c.title},       {"xLabel", c.x_label}, {"yLabel", c.y_label},
                 {"x", c.x_axis},          {"yMin", c.y_min},     {"series", std::move(series)},
                 {"yPercent", c.y_percent}};
    if (c.y_max) spec["yMax"] = *c.y_max;
    if (c.x_max) spec["xMax"] = *c.x_max;
    out.push_back({{"id", c.id}, {"spec", std::move(spec)}});
  }
  return ScriptSafe(out.dump());
}

std::string ChartContainer(const std::string& id) {
  return "<div class=\"chart\" id=\"" + HtmlEscape(id) + "\"></div>\n";
}

std::string ChartStyle() { return "<style>\n" + std::string(Asset("chart.css")) + "</style>\n"; }

std::string ChartScripts(const std::vector<ChartSpec>& charts) {
  std::string page =
      "<noscript><p class=\"note\">The charts are drawn by JavaScript.</p></noscript>\n";
  page += "<script>\n" + ScriptSafe(std::string(Asset("chart.js"))) + "</script>\n";
  page +=
      "<script type=\"application/json\" id=\"chart-data\">" + ChartsJson(charts) + "</script>\n";
  page +=
      "<script>\nfor (const c of JSON.parse(document.getElementById('chart-data').textContent))"
      " {\n  MusterChart.line(document.getElementById(c.id), c.spec);\n}\n</script>\n";
  return page;
}

}  // namespace muster::sim
