// The charts of `muster simulate --report`: drawn in the browser by the dashboard's
// own chart module (src/ui/assets/chart.js, embedded in the page as it is) from the
// data as JSON, so the report and the dashboard share one chart implementation.
// Deterministic: the same result gives the same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/result.h"

namespace muster::sim {

struct ChartSeries {
  std::string name;   // legend text
  std::string color;  // CSS colour, e.g. "#1f77b4"
  std::vector<SeriesPoint> points;
  bool step = true;  // hold each value until the next point (a step series)
  bool dashed = false;
};

struct ChartSpec {
  std::string id;  // the container's element id
  std::string title;
  std::string x_label;
  std::string y_label;
  std::string x_axis = "duration";  // tick labels: "duration" (s/m/h/d) or "number"
  double y_min = 0;
  std::optional<double> y_max;  // nullopt: from the data
  std::optional<double> x_max;  // nullopt: from the data
  bool y_percent = false;       // y is a fraction shown as a percentage
  std::vector<ChartSeries> series;
};

// Keeps at most `max_points` points, preserving each bucket's minimum and maximum so
// spikes survive. Deterministic.
std::vector<SeriesPoint> Downsample(const std::vector<SeriesPoint>& points, size_t max_points);

// Escapes &, <, >, " and ' for HTML text and attributes.
std::string HtmlEscape(const std::string& text);

// The i-th colour of a fixed palette (wraps around).
std::string PaletteColor(size_t i);

// The charts' data as the JSON the page's script reads ("</" escaped for <script>).
std::string ChartsJson(const std::vector<ChartSpec>& charts);
// An empty element the chart `id` is drawn into.
std::string ChartContainer(const std::string& id);
// The chart module's stylesheet, for the page's <head>.
std::string ChartStyle();
// The chart module, the data, and the call that draws every chart: the end of <body>.
std::string ChartScripts(const std::vector<ChartSpec>& charts);

}  // namespace muster::sim
