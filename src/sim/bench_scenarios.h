// Named in-process scenarios of `muster bench` (issue 6): big synthetic clusters
// driven through the engine, the planner, the admitter or the simulator, timed
// with the wall clock. Results carry the work done so tests can check it at small
// sizes; timings are for the report only and never asserted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace muster::sim {

struct BenchOptions {
  // Size multiplier: 1 = the sizes, 2 and 4 for growth ratios; tests use
  // fractions (0.01) to check the work done quickly.
  double scale = 1;
  std::string shared_dir = "../shared";  // holds traces/philly/ for sim-philly
  // When set, each scenario appends what it decided (bench_decisions.h).
  std::string* decisions = nullptr;
  // The engine scenarios admit without the admission shortcuts
  // (Admitter::DisableShortcuts): same decisions, slower; for checking them.
  bool no_shortcuts = false;
};

struct BenchResult {
  std::string scenario;
  double scale = 1;
  std::string path;  // what was driven: engine | planner | simulator
  std::string unit;  // what `work` counts: pods | admissions | events | workloads
  std::string size;  // "5000 nodes, 50000 pods"
  int64_t work = 0;
  double wall_seconds = 0;  // the measured part (setup excluded)
  double cpu_seconds = 0;   // user + system over the measured part
  double setup_seconds = 0;
  double throughput = 0;  // work / wall_seconds
  // Latency per cycle or per gang (`p99_of`), where relevant: nearest-rank p50 and
  // p99, and the slowest one.
  std::optional<double> p50_ms;
  std::optional<double> p99_ms;
  std::optional<double> max_ms;
  std::string p99_of;       // "cycle" | "gang" | "wave"
  int64_t peak_rss_kb = 0;  // VmHWM after the run (process-wide high-water mark)
  // Scenario-specific figures, in print order ("failed", "preemptions", Kueue's means...).
  std::vector<std::pair<std::string, double>> details;
  std::string note;  // one line, e.g. why a scale is not supported
};

// Scenario names in their default order.
std::vector<std::string> BenchScenarioNames();

// Runs one scenario. Fails for an unknown name or missing input (the Philly trace).
Result<BenchResult> RunBenchScenario(const std::string& name, const BenchOptions& options);

// VmHWM of this process in KiB (0 where /proc is unavailable).
int64_t PeakRssKb();

namespace bench_internal {
// One scenario each; in bench_scenarios.cc and bench_sim_scenarios.cc.
Result<BenchResult> Placement5k(const BenchOptions& options);
Result<BenchResult> Gang10k(const BenchOptions& options);
Result<BenchResult> Admission1kCq(const BenchOptions& options);
Result<BenchResult> KueueBaseline(const BenchOptions& options);
Result<BenchResult> SimPhilly(const BenchOptions& options);
// Wall and CPU seconds since construction.
class Stopwatch {
 public:
  Stopwatch();
  double WallSeconds() const;
  double CpuSeconds() const;

 private:
  double wall0_ = 0;
  double cpu0_ = 0;
};
// Nearest-rank percentile of `values` (sorted in place); 0 when empty.
double Percentile(std::vector<double>& values, double q);
// Sets r.p50_ms, r.p99_ms and r.max_ms from the latencies `ms` (sorts them).
void SetLatency(BenchResult& r, std::vector<double>& ms);
// max(1, round(n * scale)).
int64_t Scaled(int64_t n, double scale);
}  // namespace bench_internal

}  // namespace muster::sim
