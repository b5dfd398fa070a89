#include "sim/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace muster::sim {
namespace {

// Fixed notation, trailing zeros dropped: stable across platforms, unlike %g.
std::string Fixed(double v, int decimals) {
  std::string text = fmt::format("{:.{}f}", v, decimals);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

// A 1-2-5 step giving about `target` intervals over `span`.
double NiceStep(double span, int target) {
  if (span <= 0) return 1;
  double raw = span / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

struct TimeUnit {
  double seconds;
  const char* name;
};

TimeUnit UnitFor(double span) {
  if (span > 2 * 86400) return {86400, "d"};
  if (span > 2 * 3600) return {3600, "h"};
  if (span > 2 * 60) return {60, "min"};
  return {1, "s"};
}

}  // namespace

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
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
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

std::string RenderSvg(const LineChart& c) {
  // Bounds over every line.
  double x_min = 0;
  double x_max = 0;
  double y_max = c.y_max.value_or(0);
  bool any = false;
  for (const auto& line : c.lines) {
    for (const auto& p : line.points) {
      x_min = any ? std::min(x_min, p.time) : p.time;
      x_max = any ? std::max(x_max, p.time) : p.time;
      if (!c.y_max) y_max = std::max(y_max, p.value);
      any = true;
    }
  }
  if (!any || x_max <= x_min) x_max = x_min + 1;
  if (y_max <= c.y_min) y_max = c.y_min + 1;
  TimeUnit unit = c.x_is_time ? UnitFor(x_max - x_min) : TimeUnit{1, ""};
  double y_step = NiceStep(y_max - c.y_min, 5);
  if (!c.y_max) y_max = std::ceil(y_max / y_step - 1e-9) * y_step;

  const int per_row = std::max(1, (c.width - 80) / 190);
  const int legend_rows = static_cast<int>((c.lines.size() + per_row - 1) / per_row);
  const double left = 70;
  const double right = 20;
  const double top = 34 + 18.0 * legend_rows;
  const double bottom = 46;
  const int total_height = c.height + 18 * legend_rows;
  const double plot_w = c.width - left - right;
  const double plot_h = total_height - top - bottom;
  auto sx = [&](double x) { return left + (x - x_min) / (x_max - x_min) * plot_w; };
  auto sy = [&](double y) { return top + plot_h - (y - c.y_min) / (y_max - c.y_min) * plot_h; };
  auto px = [](double v) { return Fixed(v, 1); };

  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      c.width, total_height, c.width, total_height);
  s += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                   px(left), HtmlEscape(c.title));
  // Legend: one row of swatches per `per_row` lines, under the title.
  for (size_t i = 0; i < c.lines.size(); ++i) {
    const ChartLine& line = c.lines[i];
    double lx = left + 190.0 * static_cast<double>(i % per_row);
    double ly = 32 + 18.0 * static_cast<double>(i / per_row);
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        px(lx), px(ly - 4), px(lx + 22), px(ly - 4), line.color,
        line.dashed ? " stroke-dasharray=\"6 4\"" : "", px(lx + 28), px(ly), HtmlEscape(line.name));
  }
  // Grid and y ticks.
  for (int k = 0;; ++k) {
    double y = c.y_min + k * y_step;
    if (y > y_max + y_step * 1e-6) break;
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#ddd\"/>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        px(left), px(sy(y)), px(left + plot_w), px(sy(y)), px(left - 6), px(sy(y) + 4),
        Fixed(y, 3));
  }
  // x ticks in the chosen unit.
  double x_step = NiceStep((x_max - x_min) / unit.seconds, 8) * unit.seconds;
  for (double x = std::ceil(x_min / x_step - 1e-9) * x_step; x <= x_max + x_step * 1e-6;
       x += x_step) {
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        px(sx(x)), px(top + plot_h), px(sx(x)), px(top + plot_h + 5), px(sx(x)),
        px(top + plot_h + 18), Fixed(x / unit.seconds, 3));
  }
  // Axes and labels.
  s += fmt::format("<path d=\"M{} {}V{}H{}\" fill=\"none\" stroke=\"#333\"/>\n", px(left), px(top),
                   px(top + plot_h), px(left + plot_w));
  std::string x_label = c.x_label;
  if (c.x_is_time) x_label += std::string(" (") + unit.name + ")";
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   px(left + plot_w / 2), total_height - 8, HtmlEscape(x_label));
  s += fmt::format(
      "<text x=\"14\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>\n",
      px(top + plot_h / 2), px(top + plot_h / 2), HtmlEscape(c.y_label));
  // The lines themselves.
  for (const auto& line : c.lines) {
    if (line.points.empty()) continue;
    std::string d = "M" + px(sx(line.points[0].time)) + " " + px(sy(line.points[0].value));
    for (size_t i = 1; i < line.points.size(); ++i) {
      const SeriesPoint& p = line.points[i];
      if (line.step) {
        d += "H" + px(sx(p.time)) + "V" + px(sy(p.value));
      } else {
        d += "L" + px(sx(p.time)) + " " + px(sy(p.value));
      }
    }
    s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n", d,
                     line.color, line.dashed ? " stroke-dasharray=\"6 4\"" : "");
  }
  s += "</svg>\n";
  return s;
}

}  // namespace muster::sim
