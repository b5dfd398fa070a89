// A hand-written SVG line chart for `muster simulate --report`: axes, "nice" ticks,
// a legend, step or straight lines, dashed lines for limits. No dependencies and
// fixed number formatting, so the same data gives the same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/result.h"

namespace muster::sim {

struct ChartLine {
  std::string name;   // legend text
  std::string color;  // CSS colour, e.g. "#1f77b4"
  std::vector<SeriesPoint> points;
  bool step = true;  // hold each value until the next point (a step series)
  bool dashed = false;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ChartLine> lines;
  bool x_is_time = true;  // ticks in s / min / h / d, chosen from the span
  double y_min = 0;
  std::optional<double> y_max;  // nullopt: from the data
  int width = 960;
  int height = 320;
};

// Keeps at most `max_points` points, preserving each bucket's minimum and maximum so
// spikes survive. Deterministic.
std::vector<SeriesPoint> Downsample(const std::vector<SeriesPoint>& points, size_t max_points);

// The chart as one <svg> element.
std::string RenderSvg(const LineChart& chart);

// Escapes &, <, >, " and ' for HTML text and attributes.
std::string HtmlEscape(const std::string& text);

// The i-th colour of a fixed palette (wraps around).
std::string PaletteColor(size_t i);

}  // namespace muster::sim
