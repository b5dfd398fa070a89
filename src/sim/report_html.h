// `muster simulate --report DIR`: one self-contained HTML page (inline CSS, the
// dashboard's chart module and the data inline, no external URLs) a person can open in
// a browser.
#pragma once

#include <string>

#include "sim/result.h"

namespace muster::sim {

// Lines longer than this are downsampled so a trace's report stays small.
inline constexpr size_t kMaxPointsPerLine = 2000;

// The page: summary table, utilization over time, per-queue usage against quota,
// queueing-delay CDF, per-queue JCT and delay table. Same result, same bytes.
std::string RenderReportHtml(const SimulationResult& result);

}  // namespace muster::sim
